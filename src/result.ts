// The one shape of an expected failure for the whole tree: a value or the
// reason there is none. Errors travel as values of this type and become
// statuses, codes or log lines in one place per protocol; throw only for bugs.

export type Ok<T> = { readonly ok: true; readonly value: T };
export type Fail<E> = { readonly ok: false; readonly error: E };
export type Result<T, E> = Ok<T> | Fail<E>;

/** A success carrying `value`. */
export const ok = <T>(value: T): Ok<T> => ({ ok: true, value });

/** A failure carrying `error`. */
export const fail = <E>(error: E): Fail<E> => ({ ok: false, error });

/** The same result with its error turned into another type (e.g. a message into an API error). */
export function mapError<T, E, F>(result: Result<T, E>, to: (error: E) => F): Result<T, F> {
  return result.ok ? result : fail(to(result.error));
}

/** The same result with its value turned into another type. */
export function mapValue<T, U, E>(result: Result<T, E>, to: (value: T) => U): Result<U, E> {
  return result.ok ? ok(to(result.value)) : result;
}
