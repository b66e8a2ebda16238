// Time and duration parameters as Prometheus' HTTP API reads them
// (web/api/v1 parseTime and parseDuration): a time is Unix seconds as a
// float or an RFC 3339 date; a duration is float seconds or a Prometheus
// duration ("30s", "1m30s", "1h", "2d", "1w", "1y", "250ms"). Times are kept
// as Unix milliseconds, PromQL's resolution.
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import { parsePromDuration } from '../../query/durations.ts';

/** The largest and smallest times Prometheus accepts (its minTime and maxTime, as milliseconds). */
const maxMs = 9_223_372_036_854;
const minMs = -9_223_372_036_854;

/** A time parameter → Unix milliseconds. */
export function parseTimeParam(text: string, name: string): Result<number, string> {
  if (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) {
    const seconds = Number(text);
    const ms = Math.round(seconds * 1000);
    if (!Number.isFinite(ms) || ms > maxMs || ms < minMs) return fail(`invalid parameter "${name}": cannot parse "${text}" to a valid timestamp`);
    return ok(ms);
  }
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text)) {
    const ms = Date.parse(text);
    if (Number.isFinite(ms)) return ok(ms);
  }
  return fail(`invalid parameter "${name}": cannot parse "${text}" to a valid timestamp`);
}

/** A duration parameter (step, timeout, lookback_delta) → milliseconds. */
export function parseDurationParam(text: string, name: string): Result<number, string> {
  if (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) {
    const ms = Math.round(Number(text) * 1000);
    if (!Number.isFinite(ms) || Math.abs(ms) > maxMs)
      return fail(`invalid parameter "${name}": cannot parse "${text}" to a valid duration. It overflows int64`);
    return ok(ms);
  }
  const ms = parsePromDuration(text);
  if (ms === undefined) return fail(`invalid parameter "${name}": cannot parse "${text}" to a valid duration`);
  return ok(ms);
}
