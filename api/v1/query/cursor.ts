// Opaque keyset cursors (base64url JSON): the sort key of the last row
// returned, a digest of the filters they were made for (replay with other
// filters → 400), and the frozen "now" when endTime was omitted, so a walk
// sees one fixed time window while new data keeps arriving.
import { hash } from 'node:crypto';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { invalidRequest } from '../../http/api-error.ts';

export interface Cursor {
  /** Sort key of the last row returned, as strings (timestamps in ns). */
  readonly key: readonly string[];
  /** The end of the window when the request omitted endTime, in ns. */
  readonly frozenEndNs?: string;
}

interface Wire {
  v: 1;
  f: string;
  k: string[];
  e?: string;
}

/** Digest of the request that a cursor belongs to (tenant, route, filters; never the pagination itself). */
export function filterDigest(parts: unknown): string {
  return hash('sha256', canonicalJson(parts), 'base64url').slice(0, 22);
}

/** JSON with object keys sorted, so equal filters give equal digests whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return value === undefined ? 'null' : JSON.stringify(value);
}

export function encodeCursor(digest: string, cursor: Cursor): string {
  const wire: Wire = { v: 1, f: digest, k: [...cursor.key], ...(cursor.frozenEndNs === undefined ? {} : { e: cursor.frozenEndNs }) };
  return Buffer.from(JSON.stringify(wire)).toString('base64url');
}

/** Decodes a cursor and checks it was made for the same request; `keyLength` is the sort key's width. */
export function decodeCursor(text: string, digest: string, keyLength: number): Result<Cursor, ApiError> {
  const bad = fail(invalidRequest('pagination page is not a cursor returned by this API'));
  if (!/^[A-Za-z0-9_-]{1,2048}$/.test(text)) return bad;
  let wire: unknown;
  try {
    wire = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return bad;
  }
  if (typeof wire !== 'object' || wire === null) return bad;
  const { v, f, k, e } = wire as Partial<Wire>;
  if (v !== 1 || typeof f !== 'string' || !Array.isArray(k) || k.length !== keyLength || !k.every((x) => typeof x === 'string')) return bad;
  if (e !== undefined && (typeof e !== 'string' || !/^\d{1,20}$/.test(e))) return bad;
  if (f !== digest) return fail(invalidRequest('pagination page was made for a different query: repeat the filters of the request that returned it'));
  return ok({ key: k, ...(e === undefined ? {} : { frozenEndNs: e }) });
}
