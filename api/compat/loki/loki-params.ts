// Loki's query parameters as Loki reads them (pkg/loghttp/params.go):
// timestamps as ns integers, seconds (10 digits or fewer, or with a
// fraction) or RFC3339; start defaulting to end - since (1h); the default
// step of a range query; limit, direction. Errors carry Loki's wording.
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import { parseDuration } from './logql-ast.ts';

/** Parameters of one request, from the query string and a form body merged. */
export type Form = (name: string) => string | undefined;

const hourNs = 3_600_000_000_000n;

/** Most entries one log query may return (Loki's max_entries_limit_per_query default). */
export const maxEntriesLimit = 5000;

/** Most points per series (Loki's resolution limit). */
export const maxPoints = 11_000;

/** A Loki timestamp parameter in Unix ns. */
export function parseTimestamp(value: string): bigint | undefined {
  if (value.includes('.')) {
    const seconds = Number(value);
    if (Number.isFinite(seconds)) {
      const whole = Math.trunc(seconds);
      return BigInt(whole) * 1_000_000_000n + BigInt(Math.round(Math.round((seconds - whole) * 1000) / 1000 * 1e9));
    }
  }
  if (/^-?\d+$/.test(value)) return value.replace('-', '').length <= 10 ? BigInt(value) * 1_000_000_000n : BigInt(value);
  const ms = Date.parse(value);
  if (!/^\d{4}-\d\d-\d\dT/.test(value) || Number.isNaN(ms)) return undefined;
  const fraction = /\.(\d+)/.exec(value)?.[1] ?? '';
  return BigInt(Math.floor(ms / 1000)) * 1_000_000_000n + BigInt(fraction.slice(0, 9).padEnd(9, '0') || '0');
}

/** Seconds (float) or a duration ("30s", "1m"), as Loki reads step and interval. */
export function parseSecondsOrDuration(value: string): bigint | undefined {
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(value)) return BigInt(Math.round(Number(value) * 1e9));
  return parseDuration(value);
}

export interface Bounds { readonly startNs: bigint; readonly endNs: bigint }

/** start/end/since with Loki's defaults: end = now, start = min(end, now) - since. */
export function parseBounds(form: Form, nowNs: bigint): Result<Bounds, string> {
  let since = hourNs;
  const sinceText = form('since');
  if (sinceText !== undefined && sinceText !== '') {
    const d = parseDuration(sinceText);
    if (d === undefined) return fail(`could not parse 'since' parameter: not a valid duration string: "${sinceText}"`);
    since = d;
  }
  const endText = form('end');
  const endNs = endText === undefined || endText === '' ? nowNs : parseTimestamp(endText);
  if (endNs === undefined) return fail(`could not parse 'end' parameter: cannot parse "${endText}" to a valid timestamp`);
  const startText = form('start');
  const startNs = startText === undefined || startText === '' ? (endNs > nowNs ? nowNs : endNs) - since : parseTimestamp(startText);
  if (startNs === undefined) return fail(`could not parse 'start' parameter: cannot parse "${startText}" to a valid timestamp`);
  return ok({ startNs, endNs });
}

/** limit (default 100) within the per-query maximum. */
export function parseLimit(form: Form): Result<number, string> {
  const text = form('limit');
  if (text === undefined || text === '') return ok(100);
  if (!/^\d+$/.test(text)) return fail(`strconv.Atoi: parsing "${text}": invalid syntax`);
  const limit = Number(text);
  if (limit <= 0) return fail('limit must be a positive value');
  if (limit > maxEntriesLimit) return fail(`max entries limit per query exceeded, limit > max_entries_limit_per_query (${limit} > ${maxEntriesLimit})`);
  return ok(limit);
}

export function parseDirection(form: Form): Result<'forward' | 'backward', string> {
  const text = (form('direction') ?? '').toLowerCase();
  if (text === '' || text === 'backward') return ok('backward');
  if (text === 'forward') return ok('forward');
  return fail(`invalid direction '${form('direction') ?? ''}'`);
}

/** step with Loki's default of max(1 s, (end - start) / 250 whole seconds). */
export function parseStep(form: Form, bounds: Bounds): Result<bigint, string> {
  const text = form('step');
  if (text === undefined || text === '') {
    const seconds = Math.max(Math.floor(Number(bounds.endNs - bounds.startNs) / 1e9 / 250), 1);
    return ok(BigInt(seconds) * 1_000_000_000n);
  }
  const step = parseSecondsOrDuration(text);
  if (step === undefined) return fail(`cannot parse "${text}" to a valid duration`);
  if (step <= 0n) return fail('zero or negative query resolution step widths are not accepted. Try a positive integer');
  if ((bounds.endNs - bounds.startNs) / step > BigInt(maxPoints)) return fail('exceeded maximum resolution of 11,000 points per time series. Try increasing the value of the step parameter');
  return ok(step);
}
