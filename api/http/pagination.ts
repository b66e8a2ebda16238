// Page size and cursor parameters shared by every list (DESIGN.md section 5).
import * as t from 'io-ts';
import { closed, refined, Str } from './codecs.ts';

export const defaultLimit = 100;
export const maxLimit = 1000;

export const Limit = refined(t.number, `an integer from 1 to ${maxLimit}`, (n) => Number.isInteger(n) && n >= 1 && n <= maxLimit,
  { type: 'integer', minimum: 1, maximum: maxLimit, default: defaultLimit });

export const Pagination = closed('pagination', {}, { limit: Limit, page: Str });

/** The page envelope: both cursor names, same value, null at the end. */
export function envelope<T>(data: readonly T[], next: string | null): { data: readonly T[]; nextPage: string | null; next_page: string | null } {
  return { data, nextPage: next, next_page: next };
}
