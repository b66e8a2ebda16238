// The series browser of Prometheus' API over a tenant's series: label names,
// one label's values, and the label sets of the series `match[]` selects, in
// a time window, all read from the tenant's cached series index (the same
// one the engine selects through, so a browser and a query see the same
// series); and metric metadata (type, help, unit) from remote write's
// metadata table and the OTLP rows' own description and unit.
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { RouteDeps } from '../../query/deps.ts';
import type { TenantScan } from '../../query/tenant-scan.ts';
import type { LabelMatcher, Labels } from './engine/sample-source.ts';
import { compareLabelSets, compareUtf8 } from './engine/label-order.ts';
import type { PromError } from './prom-envelope.ts';
import { fromApiError } from './prom-envelope.ts';
import { remoteWriteScope } from './remote-write-scope.ts';
import type { SeriesIndexCache } from './series-index.ts';
import { dayOf } from './series-index.ts';
import { applyMatchers } from './series-matchers.ts';
import type { StoredMetric } from './series-names.ts';
import { exposedNames, otlpMetricName, prometheusType } from './series-names.ts';

/** Most names, values or series one request returns (more: truncated, with a warning). */
export const maxListed = 10_000;

export interface Window {
  /** The request's scan of its tenant's metrics. */
  readonly scan: TenantScan;
  readonly fromMs: number;
  readonly toMs: number;
  readonly visibleFromMs: number;
}

export interface Listed<T> {
  readonly items: T[];
  readonly warnings: string[];
}

function truncated<T>(items: T[], limit: number): Listed<T> {
  const most = Math.min(limit, maxListed);
  if (items.length <= most) return { items, warnings: [] };
  return { items: items.slice(0, most), warnings: [`results truncated due to limit (${most})`] };
}

/**
 * The label sets of the tenant's series with rows on the window's days
 * (the index's resolution), past retention excluded, that any selector
 * matches (no selector: every series).
 */
async function selected(
  deps: RouteDeps,
  index: SeriesIndexCache,
  w: Window,
  selectors: readonly (readonly LabelMatcher[])[],
): Promise<Result<Labels[], PromError>> {
  const fromDay = dayOf(Math.max(w.fromMs, w.visibleFromMs));
  const toDay = dayOf(w.toMs);
  const tenant = await index.get(deps.runner, deps.schema, w.scan, dayOf(w.visibleFromMs));
  if (!tenant.ok) return fail(fromApiError(tenant.error));
  const live = [...tenant.value.byName().values()].flat().filter((c) => c.s.maxDay >= fromDay && c.s.minDay <= toDay);
  const out = new Map<string, Labels>();
  for (const matchers of selectors.length === 0 ? [[]] : selectors) {
    const kept = await applyMatchers(deps.runner, w.scan, live, (c) => c.e.labels, matchers, tenant.value.regexMemo);
    if (!kept.ok) return kept;
    for (const c of kept.value) out.set(c.e.key, c.e.labels);
  }
  return ok([...out.values()]);
}

const sortedUnique = (values: Iterable<string>): string[] => [...new Set(values)].sort(compareUtf8);

/** GET /api/v1/labels. */
export async function labelNames(
  deps: RouteDeps,
  index: SeriesIndexCache,
  w: Window,
  selectors: readonly (readonly LabelMatcher[])[],
  limit: number,
): Promise<Result<Listed<string>, PromError>> {
  const sets = await selected(deps, index, w, selectors);
  return sets.ok ? ok(truncated(sortedUnique(sets.value.flatMap((l) => l.map(([k]) => k))), limit)) : sets;
}

/** GET /api/v1/label/:name/values. */
export async function labelValues(
  deps: RouteDeps,
  index: SeriesIndexCache,
  w: Window,
  name: string,
  selectors: readonly (readonly LabelMatcher[])[],
  limit: number,
): Promise<Result<Listed<string>, PromError>> {
  const sets = await selected(deps, index, w, selectors);
  if (!sets.ok) return sets;
  const values = sets.value.flatMap((l) => l.filter(([k, v]) => k === name && v !== '').map(([, v]) => v));
  return ok(truncated(sortedUnique(values), limit));
}

/** GET /api/v1/series. */
export async function seriesSets(
  deps: RouteDeps,
  index: SeriesIndexCache,
  w: Window,
  selectors: readonly (readonly LabelMatcher[])[],
  limit: number,
): Promise<Result<Listed<Record<string, string>>, PromError>> {
  const sets = await selected(deps, index, w, selectors);
  if (!sets.ok) return sets;
  return ok(
    truncated(
      sets.value.sort(compareLabelSets).map((l) => Object.fromEntries(l)),
      limit,
    ),
  );
}

export interface MetadataEntry {
  readonly type: string;
  readonly help: string;
  readonly unit: string;
}

interface OtlpMetadataRow {
  name: string;
  type: StoredMetric['type'];
  unit: string;
  monotonic: number;
  temporality: StoredMetric['temporality'];
  description: string;
}
interface RemoteMetadataRow {
  metric_family: string;
  type: string;
  help: string;
  unit: string;
}

/** GET /api/v1/metadata: remote write's metadata, then OTLP metrics' (type, description, unit) under their Prometheus names. */
export async function metadata(
  deps: RouteDeps,
  scan: TenantScan,
  fromMs: number,
  toMs: number,
  metric: string | undefined,
  limit: number,
): Promise<Result<Record<string, MetadataEntry[]>, PromError>> {
  const p = scan.statement();
  const remote = await deps.runner.rows<RemoteMetadataRow>(
    p.finish(`SELECT metric_family, type, help, unit FROM ${queryTable(deps.schema, 'prometheus_metadata')} FINAL
    WHERE ${p.tenantIs()} ORDER BY metric_family LIMIT ${maxListed}`),
  );
  if (!remote.ok) return fail(fromApiError(remote.error));
  const q = scan.statement();
  const otlp = await deps.runner.rows<OtlpMetadataRow>(
    q.finish(`SELECT DISTINCT metric_name AS name, toString(metric_type) AS type, unit, toUInt8(is_monotonic) AS monotonic,
      toString(temporality) AS temporality, description
    FROM ${queryTable(deps.schema, 'metrics')}
    WHERE ${q.tenantIs()} AND scope_name != ${q.bind(remoteWriteScope, 'String')}
      AND timestamp >= fromUnixTimestamp64Milli(${q.bind(fromMs, 'Int64')}) AND timestamp <= fromUnixTimestamp64Milli(${q.bind(toMs, 'Int64')})
    LIMIT ${maxListed}`),
  );
  if (!otlp.ok) return fail(fromApiError(otlp.error));
  const out: Record<string, MetadataEntry[]> = {};
  const add = (name: string, entry: MetadataEntry): void => {
    if (metric !== undefined && metric !== '' && name !== metric) return;
    const entries = out[name] ?? [];
    if (!entries.some((e) => e.type === entry.type && e.help === entry.help && e.unit === entry.unit)) entries.push(entry);
    out[name] = entries;
  };
  for (const r of remote.value) add(r.metric_family, { type: r.type, help: r.help, unit: r.unit });
  for (const r of otlp.value) {
    const m: StoredMetric = { name: r.name, type: r.type, unit: r.unit, monotonic: r.monotonic === 1, temporality: r.temporality, remoteWrite: false };
    if (exposedNames(m).length > 0) add(otlpMetricName(m), { type: prometheusType(m), help: r.description, unit: r.unit });
  }
  const names = Object.keys(out).sort();
  const kept = limit > 0 ? names.slice(0, limit) : names;
  return ok(Object.fromEntries(kept.map((n) => [n, out[n] ?? []])));
}
