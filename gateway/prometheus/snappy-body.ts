// The snappy block format of remote write bodies (not the framed format):
// its header, a varint of the uncompressed length, is read before anything
// is decompressed, so a small body that would inflate past the request
// limit is refused without allocating its output. Decompression itself is
// the `snappy` package's (napi, the Rust implementation).
import { uncompressSync } from 'snappy';
import type { Result } from '../../src/result.ts';
import { fail, ok } from '../../src/result.ts';

export type SnappyFailure = { readonly kind: 'too_large' | 'invalid'; readonly message: string };

/** The uncompressed length a snappy block declares (a varint of at most 32 bits), or undefined when the header is malformed. */
export function snappyLength(block: Buffer): number | undefined {
  let length = 0;
  for (let i = 0; i < 5 && i < block.length; i++) {
    const b = block[i] ?? 0;
    length += (b & 0x7f) * 2 ** (7 * i);
    if (b < 0x80) return length <= 0xffffffff ? length : undefined;
  }
  return undefined;
}

/** The decompressed block, refused when its declared length exceeds `limit` bytes or when it is not valid snappy. */
export function decompressSnappy(block: Buffer, limit: number): Result<Buffer, SnappyFailure> {
  const length = snappyLength(block);
  if (length === undefined) return fail({ kind: 'invalid', message: 'invalid snappy block: malformed length header' });
  if (length > limit) return fail({ kind: 'too_large', message: `the decompressed body (${length} bytes) exceeds the limit of ${limit} bytes` });
  try {
    const out = uncompressSync(block, { asBuffer: true });
    if (!Buffer.isBuffer(out) || out.length !== length) return fail({ kind: 'invalid', message: 'invalid snappy block: length does not match its header' });
    return ok(out);
  } catch (error) {
    return fail({ kind: 'invalid', message: `invalid snappy block: ${(error as Error).message}` });
  }
}
