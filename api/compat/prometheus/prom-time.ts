// Time and duration parameters as Prometheus' HTTP API reads them
// (web/api/v1 parseTime and parseDuration): a time is Unix seconds as a
// float or an RFC 3339 date; a duration is float seconds or a Prometheus
// duration ("30s", "1m30s", "1h", "2d", "1w", "1y", "250ms"). Times are kept
// as Unix milliseconds, PromQL's resolution.
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';

const unitsMs: Readonly<Record<string, number>> = { y: 365 * 86_400_000, w: 7 * 86_400_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
const durationPattern = /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;
const durationUnits = ['y', 'w', 'd', 'h', 'm', 's', 'ms'] as const;

/** The largest and smallest times Prometheus accepts (its minTime and maxTime, as milliseconds). */
const maxMs = 9_223_372_036_854;
const minMs = -9_223_372_036_854;

/** A PromQL duration literal ("1m30s") → milliseconds, or undefined when it is not one. */
export function parsePromDuration(text: string): number | undefined {
  if (text === '' || text === '0') return text === '0' ? 0 : undefined;
  const m = durationPattern.exec(text);
  if (m === null) return undefined;
  const parts = durationUnits.map((unit, i) => [unit, m[i + 1]] as const).filter(([, part]) => part !== undefined);
  if (parts.length === 0) return undefined;
  return parts.reduce((total, [unit, part]) => total + Number(part) * (unitsMs[unit] ?? 0), 0);
}

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
    if (!Number.isFinite(ms) || Math.abs(ms) > maxMs) return fail(`invalid parameter "${name}": cannot parse "${text}" to a valid duration. It overflows int64`);
    return ok(ms);
  }
  const ms = parsePromDuration(text);
  if (ms === undefined) return fail(`invalid parameter "${name}": cannot parse "${text}" to a valid duration`);
  return ok(ms);
}
