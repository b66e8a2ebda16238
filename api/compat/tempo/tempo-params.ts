// Tempo's search parameters as Tempo reads them: Go durations
// (minDuration=100ms, maxDuration=1m30s), the logfmt `tags` of the legacy
// tag search, and the numeric limits `limit` and `spss`.
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';

/** Tempo's default number of traces a search returns. */
export const defaultLimit = 20;
/** Most traces one search may return (Tempo's max_result_limit is unset by default; this API bounds it). */
export const maxLimit = 10_000;
/** Tempo's default number of spans shown per spanset. */
export const defaultSpss = 3;
/** Most spans shown per spanset. */
export const maxSpss = 1000;

const units: Readonly<Record<string, number>> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** A Go duration ("250ms", "1.5s", "1m30s") in ns. */
export function parseGoDuration(raw: string): bigint | undefined {
  if (!/^((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/.test(raw)) return undefined;
  let total = 0n;
  for (const m of raw.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) total += BigInt(Math.round(Number(m[1]) * (units[m[2] ?? 'ns'] ?? 1)));
  return total;
}

/** A positive integer parameter with a default and a bound, or a message naming it. */
export function boundedInt(raw: string | undefined, name: string, fallback: number, max: number): Result<number, string> {
  if (raw === undefined || raw === '') return ok(fallback);
  if (!/^\d{1,9}$/.test(raw) || Number(raw) === 0) return fail(`invalid ${name}: ${JSON.stringify(raw)} is not a positive integer`);
  const n = Number(raw);
  if (n > max) return fail(`invalid ${name}: ${n} is more than the most this server allows (${max})`);
  return ok(n);
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
    const value = m[3] === undefined ? (m[2] ?? '') : (JSON.parse(`"${m[3]}"`) as string);
    tags.set(m[1] ?? '', value);
    at = pattern.lastIndex;
  }
  return ok(tags);
}
