// The series browser of Prometheus' API over a tenant's series: label names,
// one label's values, and the label sets of the series `match[]` selects, in
// a time window; and metric metadata (type, help, unit) from remote write's
// metadata table and the OTLP rows' own description and unit.
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { RouteDeps } from '../../v1/deps.ts';
import { SqlParams } from '../../v1/query/sql-params.ts';
import type { PromError } from './prom-envelope.ts';
import { fromApiError } from './prom-envelope.ts';
import type { LabelMatcher } from './promql-ast.ts';
import { remoteWriteScope } from './remote-write-scope.ts';
import type { SourceContext } from './series-source.ts';
import { labelSetsSql, readCatalog } from './series-source.ts';
import type { StoredMetric } from './series-names.ts';
import { exposedNames, otlpMetricName, prometheusType } from './series-names.ts';

/** Most names, values or series one request returns (more: truncated, with a warning). */
export const maxListed = 10_000;

export interface Window {
  readonly tenantId: string;
  readonly fromMs: number;
  readonly toMs: number;
  readonly visibleFromMs: number;
}

export interface Listed<T> { readonly items: T[]; readonly warnings: string[] }

async function context(deps: RouteDeps, w: Window): Promise<Result<SourceContext, PromError>> {
  const fromMs = Math.max(w.fromMs, w.visibleFromMs);
  const catalog = await readCatalog(deps.runner, deps.schema, w.tenantId, fromMs, w.toMs);
  if (!catalog.ok) return fail(fromApiError(catalog.error));
  return ok({ schema: deps.schema, params: new SqlParams(), tenantId: w.tenantId, catalog: catalog.value, visibleFromMs: w.visibleFromMs });
}

/** The samples of every selector (no selector: every series), as one relation. */
function unionOf(ctx: SourceContext, w: Window, selectors: readonly (readonly LabelMatcher[])[]): string {
  const sets = selectors.length === 0 ? [[]] : selectors;
  return sets.map((m) => `SELECT labels FROM (${labelSetsSql(ctx, m, w.fromMs, w.toMs)})`).join('\nUNION ALL\n');
}

function truncated<T>(items: T[], limit: number): Listed<T> {
  if (items.length <= limit) return { items, warnings: [] };
  return { items: items.slice(0, limit), warnings: [`results truncated due to limit (${limit})`] };
}

async function list<T>(deps: RouteDeps, w: Window, build: (ctx: SourceContext) => string, limit: number, read: (row: Record<string, unknown>) => T): Promise<Result<Listed<T>, PromError>> {
  const ctx = await context(deps, w);
  if (!ctx.ok) return ctx;
  const rows = await deps.runner.manyRows<Record<string, unknown>>(`${build(ctx.value)} LIMIT ${Math.min(limit, maxListed) + 1}`, ctx.value.params);
  if (!rows.ok) return fail(fromApiError(rows.error));
  return ok(truncated(rows.value.map(read), Math.min(limit, maxListed)));
}

/** GET /api/v1/labels. */
export function labelNames(deps: RouteDeps, w: Window, selectors: readonly (readonly LabelMatcher[])[], limit: number): Promise<Result<Listed<string>, PromError>> {
  return list(deps, w, (ctx) => `SELECT DISTINCT arrayJoin(labels).1 AS name FROM (${unionOf(ctx, w, selectors)}) ORDER BY name`, limit, (r) => String(r['name']));
}

/** The metric names of the tenant's window from its catalog alone (what Grafana's metric browser asks first). */
async function catalogNames(deps: RouteDeps, w: Window, limit: number): Promise<Result<Listed<string>, PromError>> {
  const ctx = await context(deps, w);
  if (!ctx.ok) return ctx;
  const names = [...new Set(ctx.value.catalog.metrics.flatMap((m) => exposedNames(m).map((e) => e.name)))].sort();
  return ok(truncated(names, Math.min(limit, maxListed)));
}

/** GET /api/v1/label/:name/values. */
export function labelValues(deps: RouteDeps, w: Window, name: string, selectors: readonly (readonly LabelMatcher[])[], limit: number): Promise<Result<Listed<string>, PromError>> {
  if (name === '__name__' && selectors.length === 0) return catalogNames(deps, w, limit);
  return list(deps, w, (ctx) => {
    const n = ctx.params.bind(name, 'String');
    return `SELECT DISTINCT arrayFirst(p -> p.1 = ${n}, labels).2 AS value FROM (${unionOf(ctx, w, selectors)}) WHERE value != '' ORDER BY value`;
  }, limit, (r) => String(r['value']));
}

/** GET /api/v1/series. */
export function seriesSets(deps: RouteDeps, w: Window, selectors: readonly (readonly LabelMatcher[])[], limit: number): Promise<Result<Listed<Record<string, string>>, PromError>> {
  return list(deps, w, (ctx) => `SELECT DISTINCT labels FROM (${unionOf(ctx, w, selectors)}) ORDER BY labels`, limit, (r) => {
    const out: Record<string, string> = {};
    for (const pair of r['labels'] as unknown[]) {
      const [k, v] = (Array.isArray(pair) ? pair : Object.values(pair as Record<string, string>)) as [string, string];
      out[k] = v;
    }
    return out;
  });
}

export interface MetadataEntry { readonly type: string; readonly help: string; readonly unit: string }

interface OtlpMetadataRow { name: string; type: StoredMetric['type']; unit: string; monotonic: number; temporality: StoredMetric['temporality']; description: string }
interface RemoteMetadataRow { metric_family: string; type: string; help: string; unit: string }

/** GET /api/v1/metadata: remote write's metadata, then OTLP metrics' (type, description, unit) under their Prometheus names. */
export async function metadata(deps: RouteDeps, tenantId: string, fromMs: number, toMs: number, metric: string | undefined, limit: number): Promise<Result<Record<string, MetadataEntry[]>, PromError>> {
  const p = new SqlParams();
  const remote = await deps.runner.rows<RemoteMetadataRow>(`SELECT metric_family, type, help, unit FROM ${queryTable(deps.schema, 'prometheus_metadata')} FINAL
    WHERE tenant_id = ${p.bind(tenantId, 'String')} ORDER BY metric_family LIMIT ${maxListed}`, p);
  if (!remote.ok) return fail(fromApiError(remote.error));
  const q = new SqlParams();
  const otlp = await deps.runner.rows<OtlpMetadataRow>(`SELECT DISTINCT metric_name AS name, toString(metric_type) AS type, unit, toUInt8(is_monotonic) AS monotonic,
      toString(temporality) AS temporality, description
    FROM ${queryTable(deps.schema, 'metrics')}
    WHERE tenant_id = ${q.bind(tenantId, 'String')} AND scope_name != ${q.bind(remoteWriteScope, 'String')}
      AND timestamp >= fromUnixTimestamp64Milli(${q.bind(fromMs, 'Int64')}) AND timestamp <= fromUnixTimestamp64Milli(${q.bind(toMs, 'Int64')})
    LIMIT ${maxListed}`, q);
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
