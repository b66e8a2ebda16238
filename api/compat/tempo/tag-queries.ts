// Tempo's tag lookups over the spans table: tag names (v1 flat, v2 by
// scope) and the values of one tag (v1 strings, v2 typed), optionally only
// from spans a TraceQL query matches (`q=`, as Grafana's query builder asks
// for the values that fit the filters already chosen).
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import type { SqlParams } from '../../query/sql-params.ts';
import type { ScanStatement, TenantScan } from '../../query/tenant-scan.ts';
import type { TimeRange } from '../../query/time-range.ts';
import type { RouteDeps } from '../../query/deps.ts';
import { typedValue } from './otlp-json.ts';
import type { Condition, TraceQuery } from './traceql-parser.ts';
import { conditionSql, filtersOf, needsTraceJoin, fieldsOf } from './traceql-sql.ts';

/** The intrinsics this API runs (traceql-parser.ts), as Tempo lists them under the "intrinsic" scope. */
export const intrinsicTags = [
  'duration',
  'kind',
  'name',
  'rootName',
  'rootServiceName',
  'span:duration',
  'span:kind',
  'span:name',
  'span:status',
  'span:statusMessage',
  'status',
  'statusMessage',
  'trace:duration',
  'trace:rootName',
  'trace:rootService',
  'traceDuration',
];

/** Tempo's fixed keyword values of status and kind. */
export const keywordValues: Readonly<Record<string, readonly string[]>> = {
  status: ['unset', 'ok', 'error'],
  kind: ['server', 'producer', 'consumer', 'internal', 'unspecified', 'client'],
};

/** Most distinct values one tag-values request returns. */
export const maxTagValues = 10_000;

function windowSql(statement: ScanStatement, range: TimeRange): string {
  return `${statement.tenantIs()}
      AND timestamp >= fromUnixTimestamp64Nano(${statement.bind(range.startNs.toString(), 'Int64')})
      AND timestamp < fromUnixTimestamp64Nano(${statement.bind(range.endNs.toString(), 'Int64')})`;
}

/** The span and resource attribute names in the window, sorted. */
export async function tagNames(deps: RouteDeps, scan: TenantScan, range: TimeRange): Promise<Result<{ span: string[]; resource: string[] }, ApiError>> {
  const statement = scan.statement();
  const sql = `SELECT arraySort(groupUniqArrayArray(mapKeys(span_attributes))) AS span, arraySort(groupUniqArrayArray(mapKeys(resource_attributes))) AS resource
    FROM ${queryTable(deps.schema, 'spans')} WHERE ${windowSql(statement, range)}`;
  const rows = await deps.runner.rows<{ span: string[]; resource: string[] }>(statement.finish(sql));
  if (!rows.ok) return rows;
  return ok(rows.value[0] ?? { span: [], resource: [] });
}

/** A tag of the values endpoints: a scoped attribute or an intrinsic (v2 names; v1 names are unscoped attributes). */
export type Tag =
  { readonly kind: 'attribute'; readonly scope: 'span' | 'resource' | 'any'; readonly name: string } | { readonly kind: 'intrinsic'; readonly name: string };

/** Reads a v2 tag name (`span.x`, `resource.x`, `.x`, an intrinsic, or a bare attribute name). */
export function parseTag(raw: string): Tag {
  if (raw.startsWith('span.')) return { kind: 'attribute', scope: 'span', name: raw.slice(5) };
  if (raw.startsWith('resource.')) return { kind: 'attribute', scope: 'resource', name: raw.slice(9) };
  if (raw.startsWith('.')) return { kind: 'attribute', scope: 'any', name: raw.slice(1) };
  if (intrinsicTags.includes(raw))
    return {
      kind: 'intrinsic',
      name: raw
        .replace(/^(span|trace):/, '')
        .replace(/^rootService$/, 'rootServiceName')
        .replace(/^duration$/, 'duration'),
    };
  return { kind: 'attribute', scope: 'any', name: raw };
}

/** The SQL of a tag's value on a span row: [has, value]. Undefined for intrinsics without stored values (durations). */
function valueSql(params: SqlParams, tag: Tag): { has: string; value: string } | undefined {
  if (tag.kind === 'intrinsic') {
    switch (tag.name) {
      case 'name':
        return { has: '1', value: 'span_name' };
      case 'statusMessage':
        return { has: "status_message != ''", value: 'status_message' };
      case 'rootName':
        return { has: "parent_span_id = ''", value: 'span_name' };
      case 'rootServiceName':
        return { has: "parent_span_id = ''", value: 'service_name' };
      default:
        return undefined;
    }
  }
  const key = params.bind(tag.name, 'String');
  if (tag.scope === 'span') return { has: `mapContains(span_attributes, ${key})`, value: `span_attributes[${key}]` };
  if (tag.scope === 'resource') return { has: `mapContains(resource_attributes, ${key})`, value: `resource_attributes[${key}]` };
  return {
    has: `(mapContains(span_attributes, ${key}) OR mapContains(resource_attributes, ${key}))`,
    value: `arrayJoin(arrayConcat(if(mapContains(span_attributes, ${key}), [span_attributes[${key}]], []), if(mapContains(resource_attributes, ${key}), [resource_attributes[${key}]], [])))`,
  };
}

/** At most `limit` (≤ maxTagValues) distinct values of a tag in the window (of spans matching `filter` when given), as Tempo's v2 typed values. */
export async function tagValues(
  deps: RouteDeps,
  scan: TenantScan,
  tag: Tag,
  range: TimeRange,
  filter: TraceQuery | undefined,
  limit = maxTagValues,
): Promise<Result<{ type: string; value: string }[], ApiError>> {
  const keywords = tag.kind === 'intrinsic' ? keywordValues[tag.name] : undefined;
  if (keywords !== undefined) return ok(keywords.slice(0, limit).map((value) => ({ type: 'keyword', value })));
  const statement = scan.statement();
  const { params } = statement;
  const picked = valueSql(params, tag);
  if (picked === undefined) return ok([]);
  const conditions: Condition[] = filter === undefined ? [] : filtersOf(filter.spansets);
  // A filter on trace-level intrinsics would need the per-trace join; tag values ignore it, as a hint that cannot exclude a value wrongly.
  const usable = conditions.filter((c) => !needsTraceJoin(fieldsOf(c)));
  const where = [windowSql(statement, range), picked.has, ...(usable.length === 0 ? [] : [`(${usable.map((c) => conditionSql(params, c)).join(' OR ')})`])];
  const sql = `SELECT DISTINCT ${picked.value} AS v FROM ${queryTable(deps.schema, 'spans')}
    WHERE ${where.join(' AND ')}
    LIMIT ${params.bind(Math.min(limit, maxTagValues), 'UInt64')}`;
  const rows = await deps.runner.rows<{ v: string }>(statement.finish(sql));
  if (!rows.ok) return rows;
  const stringTyped = tag.kind === 'intrinsic';
  return ok(rows.value.map(({ v }) => ({ type: stringTyped ? 'string' : typeName(v), value: v })));
}

function typeName(text: string): string {
  const typed = typedValue(text);
  return 'intValue' in typed ? 'int' : 'doubleValue' in typed ? 'float' : 'boolValue' in typed ? 'bool' : 'string';
}
