// The time window of a Tempo request: `start` and `end` in Unix seconds, as
// Grafana sends them. Without `start`, a search or tag lookup covers the last
// hour (Tempo then asks only its ingesters, which hold the recent traces);
// the tenant's retention moves the start up, and a range longer than
// limits.maxQueryDays is a 400 (the request's TenantScan, api/query/tenant-scan.ts).
// A trace lookup is not a scan (the trace index finds its days), so it is
// held to retention only.
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import { nsPerDay } from '../../../src/tenant/settings/tenant-settings.ts';
import type { TenantScan } from '../../query/tenant-scan.ts';
import type { TimeRange } from '../../query/time-range.ts';

const nsPerSecond = 1_000_000_000n;

/** How far back a search or tag lookup without `start` looks. */
export const recentNs = 3_600n * nsPerSecond;

/** The first second no time may reach: 2200-01-01T00:00:00Z (the Loki API's bound too; ns past it near Int64's end). */
export const maxUnixSeconds = 7_258_118_400n;

/** A Unix time in seconds (Tempo's unit; fractions allowed) before 2200, or a message naming the parameter. */
function seconds(raw: string | undefined, name: string): Result<bigint | undefined, string> {
  if (raw === undefined || raw === '') return ok(undefined);
  if (!/^\d{1,12}(\.\d{1,9})?$/.test(raw)) return fail(`invalid ${name}: ${JSON.stringify(raw.slice(0, 100))} is not a Unix time in seconds`);
  const [whole = '0', fraction = ''] = raw.split('.');
  if (BigInt(whole) >= maxUnixSeconds) return fail(`invalid ${name}: ${raw} is not before 2200-01-01T00:00:00Z (${maxUnixSeconds})`);
  return ok(BigInt(whole) * nsPerSecond + BigInt(fraction.padEnd(9, '0')));
}

/** The window of a search or tag request, or a message for a 400. */
export function searchWindow(query: { start?: string; end?: string }, scan: TenantScan, nowNs: bigint): Result<TimeRange, string> {
  const start = seconds(query.start, 'start');
  const end = seconds(query.end, 'end');
  if (!start.ok) return start;
  if (!end.ok) return end;
  // end is inclusive to the second in Tempo: a span at end's second is found. Without end, a
  // minute past now keeps spans of a sender whose clock runs a little ahead.
  const endNs = end.value === undefined ? nowNs + 60n * nsPerSecond : end.value + nsPerSecond;
  const startNs = start.value ?? endNs - recentNs;
  if (startNs > endNs) return fail('invalid start: start is after end');
  const window = scan.window({ startNs, endNs }, { narrow: 'start/end' });
  return window.ok ? ok(window.value) : fail(window.error.message);
}

/** The window of a trace lookup: `start`/`end` when given, else everything retention keeps. */
export function lookupWindow(query: { start?: string; end?: string }, scan: TenantScan, nowNs: bigint): Result<TimeRange, string> {
  const start = seconds(query.start, 'start');
  const end = seconds(query.end, 'end');
  if (!start.ok) return start;
  if (!end.ok) return end;
  const oldest = scan.visibleFromNs;
  const startNs = start.value === undefined || start.value < oldest ? oldest : start.value;
  // Spans may start a little after `now` on a skewed clock; a lookup without end takes them too.
  const endNs = end.value === undefined ? nowNs + nsPerDay : end.value + nsPerSecond;
  return ok({ startNs, endNs: endNs < startNs ? startNs : endNs });
}
