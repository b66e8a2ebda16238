// Reads an HTTP request body with a limit on its decompressed size, checked
// while inflating: a gzip bomb is cut off after `limit` bytes of output, so
// it costs at most that much memory. Bytes past the limit are read and
// discarded (up to a bound) so the client receives the 413 instead of a
// reset connection.
import type { IncomingMessage } from 'node:http';
import { createGunzip } from 'node:zlib';

export type BodyResult =
  | { readonly ok: true; readonly body: Buffer }
  | { readonly ok: false; readonly kind: 'too_large' | 'invalid' | 'unsupported_media_type'; readonly message: string };

/** Raw bytes we are willing to read and discard after refusing a body, as a multiple of the limit. */
const discardFactor = 4;

/** The body's encoding from Content-Encoding, or undefined when unsupported. */
export function bodyEncoding(header: string | undefined): 'identity' | 'gzip' | undefined {
  const value = (header ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return 'identity';
  if (value === 'gzip' || value === 'x-gzip') return 'gzip';
  return undefined;
}

/** Reads and drops the rest of a request; gives up (closing it) past `budget` bytes. */
function discard(req: IncomingMessage, budget: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    req.removeAllListeners('data');
    if (req.readableEnded || req.destroyed) {
      resolve();
      return;
    }
    req.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > budget) {
        req.destroy();
        resolve();
      }
    });
    req.on('end', () => { resolve(); });
    req.on('close', () => { resolve(); });
    req.on('error', () => { resolve(); });
    req.resume();
  });
}

/** Reads the whole body; `limit` bounds it after decompression. */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const encoding = bodyEncoding(req.headers['content-encoding']);
  const tooLarge = (what: string): BodyResult => ({ ok: false, kind: 'too_large', message: `${what} exceeds the limit of ${limit} bytes` });
  if (encoding === undefined) {
    const message = `unsupported Content-Encoding ${JSON.stringify(req.headers['content-encoding'])}: use gzip or identity`;
    return discard(req, discardFactor * limit).then(() => ({ ok: false, kind: 'unsupported_media_type', message }));
  }
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (declared > discardFactor * limit) {
    req.destroy();
    return Promise.resolve(tooLarge(`the body (${declared} bytes)`));
  }
  if (declared > limit && encoding === 'identity') return discard(req, discardFactor * limit).then(() => tooLarge(`the body (${declared} bytes)`));

  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let compressed = 0;
    let settled = false;
    const settle = (result: BodyResult): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const gunzip = encoding === 'gzip' ? createGunzip({ chunkSize: 64 * 1024 }) : undefined;
    const output = gunzip ?? req;
    const refuse = (what: string): void => {
      if (gunzip !== undefined) {
        req.unpipe(gunzip);
        gunzip.destroy();
      }
      void discard(req, discardFactor * limit).then(() => { settle(tooLarge(what)); });
    };
    if (gunzip !== undefined) {
      req.on('data', (chunk: Buffer) => {
        compressed += chunk.length;
        if (compressed > limit && !settled) refuse('the compressed body');
      });
      req.on('error', (error) => { settle({ ok: false, kind: 'invalid', message: `cannot read the body: ${error.message}` }); });
      req.pipe(gunzip);
    }
    output.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        output.removeAllListeners('data');
        refuse(gunzip === undefined ? 'the body' : 'the decompressed body');
        return;
      }
      chunks.push(chunk);
    });
    req.on('close', () => { if (!req.complete) settle({ ok: false, kind: 'invalid', message: 'the request was aborted' }); });
    output.on('end', () => { settle({ ok: true, body: chunks.length === 1 ? (chunks[0] ?? Buffer.alloc(0)) : Buffer.concat(chunks, size) }); });
    output.on('error', (error: Error) => {
      if (size <= limit) settle({ ok: false, kind: 'invalid', message: `${gunzip === undefined ? 'cannot read the body' : 'invalid gzip body'}: ${error.message}` });
    });
  });
}
