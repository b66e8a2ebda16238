// The Prometheus series of a tenant, in SQL over the metrics table: each
// stored row becomes one or more Prometheus samples (a histogram row its
// cumulative _bucket{le} samples, _sum and _count; a summary its {quantile}
// samples, _sum and _count) with the labels series-names.ts and
// docs/prometheus.md describe, filtered by a selector's matchers. The
// catalog of the tenant's distinct metrics is read first, so the name of
// every stored metric is decided in one place (series-names.ts) and passed
// to the SQL as bound arrays.
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { SchemaTarget } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import type { QueryRunner } from '../../v1/query/query-runner.ts';
import { SqlParams } from '../../v1/query/sql-params.ts';
import type { LabelMatcher } from './promql-ast.ts';
import { instanceResourceAttribute, jobResourceAttribute, remoteWriteScope } from './remote-write-scope.ts';
import type { StoredMetric } from './series-names.ts';
import { exposedNames, otlpMetricName } from './series-names.ts';

/** The tenant's stored metrics in a window, with the key the SQL finds each by. */
export interface Catalog {
  readonly metrics: readonly (StoredMetric & { readonly key: string })[];
}

/** What every statement over the tenant's series needs. */
export interface SourceContext {
  readonly schema: SchemaTarget;
  readonly params: SqlParams;
  readonly tenantId: string;
  readonly catalog: Catalog;
  /** No row before this (Unix ms) is read: the start of the tenant's metrics retention. */
  readonly visibleFromMs: number;
}

/** The catalog key of a stored row in SQL; catalogKey is the same in TypeScript. */
const keySql = "concat(metric_name, '\\x00', toString(metric_type), '\\x00', unit, '\\x00', toString(toUInt8(is_monotonic)), '\\x00', toString(temporality), '\\x00', toString(toUInt8(scope_name = {rw:String})))";

interface CatalogRow { name: string; type: StoredMetric['type']; unit: string; monotonic: number; temporality: StoredMetric['temporality']; rw: number }

/** keySql of a catalog row, built here rather than by the catalog's statement (which then took 0.8x the time: its DISTINCT no longer concatenates every row). */
const catalogKey = (r: CatalogRow): string => [r.name, r.type, r.unit, String(r.monotonic), r.temporality, String(r.rw)].join('\x00');

/** Reads the tenant's distinct stored metrics with rows in [fromMs, toMs]. */
export async function readCatalog(runner: QueryRunner, schema: SchemaTarget, tenantId: string, fromMs: number, toMs: number): Promise<Result<Catalog, ApiError>> {
  const params = new SqlParams();
  const sql = `SELECT DISTINCT metric_name AS name, toString(metric_type) AS type, unit,
      toUInt8(is_monotonic) AS monotonic, toString(temporality) AS temporality, toUInt8(scope_name = ${params.bind(remoteWriteScope, 'String')}) AS rw
    FROM ${queryTable(schema, 'metrics')}
    WHERE tenant_id = ${params.bind(tenantId, 'String')}
      AND timestamp >= fromUnixTimestamp64Milli(${params.bind(fromMs, 'Int64')}) AND timestamp <= fromUnixTimestamp64Milli(${params.bind(toMs, 'Int64')})`;
  const rows = await runner.rows<CatalogRow>(sql, params);
  if (!rows.ok) return rows;
  return ok({
    metrics: rows.value.map((r) => ({ key: catalogKey(r), name: r.name, type: r.type, unit: r.unit, monotonic: r.monotonic === 1, temporality: r.temporality, remoteWrite: r.rw === 1 })),
  });
}

/** The Prometheus base name of a stored metric ('' when it is not exposed). */
function baseName(m: StoredMetric): string {
  if (exposedNames(m).length === 0) return '';
  return m.remoteWrite ? m.name : otlpMetricName(m);
}

/** A label name sanitised as Prometheus' OTLP translator does (invalid characters → "_", "key_" before a digit, "key" before a single "_"). */
export const labelKeySql = (k: string): string =>
  `multiIf(match(replaceRegexpAll(${k}, '[^a-zA-Z0-9_]', '_'), '^[0-9]'), concat('key_', replaceRegexpAll(${k}, '[^a-zA-Z0-9_]', '_')),
    startsWith(${k}, '_') AND NOT startsWith(${k}, '__'), concat('key', replaceRegexpAll(${k}, '[^a-zA-Z0-9_]', '_')), replaceRegexpAll(${k}, '[^a-zA-Z0-9_]', '_'))`;

