// Loki's query parameters as Loki reads them (pkg/loghttp/params.go):
// timestamps as ns integers, seconds (10 digits or fewer, or with a
// fraction) or RFC3339; start defaulting to end - since (1h); the default
// step of a range query; limit, direction. Errors carry Loki's wording.
// Every number has a range (issue 33): timestamps in [1970, 2200), durations
// up to 3650 days, counts up to their limit; beyond it is a 400 naming the
// parameter, never a value that overflows on its way to ClickHouse.
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import { parseLogqlDuration } from '../../query/durations.ts';
import { maxDurationNs } from './logql-ast.ts';

/** Parameters of one request, from the query string and a form body merged. */
export type Form = (name: string) => string | undefined;

const hourNs = 3_600_000_000_000n;

/** Most entries one log query may return (Loki's max_entries_limit_per_query default). */
export const maxEntriesLimit = 5000;

/** Most points per series (Loki's resolution limit). */
export const maxPoints = 11_000;

/** The latest timestamp a parameter may name: 2200-01-01T00:00:00Z (ClickHouse's DateTime64(9) ends in 2262; a step or range added stays inside it). */
export const maxTimestampNs = 7_258_118_400_000_000_000n;

/** Most series /index/volume may answer. */
export const maxVolumeLimit = 10_000;

/** A Loki timestamp parameter in Unix ns (any size: the caller checks the range). */
export function parseTimestamp(value: string): bigint | undefined {
  if (value.includes('.')) {
    const seconds = Number(value);
    if (Number.isFinite(seconds)) {
      const whole = Math.trunc(seconds);
      return BigInt(whole) * 1_000_000_000n + BigInt(Math.round((Math.round((seconds - whole) * 1000) / 1000) * 1e9));
    }
  }
  if (/^-?\d+$/.test(value)) return value.replace('-', '').length <= 10 ? BigInt(value) * 1_000_000_000n : BigInt(value);
  const ms = Date.parse(value);
  if (!/^\d{4}-\d\d-\d\dT/.test(value) || Number.isNaN(ms)) return undefined;
  const fraction = /\.(\d+)/.exec(value)?.[1] ?? '';
  return BigInt(Math.floor(ms / 1000)) * 1_000_000_000n + BigInt(fraction.slice(0, 9).padEnd(9, '0') || '0');
}

/** A timestamp parameter within [1970, 2200). */
function timestampParam(name: string, text: string): Result<bigint, string> {
  const ns = parseTimestamp(text);
  if (ns === undefined) return fail(`could not parse '${name}' parameter: cannot parse "${text}" to a valid timestamp`);
  if (ns < 0n || ns >= maxTimestampNs) return fail(`invalid '${name}' parameter: ${text} is outside 1970-01-01T00:00:00Z to 2200-01-01T00:00:00Z`);
  return ok(ns);
}

/** Seconds (float) or a duration ("30s", "1m"), as Loki reads step and interval; any size (the caller checks the range). */
export function parseSecondsOrDuration(value: string): bigint | undefined {
  if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(value)) {
    const seconds = Number(value);
    if (!Number.isFinite(seconds)) return undefined;
    // Past 2^53 ns a float has no sub-second digits left: whole seconds, exactly, and no Infinity on the way.
    return Math.abs(seconds) < 1e6 ? BigInt(Math.round(seconds * 1e9)) : BigInt(Math.trunc(seconds)) * 1_000_000_000n;
  }
  return parseLogqlDuration(value);
}

/** A duration parameter within [0, maxDurationNs] (seconds too when `seconds`), or undefined when absent. */
function durationParam(form: Form, name: string, seconds: boolean): Result<bigint | undefined, string> {
  const text = form(name);
  if (text === undefined || text === '') return ok(undefined);
  const ns = seconds ? parseSecondsOrDuration(text) : parseLogqlDuration(text);
  if (ns === undefined) return fail(`could not parse '${name}' parameter: not a valid ${seconds ? 'number of seconds or ' : ''}duration string: "${text}"`);
  if (ns < 0n) return fail(`invalid '${name}' parameter: ${text} is negative`);
  if (ns > maxDurationNs) return fail(`invalid '${name}' parameter: ${text} is longer than 3650d`);
  return ok(ns);
}

export interface Bounds {
  readonly startNs: bigint;
  readonly endNs: bigint;
}

