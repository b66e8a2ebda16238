// Reads an HTTP request body with a limit on its decompressed size, checked
// while inflating: a gzip bomb is cut off after `limit` bytes of output, so
// it costs at most that much memory.
import type { IncomingMessage } from 'node:http';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';

export type BodyResult =
  | { readonly ok: true; readonly body: Buffer }
  | { readonly ok: false; readonly kind: 'too_large' | 'invalid' | 'unsupported_media_type'; readonly message: string };

/** The body's encoding from Content-Encoding, or undefined when unsupported. */
export function bodyEncoding(header: string | undefined): 'identity' | 'gzip' | undefined {
  const value = (header ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return 'identity';
  if (value === 'gzip' || value === 'x-gzip') return 'gzip';
  return undefined;
}

function collect(source: Readable, limit: number, what: string): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyResult): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    source.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        settle({ ok: false, kind: 'too_large', message: `${what} exceeds the limit of ${limit} bytes` });
        source.destroy();
        return;
      }
      chunks.push(chunk);
    });
    source.on('end', () => { settle({ ok: true, body: chunks.length === 1 ? (chunks[0] ?? Buffer.alloc(0)) : Buffer.concat(chunks, size) }); });
    source.on('error', (error: Error) => { settle({ ok: false, kind: 'invalid', message: `cannot read the body: ${error.message}` }); });
    source.on('close', () => { settle({ ok: false, kind: 'invalid', message: 'the request was aborted' }); });
  });
}

/** Reads the whole body; `limit` bounds it after decompression. */
export async function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const encoding = bodyEncoding(req.headers['content-encoding']);
  if (encoding === undefined) {
    return { ok: false, kind: 'unsupported_media_type', message: `unsupported Content-Encoding ${JSON.stringify(req.headers['content-encoding'])}: use gzip or identity` };
  }
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (encoding === 'identity' && declared > limit) return { ok: false, kind: 'too_large', message: `the body (${declared} bytes) exceeds the limit of ${limit} bytes` };
  if (encoding === 'identity') return collect(req, limit, 'the body');
  // The compressed size is bounded by the same limit; the output by `limit` too.
  const gunzip = createGunzip({ chunkSize: 64 * 1024 });
  const state = { compressed: 0, tooLarge: false };
  req.on('data', (chunk: Buffer) => {
    state.compressed += chunk.length;
    if (state.compressed > limit && !state.tooLarge) {
      state.tooLarge = true;
      gunzip.destroy(new Error('compressed body over the limit'));
    }
  });
  req.on('error', (error) => { gunzip.destroy(error); });
  req.pipe(gunzip);
  const result = await collect(gunzip, limit, 'the decompressed body');
  req.unpipe(gunzip);
  if (state.tooLarge) return { ok: false, kind: 'too_large', message: `the compressed body exceeds the limit of ${limit} bytes` };
  if (!result.ok && result.kind === 'invalid') return { ok: false, kind: 'invalid', message: `invalid gzip body: ${result.message}` };
  return result;
}