/** The value of label `name` in a labels array (absent: ""). */
export const labelValueSql = (labels: string, nameParam: string): string => `arrayFirst(p -> p.1 = ${nameParam}, ${labels}).2`;

/** The anchored RE2 pattern ClickHouse's match() should use for a Prometheus regex ("." not matching a newline, as in Prometheus 2). */
export const anchoredPattern = (re: string): string => `^(?-s:(?:${re}))$`;

/** A matcher as a SQL condition on `value`, the SQL of the label's value. */
function matcherSql(params: SqlParams, value: string, m: LabelMatcher): string {
  switch (m.op) {
    case '=': return `${value} = ${params.bind(m.value, 'String')}`;
    case '!=': return `${value} != ${params.bind(m.value, 'String')}`;
    case '=~': return `match(${value}, ${params.bind(anchoredPattern(m.value), 'String')})`;
    case '!~': return `NOT match(${value}, ${params.bind(anchoredPattern(m.value), 'String')})`;
  }
}

/** The catalog entries a selector may read: all exposed ones, or those exposing the one name an equality matcher asks for. */
function candidates(catalog: Catalog, matchers: readonly LabelMatcher[]): Catalog['metrics'] {
  const exposed = catalog.metrics.filter((m) => baseName(m) !== '');
  const named = matchers.find((m) => m.name === '__name__' && m.op === '=');
  if (named === undefined) return exposed;
  return exposed.filter((m) => exposedNames(m).some((e) => e.name === named.value));
}

/**
 * SELECT of (name, extra, own, t, v): every sample of the candidate metrics
 * in [fromMs, toMs], before its labels are put together: the Prometheus
 * name, the labels the series' kind adds (le, quantile) and the row's own
 * (job, instance, attributes).
 */
function rawSamplesSql(ctx: SourceContext, matchers: readonly LabelMatcher[], fromMs: number, toMs: number): string {
  const p = ctx.params;
  const metrics = candidates(ctx.catalog, matchers);
  const keys = p.bind(metrics.map((m) => m.key), 'Array(String)');
  const bases = p.bind(metrics.map(baseName), 'Array(String)');
  const names = p.bind([...new Set(metrics.map((m) => m.name))], 'Array(String)');
  const rw = p.bind(remoteWriteScope, 'String');
  const from = Math.max(fromMs, ctx.visibleFromMs);
  const attrs = 'arrayZip(mapKeys(attributes), mapValues(attributes))';
  const otlpAttrs = `arrayMap((k, v) -> (${labelKeySql('k')}, v), mapKeys(attributes), mapValues(attributes))`;
  const svc = `resource_attributes[${p.bind(jobResourceAttribute, 'String')}]`;
  const ns = "resource_attributes['service.namespace']";
  const instance = `('instance', resource_attributes[${p.bind(instanceResourceAttribute, 'String')}])`;
  // Derived job/instance first: the first of two equal label names wins.
  const rwOwn = `arrayConcat([('job', ${svc}), ${instance}], ${attrs})`;
  const otlpOwn = `arrayConcat([('job', if(${ns} != '', concat(${ns}, '/', ${svc}), ${svc})), ${instance}], ${otlpAttrs})`;
  // Only what the candidates need: a smaller statement plans faster (planning is most of a small query's time).
  const hasRw = metrics.some((m) => m.remoteWrite);
  const hasOtlp = metrics.some((m) => !m.remoteWrite);
  const own = hasRw && hasOtlp ? `if(scope_name = ${rw}, ${rwOwn}, ${otlpOwn})` : hasOtlp ? otlpOwn : rwOwn;
  const types = new Set(metrics.map((m) => m.type));
  const le = "arrayConcat(arrayMap(b -> toString(b), explicit_bounds), ['+Inf'])";
  const noLabels = "CAST([], 'Array(Tuple(String, String))')";
  const sumCount = `[(concat(base, '_sum'), ${noLabels}, sum), (concat(base, '_count'), ${noLabels}, toFloat64(count))]`;
  const branches: Readonly<Record<string, string>> = {
    value: `metric_type IN ('gauge', 'sum'), [(base, ${noLabels}, value)]`,
    // A histogram without buckets still has its +Inf bucket: the count.
    histogram: `metric_type = 'histogram', arrayConcat(if(empty(bucket_counts), [(concat(base, '_bucket'), [('le', '+Inf')], toFloat64(count))],
        arrayMap((c, b) -> (concat(base, '_bucket'), [('le', b)], toFloat64(c)), arrayCumSum(bucket_counts), arraySlice(${le}, 1, length(bucket_counts)))), ${sumCount})`,
    summary: `metric_type = 'summary', arrayConcat(arrayMap((q, qv) -> (base, [('quantile', toString(q))], qv), quantiles, quantile_values), ${sumCount})`,
    exponential_histogram: `metric_type = 'exponential_histogram', ${sumCount}`,
  };
  // The value branch also when nothing is wanted: it gives the empty result its type.
  const wanted = [
    ...(types.has('gauge') || types.has('sum') || types.size === 0 ? [branches['value']] : []),
    ...(['histogram', 'summary', 'exponential_histogram'] as const).filter((t) => types.has(t)).map((t) => branches[t]),
  ];
  const expansion = `multiIf(base = '', [], ${[...wanted, '[]'].join(',\n      ')})`;
  // A sample's __name__ is its name (never empty): matchers on it filter samples before any label set is put together.
  const byName = matchers.filter((m) => m.name === '__name__').map((m) => matcherSql(p, 'name', m));
  return `SELECT e.1 AS name, e.2 AS extra, own, t, e.3 AS v FROM (
      SELECT toUnixTimestamp64Milli(timestamp) AS t, ${own} AS own,
        transform(${keySql.replace('{rw:String}', rw)}, ${keys}, ${bases}, '') AS base,
        arrayJoin(${expansion}) AS e
      FROM ${queryTable(ctx.schema, 'metrics')}
      WHERE tenant_id = ${p.bind(ctx.tenantId, 'String')} AND metric_name IN ${names}
        AND timestamp >= fromUnixTimestamp64Milli(${p.bind(from, 'Int64')}) AND timestamp <= fromUnixTimestamp64Milli(${p.bind(toMs, 'Int64')}))${byName.length === 0 ? '' : ` WHERE ${byName.join(' AND ')}`}`;
}

