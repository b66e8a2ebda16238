// Page size and cursor parameters shared by every list (DESIGN.md section 5).
import * as t from 'io-ts';
import { closed, refined, Str } from './codecs.ts';

export const defaultLimit = 100;
export const maxLimit = 1000;

export const Limit = refined(t.number, `an integer from 1 to ${maxLimit}`, (n) => Number.isInteger(n) && n >= 1 && n <= maxLimit, {
  type: 'integer',
  minimum: 1,
  maximum: maxLimit,
  default: defaultLimit,
});

export const Pagination = closed('pagination', {}, { limit: Limit, page: Str });

/** A query-string limit: digits read as a number, anything else refused as Limit refuses it. */
export const LimitParameter = new t.Type<number, unknown, unknown>(
  Limit.name,
  (u): u is number => Limit.is(u),
  (u, c) => Limit.validate(typeof u === 'string' && /^\d+$/.test(u) ? Number(u) : u, c),
  t.identity,
);

/** The page envelope of every list response. */
export interface Envelope<T> {
  readonly data: readonly T[];
  readonly nextPage: string | null;
  readonly next_page: string | null;
}

/** The page envelope: both cursor names, same value, null at the end. */
export function envelope<T>(data: readonly T[], next: string | null): Envelope<T> {
  return { data, nextPage: next, next_page: next };
}
