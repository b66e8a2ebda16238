// Usage from the per-day summing tables only (never a scan of raw data):
// rows are summed per day at read time, then folded into periods. Accepted
// units come from usage_daily (written by materialized views as rows are
// stored), rejected units from usage_rejected_daily (written by the gateway:
// items it refused, per signal and reason, with their decoded OTLP bytes).
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { fail } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { invalidRequest } from '../../http/api-error.ts';
import { resolveRange } from '../../query/time-range.ts';
import { TenantScan } from '../../query/tenant-scan.ts';
import type { ScanCaller, Statement } from '../../query/tenant-scan.ts';
import type { RouteDeps } from '../../query/deps.ts';
import type { UsageQuery } from './usage-codecs.ts';
import { dayToMs, isoDay, periodsTouching } from './usage-periods.ts';
import type { Period } from './usage-periods.ts';

/** At most ten years of days per request. */
export const maxUsagePeriods = 3660;

/** Items the gateway refused for one signal: units, decoded OTLP bytes, and units per reason (e.g. rate_limited). */
export interface RejectedCounts {
  units: number;
  bytes: number;
  reasons: Record<string, number>;
}

export interface UsageCounts {
  logs: { bytes: number; units: number };
  metrics: { units: number };
  traces: { units: number };
  rejected: { logs: RejectedCounts; metrics: RejectedCounts; traces: RejectedCounts };
}

export interface UsageEntry extends UsageCounts {
  start: number;
  end: number;
}

/**
 * One row of the usage statement: a day's accepted units (signal '') or one
 * signal's and reason's refused units that day. Sums arrive as numbers
 * (embedded) or as quoted 64-bit integers (server): Number() reads both.
 */
interface DayRow {
  day: string;
  signal: string;
  reason: string;
  log_records: number | string;
  log_bytes: number | string;
  spans: number | string;
  metric_points: number | string;
  items: number | string;
  bytes: number | string;
}

const noneRejected = (): RejectedCounts => ({ units: 0, bytes: 0, reasons: {} });

const empty = (): UsageCounts => ({
  logs: { bytes: 0, units: 0 },
  metrics: { units: 0 },
  traces: { units: 0 },
  rejected: { logs: noneRejected(), metrics: noneRejected(), traces: noneRejected() },
});

function addRejected(into: UsageCounts, row: DayRow): void {
  if (row.signal !== 'logs' && row.signal !== 'metrics' && row.signal !== 'traces') return;
  const counts = into.rejected[row.signal];
  const units = Number(row.items);
  counts.units += units;
  counts.bytes += Number(row.bytes);
  counts.reasons[row.reason] = (counts.reasons[row.reason] ?? 0) + units;
}

function add(into: UsageCounts, row: DayRow): void {
  into.logs.units += Number(row.log_records);
  into.logs.bytes += Number(row.log_bytes);
  into.traces.units += Number(row.spans);
  into.metrics.units += Number(row.metric_points);
}

/**
 * The per-day SELECT: accepted units from
 * usage_daily and refused ones from usage_rejected_daily in one statement,
 * since planning a statement costs more than reading these few rows.
 */
function usageSql(deps: RouteDeps, scan: TenantScan, periods: readonly Period[]): Statement {
  const statement = scan.statement();
  const { params } = statement;
  const first = periods[0]?.firstDay ?? 0;
  const end = periods[periods.length - 1]?.endDay ?? 0;
  const where = `${statement.tenantIs()} AND day >= ${params.bind(isoDay(first), 'Date')} AND day < ${params.bind(isoDay(end), 'Date')}`;
  const sql = `SELECT day, '' AS signal, '' AS reason, sum(log_records) AS log_records, sum(log_bytes) AS log_bytes, sum(spans) AS spans,
      sum(metric_points) AS metric_points, toUInt64(0) AS items, toUInt64(0) AS bytes
    FROM ${queryTable(deps.schema, 'usage_daily')} WHERE ${where} GROUP BY day
    UNION ALL
    SELECT day, toString(signal), toString(reason), toUInt64(0), toUInt64(0), toUInt64(0), toUInt64(0), sum(items), sum(bytes)
    FROM ${queryTable(deps.schema, 'usage_rejected_daily')} WHERE ${where} GROUP BY day, signal, reason`;
  return statement.finish(sql);
}

/** Totals and one entry per period. */
export async function queryUsage(
  deps: RouteDeps,
  scan: TenantScan,
  periods: readonly Period[],
): Promise<Result<UsageCounts & { data: UsageEntry[] }, ApiError>> {
  const rows = await deps.runner.rows<DayRow>(usageSql(deps, scan, periods));
  if (!rows.ok) return rows;
  const totals = empty();
  const data: UsageEntry[] = periods.map((p) => ({ start: dayToMs(p.firstDay), end: dayToMs(p.endDay), ...empty() }));
  const entryOf = (day: string): UsageEntry | undefined => {
    const dayNumber = Date.parse(`${day}T00:00:00Z`) / 86_400_000;
    return data[periods.findIndex((p) => dayNumber >= p.firstDay && dayNumber < p.endDay)];
  };
  for (const row of rows.value) {
    const into = (counts: UsageCounts): void => {
      if (row.signal === '') add(counts, row);
      else addRejected(counts, row);
    };
    into(totals);
    const entry = entryOf(row.day);
    if (entry !== undefined) into(entry);
  }
  return { ok: true, value: { ...totals, data } };
}

/** The usage report a request asks for: the UTC days or months touching its range. */
export async function usageReport(deps: RouteDeps, caller: ScanCaller, q: UsageQuery): Promise<Result<UsageCounts & { data: UsageEntry[] }, ApiError>> {
  const range = resolveRange(q.startTime, q.endTime, deps.now());
  if (!range.ok) return range;
  const periods = periodsTouching(range.value.startNs, range.value.endNs, q.interval ?? 'day', maxUsagePeriods);
  if (periods === undefined) return fail(invalidRequest(`the range spans more than ${maxUsagePeriods} periods (days or months); narrow it`));
  return queryUsage(deps, TenantScan.open(deps, caller, 'usage'), periods);
}