/** A timestamp parameter, or `fallback` when absent. */
function timestampOr(form: Form, name: string, fallback: bigint): Result<bigint, string> {
  const text = form(name);
  return text === undefined || text === '' ? ok(fallback) : timestampParam(name, text);
}

/** start/end/since with Loki's defaults: end = now, start = min(end, now) - since. */
export function parseBounds(form: Form, nowNs: bigint): Result<Bounds, string> {
  const since = durationParam(form, 'since', false);
  if (!since.ok) return since;
  const end = timestampOr(form, 'end', nowNs);
  if (!end.ok) return end;
  const start = timestampOr(form, 'start', (end.value < nowNs ? end.value : nowNs) - (since.value ?? hourNs));
  if (!start.ok) return start;
  return ok({ startNs: start.value, endNs: end.value });
}

/** An instant query's `time` (default now). */
export function parseTime(form: Form, nowNs: bigint): Result<bigint, string> {
  return timestampOr(form, 'time', nowNs);
}

/** A positive integer parameter up to `max`, or `fallback` when absent. */
function countParam(form: Form, name: string, fallback: number, max: number, tooMany: (n: number) => string): Result<number, string> {
  const text = form(name);
  if (text === undefined || text === '') return ok(fallback);
  if (!/^[+-]?\d+$/.test(text)) return fail(`could not parse '${name}' parameter: strconv.Atoi: parsing "${text}": invalid syntax`);
  const n = Number(text);
  if (n <= 0) return fail(`${name} must be a positive value`);
  if (n > max) return fail(tooMany(n));
  return ok(n);
}

/** limit (default 100) within the per-query maximum. */
export function parseLimit(form: Form): Result<number, string> {
  return countParam(
    form,
    'limit',
    100,
    maxEntriesLimit,
    (n) => `max entries limit per query exceeded, limit > max_entries_limit_per_query (${n} > ${maxEntriesLimit})`,
  );
}

/** /index/volume's limit (default 100). */
export function parseVolumeLimit(form: Form): Result<number, string> {
  return countParam(form, 'limit', 100, maxVolumeLimit, (n) => `invalid 'limit' parameter: ${n} is more than ${maxVolumeLimit}`);
}

export function parseDirection(form: Form): Result<'forward' | 'backward', string> {
  const text = (form('direction') ?? '').toLowerCase();
  if (text === '' || text === 'backward') return ok('backward');
  if (text === 'forward') return ok('forward');
  return fail(`invalid direction '${form('direction') ?? ''}'`);
}

/** interval (log queries: the least time between entries); read and checked, not applied (docs/loki.md). */
export function parseInterval(form: Form): Result<bigint | undefined, string> {
  return durationParam(form, 'interval', true);
}

/** step with Loki's default of max(1 s, (end - start) / 250 whole seconds). */
export function parseStep(form: Form, bounds: Bounds): Result<bigint, string> {
  const text = form('step');
  if (text === undefined || text === '') {
    const seconds = Math.max(Math.floor(Number(bounds.endNs - bounds.startNs) / 1e9 / 250), 1);
    return ok(BigInt(seconds) * 1_000_000_000n);
  }
  const step = parseSecondsOrDuration(text);
  if (step === undefined) return fail(`invalid 'step' parameter: cannot parse "${text}" to a valid duration`);
  if (step <= 0n) return fail('zero or negative query resolution step widths are not accepted. Try a positive integer');
  if (step > maxDurationNs) return fail(`invalid 'step' parameter: ${text} is longer than 3650d`);
  if ((bounds.endNs - bounds.startNs) / step > BigInt(maxPoints))
    return fail('exceeded maximum resolution of 11,000 points per time series. Try increasing the value of the step parameter');
  return ok(step);
}

/** /index/volume's optional step: checked as a query's, not applied (the endpoint answers one vector). */
export function parseVolumeStep(form: Form): Result<bigint | undefined, string> {
  const text = form('step');
  if (text === undefined || text === '') return ok(undefined);
  const step = parseSecondsOrDuration(text);
  if (step === undefined) return fail(`invalid 'step' parameter: cannot parse "${text}" to a valid duration`);
  if (step <= 0n || step > maxDurationNs) return fail(`invalid 'step' parameter: ${text} is not between 0 and 3650d`);
  return ok(step);
}
