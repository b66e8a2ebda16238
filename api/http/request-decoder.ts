// Decodes a request part with an io-ts codec, folding fp-ts Either into the
// API's Result: a decode failure is a 400 whose details name every problem.
import type * as t from 'io-ts';
import { fold } from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import { formatDecodeErrors } from '../../src/codec/decode-errors.ts';
import { fail, invalidRequest, ok } from './api-error.ts';
import type { Result } from './api-error.ts';

export function decodeWith<A>(codec: t.Type<A, unknown>, input: unknown, what: string): Result<A> {
  return pipe(
    codec.decode(input),
    fold(
      (errors) => {
        const details = formatDecodeErrors(errors);
        return fail<A>(invalidRequest(`invalid ${what}: ${details.join('; ')}`, details));
      },
      (value) => ok(value),
    ),
  );
}