/**
 * The label set of (name, extra, own): sorted by name, empty values dropped,
 * the first of two equal names kept (arrayEnumerateUniq numbers each name's
 * occurrences; a lambda looking the name up in the whole array, as before,
 * took ClickHouse about 10 ms more to plan and run per statement).
 */
const labelsSql = (): string => {
  const all = "arrayConcat([('__name__', name)], extra, own)";
  return `arraySort(arrayFilter((l, first) -> l.2 != '' AND first = 1, ${all}, arrayEnumerateUniq(tupleElement(${all}, 1))))`;
};

/** The matchers on labels other than __name__ (rawSamplesSql applies those), as a WHERE on the label set. */
function whereMatchers(ctx: SourceContext, matchers: readonly LabelMatcher[]): string {
  const onLabels = matchers.filter((m) => m.name !== '__name__').map((m) => matcherSql(ctx.params, labelValueSql('labels', ctx.params.bind(m.name, 'String')), m));
  return onLabels.length === 0 ? '' : ` WHERE ${onLabels.join(' AND ')}`;
}

/**
 * SELECT of (labels Array(Tuple(String, String)) sorted by name, ss): the
 * series the matchers select in [fromMs, toMs], ss being `shape` of the
 * series' samples (Array(Tuple(Int64 ms, Float64)), sorted by time).
 * Samples are grouped by their raw identity first, so labels are put
 * together and matched once per stream, not once per sample. `shape` is
 * applied in the same SELECT rather than one more around it: every level of
 * nesting costs ClickHouse's analyzer more than the one before.
 */
export function seriesSql(ctx: SourceContext, matchers: readonly LabelMatcher[], fromMs: number, toMs: number, shape: (sorted: string) => string = (sorted) => sorted): string {
  return `SELECT labels, ${shape('arraySort(x -> x.1, arrayFlatten(groupArray(s)))')} AS ss FROM (
      SELECT ${labelsSql()} AS labels, s FROM (
        SELECT name, extra, own, groupArray((t, v)) AS s FROM (${rawSamplesSql(ctx, matchers, fromMs, toMs)}) GROUP BY name, extra, own)${whereMatchers(ctx, matchers)})
    GROUP BY labels`;
}

/** SELECT of (labels): the distinct label sets of the series the matchers select in [fromMs, toMs]. */
export function labelSetsSql(ctx: SourceContext, matchers: readonly LabelMatcher[], fromMs: number, toMs: number): string {
  return `SELECT DISTINCT labels FROM (
      SELECT ${labelsSql()} AS labels FROM (
        SELECT DISTINCT name, extra, own FROM (${rawSamplesSql(ctx, matchers, fromMs, toMs)}))${whereMatchers(ctx, matchers)})`;
}
