// Builds rows for the signal tables and writes them straight through the
// storage layer (the gateway is not a dependency of the API tests).
import type { Store } from '../../../../src/clickhouse/store.ts';
import { queryTable } from '../../../../src/clickhouse/schema/ddl.ts';

/** Unix ns → the DateTime64(9) text ClickHouse parses ('2026-11-22 10:00:00.123456789'). */
export function dateTime64(ns: bigint): string {
  const ms = Number(ns / 1_000_000n);
  const iso = new Date(ms).toISOString(); // 2026-11-22T10:00:00.123Z
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${fraction}`;
}

export const secondsNs = (s: number): bigint => BigInt(s) * 1_000_000_000n;

type Attrs = Record<string, string>;

export interface LogSpec {
  tenant: string;
  ns: bigint;
  logId: string;
  body?: string;
  traceId?: string;
  spanId?: string;
  severity?: number;
  service?: string;
  resource?: Attrs;
  scope?: Attrs;
  attrs?: Attrs;
}

export const logRow = (l: LogSpec): Record<string, unknown> => ({
  tenant_id: l.tenant,
  timestamp: dateTime64(l.ns),
  observed_timestamp: dateTime64(l.ns),
  log_id: l.logId,
  trace_id: l.traceId ?? '',
  span_id: l.spanId ?? '',
  severity_number: l.severity ?? 9,
  severity_text: '',
  service_name: l.service ?? 'svc',
  body: l.body ?? '',
  resource_attributes: l.resource ?? {},
  scope_attributes: l.scope ?? {},
  log_attributes: l.attrs ?? {},
});

export interface SpanSpec {
  tenant: string;
  ns: bigint;
  traceId: string;
  spanId: string;
  parent?: string;
  name?: string;
  kind?: string;
  service?: string;
  durationNs?: number;
  status?: string;
  message?: string;
  resource?: Attrs;
  scope?: Attrs;
  attrs?: Attrs;
}

export const spanRow = (s: SpanSpec): Record<string, unknown> => ({
  tenant_id: s.tenant,
  timestamp: dateTime64(s.ns),
  trace_id: s.traceId,
  span_id: s.spanId,
  parent_span_id: s.parent ?? '',
  span_name: s.name ?? 'op',
  span_kind: s.kind ?? 'SERVER',
  service_name: s.service ?? 'svc',
  duration_ns: s.durationNs ?? 1000,
  status_code: s.status ?? 'UNSET',
  status_message: s.message ?? '',
  resource_attributes: s.resource ?? {},
  scope_attributes: s.scope ?? {},
  span_attributes: s.attrs ?? {},
});

export interface MetricSpec {
  tenant: string;
  name: string;
  ns: bigint;
  type?: string;
  temporality?: string;
  monotonic?: boolean;
  unit?: string;
  description?: string;
  service?: string;
  resource?: Attrs;
  attrs?: Attrs;
  value?: number;
  count?: number;
  sum?: number;
  min?: number | null;
  max?: number | null;
  buckets?: number[];
  bounds?: number[];
  expScale?: number;
  expZero?: number;
  expPosOffset?: number;
  expPos?: number[];
  expNegOffset?: number;
  expNeg?: number[];
  quantiles?: number[];
  quantileValues?: number[];
}

export const metricRow = (m: MetricSpec): Record<string, unknown> => ({
  tenant_id: m.tenant,
  metric_name: m.name,
  metric_type: m.type ?? 'gauge',
  description: m.description ?? '',
  unit: m.unit ?? '',
  temporality: m.temporality ?? 'unspecified',
  is_monotonic: m.monotonic ?? false,
  service_name: m.service ?? 'svc',
  resource_attributes: m.resource ?? {},
  scope_attributes: {},
  attributes: m.attrs ?? {},
  start_timestamp: dateTime64(0n),
  timestamp: dateTime64(m.ns),
  value: m.value ?? 0,
  count: m.count ?? 0,
  sum: m.sum ?? 0,
  min: m.min ?? null,
  max: m.max ?? null,
  bucket_counts: m.buckets ?? [],
  explicit_bounds: m.bounds ?? [],
  exp_scale: m.expScale ?? 0,
  exp_zero_count: m.expZero ?? 0,
  exp_zero_threshold: 0,
  exp_positive_offset: m.expPosOffset ?? 0,
  exp_positive_bucket_counts: m.expPos ?? [],
  exp_negative_offset: m.expNegOffset ?? 0,
  exp_negative_bucket_counts: m.expNeg ?? [],
  quantiles: m.quantiles ?? [],
  quantile_values: m.quantileValues ?? [],
});

export async function insertRows(store: Store, table: 'logs' | 'spans' | 'metrics', values: readonly Record<string, unknown>[]): Promise<void> {
  if (values.length === 0) return;
  await store.client.insert({ table: queryTable(store, table), values: [...values], format: 'JSONEachRow' });
}
