// Reads an HTTP request body within three bounds: its decompressed size,
// checked while inflating (a gzip bomb is cut off after `limit` bytes of
// output, so it costs at most that much memory); the process's in-flight
// byte budget, which the body's bytes are charged to as they arrive (after
// its Content-Length was reserved up front); and a deadline, so a body that
// trickles or never ends is cut off. Bytes past the size limit are read and
// discarded (up to a bound) so the client receives the 413 instead of a
// reset connection. A refused body reports the bytes it had made us hold
// (read, or inflated), which its sender is charged for as for a stored one.
import type { IncomingMessage } from 'node:http';
import { createGunzip } from 'node:zlib';
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';
import type { Reservation } from './inflight-bytes.ts';

export type BodyFailureKind = 'too_large' | 'invalid' | 'unsupported_media_type' | 'overloaded' | 'request_timeout';

/** Why a body was refused; `bytes`: what was read (after inflating) before it was. */
export interface BodyFailure {
  readonly kind: BodyFailureKind;
  readonly message: string;
  readonly bytes: number;
}

export interface BodyLimits {
  /** Bytes of the body after decompression. */
  readonly limit: number;
  /** Time the whole body may take to arrive, from the call. */
  readonly deadlineMs: number;
  /** This request's share of the in-flight byte budget; grown as bytes arrive. */
  readonly reservation: Reservation;
}

/** Raw bytes we are willing to read and discard after refusing a body, as a multiple of the limit. */
const discardFactor = 4;

/** The body's encoding from Content-Encoding, or undefined when unsupported. */
export function bodyEncoding(header: string | undefined): 'identity' | 'gzip' | undefined {
  const value = (header ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return 'identity';
  if (value === 'gzip' || value === 'x-gzip') return 'gzip';
  return undefined;
}

/** The Content-Length a request declares, or undefined (chunked, absent or malformed). */
export function declaredLength(req: IncomingMessage): number | undefined {
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  return Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined;
}

/**
 * Reads and drops the rest of a request; gives up (closing the connection)
 * past `budget` bytes or at `deadline` (epoch ms). Resolves once the request
 * ended or the connection was closed.
 */
export function discard(req: IncomingMessage, budget: number, deadline: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    req.removeAllListeners('data');
    if (req.complete || req.destroyed) {
      resolve();
      return;
    }
    const giveUp = (): void => {
      req.socket.destroy();
      resolve();
    };
    const timer = setTimeout(giveUp, Math.max(0, deadline - Date.now()));
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    req.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > budget) {
        clearTimeout(timer);
        giveUp();
      }
    });
    req.on('end', done);
    req.on('close', done);
    req.on('error', done);
    req.resume();
  });
}

/** Reads the whole body within `limits`. */
export async function readBody(req: IncomingMessage, limits: BodyLimits): Promise<Result<Buffer, BodyFailure>> {
  const parts = await readBodyParts(req, limits);
  return parts.ok ? ok(joinParts(parts.value)) : parts;
}

/** A body as the chunks it was read or inflated in, each its own or a slice: the caller owns them. */
export interface BodyParts {
  readonly chunks: readonly Buffer[];
  readonly length: number;
}

/** The parts as one buffer (no copy for a single chunk). */
export function joinParts(parts: BodyParts): Buffer {
  return parts.chunks.length === 1 ? (parts.chunks[0] ?? Buffer.alloc(0)) : Buffer.concat(parts.chunks, parts.length);
}

/**
 * Reads the whole body within `limits`, as its chunks: a large body goes to
 * a conversion worker without being joined (16 MB of fresh memory touched,
 * ~17 ms) on the event loop.
 */
export function readBodyParts(req: IncomingMessage, limits: BodyLimits): Promise<Result<BodyParts, BodyFailure>> {
  const { limit, reservation } = limits;
  const deadline = Date.now() + limits.deadlineMs;
  const encoding = bodyEncoding(req.headers['content-encoding']);
  const tooLarge = (what: string, bytes = 0): Result<BodyParts, BodyFailure> =>
    fail({ kind: 'too_large', message: `${what} exceeds the limit of ${limit} bytes`, bytes });
  if (encoding === undefined) {
    const message = `unsupported Content-Encoding ${JSON.stringify(req.headers['content-encoding'])}: use gzip or identity`;
    return discard(req, discardFactor * limit, deadline).then(() => fail({ kind: 'unsupported_media_type', message, bytes: 0 }));
  }
  const declared = declaredLength(req) ?? 0;
  if (declared > discardFactor * limit) {
    req.socket.destroy();
    return Promise.resolve(tooLarge(`the body (${declared} bytes)`));
  }
  if (declared > limit && encoding === 'identity') return discard(req, discardFactor * limit, deadline).then(() => tooLarge(`the body (${declared} bytes)`));
  const overloaded = (bytes: number): Result<BodyParts, BodyFailure> =>
    fail({ kind: 'overloaded', message: 'too many request bytes in flight on this gateway: retry later', bytes });
  // The declared length is reserved before a byte is read; the caller answers without reading.
  if (!reservation.ensure(declared)) return Promise.resolve(overloaded(0));

  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let compressed = 0;
    let settled = false;
    const gunzip = encoding === 'gzip' ? createGunzip({ chunkSize: 64 * 1024 }) : undefined;
    const output = gunzip ?? req;
    const stopReading = (): void => {
      output.removeAllListeners('data');
      if (gunzip !== undefined) {
        req.unpipe(gunzip);
        gunzip.destroy();
      }
    };
    const settle = (result: Result<BodyParts, BodyFailure>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    // A body that trickles or never ends: answer 408 without reading more; the caller closes the connection.
    const timer = setTimeout(() => {
      if (settled) return;
      stopReading();
      req.pause();
      settle(fail({ kind: 'request_timeout', message: `the request body did not arrive within ${limits.deadlineMs} ms`, bytes: size }));
    }, limits.deadlineMs);
    const refuse = (what: string): void => {
      stopReading();
      const bytes = size;
      void discard(req, discardFactor * limit, deadline).then(() => {
        settle(tooLarge(what, bytes));
      });
    };
    if (gunzip !== undefined) {
      req.on('data', (chunk: Buffer) => {
        compressed += chunk.length;
        if (compressed > limit && !settled) refuse('the compressed body');
      });
      req.on('error', (error) => {
        settle(fail({ kind: 'invalid', message: `cannot read the body: ${error.message}`, bytes: size }));
      });
      req.pipe(gunzip);
    }
    output.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        refuse(gunzip === undefined ? 'the body' : 'the decompressed body');
        return;
      }
      // Held bytes (read, or inflated) are charged as they arrive: chunked bodies and gzip output count too.
      if (!reservation.ensure(size)) {
        stopReading();
        req.pause();
        settle(overloaded(size));
        return;
      }
      chunks.push(chunk);
    });
    req.on('close', () => {
      if (!req.complete) settle(fail({ kind: 'invalid', message: 'the request was aborted', bytes: size }));
    });
    output.on('end', () => {
      settle(ok({ chunks, length: size }));
    });
    output.on('error', (error: Error) => {
      if (size <= limit)
        settle(fail({ kind: 'invalid', message: `${gunzip === undefined ? 'cannot read the body' : 'invalid gzip body'}: ${error.message}`, bytes: size }));
    });
  });
}
