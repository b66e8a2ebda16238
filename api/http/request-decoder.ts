// Decodes a request part with an io-ts codec, folding fp-ts Either into a
// Result: a decode failure is a 400 whose details name every problem.
import type * as t from 'io-ts';
import { formatDecodeErrors } from '../../src/codec/decode-errors.ts';
import type { Result } from '../../src/result.ts';
import { fail, ok } from '../../src/result.ts';
import type { ApiError } from './api-error.ts';
import { invalidRequest } from './api-error.ts';

export function decodeWith<A>(codec: t.Type<A, unknown>, input: unknown, what: string): Result<A, ApiError> {
  const decoded = codec.decode(input);
  if (decoded._tag === 'Right') return ok(decoded.right);
  const details = formatDecodeErrors(decoded.left);
  return fail(invalidRequest(`invalid ${what}: ${details.join('; ')}`, details));
}
