// Tempo's search parameters as Tempo reads them: Go durations
// (minDuration=100ms, maxDuration=1m30s), the logfmt `tags` of the legacy
// tag search, and the numeric limits `limit`, `spss` and the tag endpoints'
// `limit` and `maxStaleValues`. Each has a range; beyond it, a message
// naming the parameter for a 400 (issue 33).
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import { parseGoDuration } from '../../query/durations.ts';

/** Tempo's default number of traces a search returns. */
export const defaultLimit = 20;
/** Most traces one search may return (Tempo's max_result_limit is unset by default; this API bounds it). */
export const maxLimit = 10_000;
/** Tempo's default number of spans shown per spanset. */
export const defaultSpss = 3;
/** Most spans shown per spanset. */
export const maxSpss = 1000;

/** Most tags one legacy tag search may carry (each is a column of its statement). */
export const maxSearchTags = 64;
/** The largest maxStaleValues read (Tempo's own default is 5000; Tenantry reads it but has no stale values). */
export const maxStaleValuesBound = 1_000_000;

/** The longest Go duration: Go's time.Duration is an int64 of ns, and time.ParseDuration refuses more (about 292 years). */
export const maxDurationNs = 2n ** 63n - 1n;

/** A duration parameter (minDuration, maxDuration) in ns, at most maxDurationNs, or a message naming it. */
export function durationParam(raw: string, name: string): Result<bigint, string> {
  const ns = parseGoDuration(raw);
  if (ns === undefined) return fail(`invalid ${name}: ${JSON.stringify(raw.slice(0, 100))} is not a duration such as 100ms or 1m30s`);
  if (ns > maxDurationNs)
    return fail(`invalid ${name}: ${JSON.stringify(raw.slice(0, 100))} is longer than the longest duration (${maxDurationNs} ns, about 292 years)`);
  return ok(ns);
}

/** An integer parameter from `min` (1 unless given) to `max`, with a default, or a message naming it. */
export function boundedInt(raw: string | undefined, name: string, fallback: number, max: number, min = 1): Result<number, string> {
  if (raw === undefined || raw === '') return ok(fallback);
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < min)
    return fail(`invalid ${name}: ${JSON.stringify(raw.slice(0, 100))} is not ${min === 1 ? 'a positive integer' : `an integer of at least ${min}`}`);
  const n = Number(raw);
  if (n > max) return fail(`invalid ${name}: ${n} is more than the most this server allows (${max})`);
  return ok(n);
}

/** A quoted logfmt value's text (JSON's escapes), or a message naming `tags`. */
function unescaped(quoted: string): Result<string, string> {
  try {
    return ok(JSON.parse(`"${quoted}"`) as string);
  } catch {
    return fail(`invalid tags: cannot read the quoted value ${JSON.stringify(`"${quoted.slice(0, 100)}"`)}`);
  }
}

/** logfmt `key=value key2="quoted value"` as Tempo's `tags` parameter carries it. */
export function parseLogfmt(raw: string): Result<Map<string, string>, string> {
  const tags = new Map<string, string>();
  const pattern = /\s*([^\s="]+)=("((?:[^"\\]|\\.)*)"|[^\s"]*)\s*/y;
  let at = 0;
  while (at < raw.length) {
    pattern.lastIndex = at;
    const m = pattern.exec(raw);
    if (m === null) {
      if (raw.slice(at).trim() === '') break;
      return fail(`invalid tags: cannot read ${JSON.stringify(raw.slice(at))} as key=value (logfmt)`);
    }
    const value = m[3] === undefined ? ok(m[2] ?? '') : unescaped(m[3]);
    if (!value.ok) return value;
    tags.set(m[1] ?? '', value.value);
    if (tags.size > maxSearchTags) return fail(`invalid tags: more than ${maxSearchTags} tags`);
    at = pattern.lastIndex;
  }
  return ok(tags);
}
