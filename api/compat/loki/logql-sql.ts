// LogQL (the subset of logql-ast.ts) as ClickHouse SQL over the logs table:
// one WHERE term per matcher, line filter and label filter, one label map
// per pipeline stage, one subquery per range or vector aggregation. Every
// value from the query is a bound parameter.
import type { Grouping, LabelPredicate, LineFilter, LogSelector, Matcher, MetricExpr, Stage } from './logql-ast.ts';
import { jsonLabelsSql, logfmtLabelsSql, mergeParsedSql, metadataSql, streamLabelSql, streamLabelsSql } from './otlp-labels.ts';
import type { SqlParams } from '../../v1/query/sql-params.ts';

/** What every statement reads: one tenant's rows in a window of Unix ns, `(after, until]` or `[from, before)`. */
export interface Scan {
  readonly table: string;
  readonly tenantId: string;
}

/** A matcher over a label value expression; regexes are anchored as Loki anchors them. */
function matchSql(params: SqlParams, value: string, m: Matcher): string {
  switch (m.op) {
    case '=': return `${value} = ${params.bind(m.value, 'String')}`;
    case '!=': return `${value} != ${params.bind(m.value, 'String')}`;
    case '=~': return `match(${value}, ${params.bind(`^(?:${m.value})$`, 'String')})`;
    case '!~': return `NOT match(${value}, ${params.bind(`^(?:${m.value})$`, 'String')})`;
  }
}

/** A line filter over the body; RE2 un-anchored, as Loki's. */
function lineSql(params: SqlParams, f: LineFilter): string {
  const any = (term: (v: string) => string): string => f.values.length === 1 ? term(f.values[0] ?? '') : `(${f.values.map(term).join(' OR ')})`;
  switch (f.op) {
    case '|=': return any((v) => `position(body, ${params.bind(v, 'String')}) > 0`);
    case '!=': return `NOT ${any((v) => `position(body, ${params.bind(v, 'String')}) > 0`)}`;
    case '|~': return any((v) => `match(body, ${params.bind(v, 'String')})`);
    case '!~': return `NOT ${any((v) => `match(body, ${params.bind(v, 'String')})`)}`;
  }
}

const numberOps: Readonly<Record<string, string>> = { '==': '=', '!=': '!=', '>': '>', '>=': '>=', '<': '<', '<=': '<=' };

/** A label filter over the label map `labels`: a missing label is "" for matchers and fails numeric comparisons. */
function predicateSql(params: SqlParams, labels: string, p: LabelPredicate): string {
  switch (p.kind) {
    case 'match': return matchSql(params, `${labels}[${params.bind(p.matcher.name, 'String')}]`, p.matcher);
    case 'number': {
      const value = `toFloat64OrNull(${labels}[${params.bind(p.name, 'String')}])`;
      return `ifNull(${value} ${numberOps[p.op] ?? '='} ${params.bind(p.value, 'Float64')}, false)`;
    }
    case 'and': return `(${predicateSql(params, labels, p.left)} AND ${predicateSql(params, labels, p.right)})`;
    case 'or': return `(${predicateSql(params, labels, p.left)} OR ${predicateSql(params, labels, p.right)})`;
  }
}

/** The SELECT list and WHERE terms of a selector's rows: `labels` is the final label map of each row. */
export function selectorParts(params: SqlParams, scan: Scan, selector: LogSelector, window: string[]): { columns: string[]; where: string[] } {
  const where = [`tenant_id = ${params.bind(scan.tenantId, 'String')}`, ...window];
  const columns = [`mapConcat(${streamLabelsSql()}, ${metadataSql()}) AS l0`];
  for (const m of selector.matchers) where.push(matchSql(params, streamLabelSql(m.name) ?? "''", m));
  let current = 'l0';
  selector.stages.forEach((stage: Stage, i) => {
    const next = `l${i + 1}`;
    switch (stage.kind) {
      case 'line': where.push(lineSql(params, stage.filter)); return;
      case 'label': where.push(predicateSql(params, current, stage.predicate)); return;
      case 'parser':
        columns.push(`${mergeParsedSql(current, stage.parser === 'json' ? jsonLabelsSql() : logfmtLabelsSql())} AS ${next}`);
        break;
      case 'drop':
        columns.push(`mapFilter((k, v) -> k NOT IN ${params.bind(stage.names, 'Array(String)')}, ${current}) AS ${next}`);
        break;
    }
    current = next;
  });
  columns.push(`mapSort(mapFilter((k, v) -> v != '', ${current})) AS labels`);
  return { columns, where };
}

const ns = (params: SqlParams, value: bigint): string => `fromUnixTimestamp64Nano(toInt64(${params.bind(value.toString(), 'Int64')}))`;

/** The rows of a log query: `[startNs, endNs)`, `limit` of them in the direction's order. */
export function logsSql(params: SqlParams, scan: Scan, selector: LogSelector, startNs: bigint, endNs: bigint, limit: number, direction: 'forward' | 'backward'): string {
  const { columns, where } = selectorParts(params, scan, selector, [`timestamp >= ${ns(params, startNs)}`, `timestamp < ${ns(params, endNs)}`]);
  const order = direction === 'forward' ? 'ASC' : 'DESC';
  return `SELECT toString(toUnixTimestamp64Nano(timestamp)) AS ts, body, ${columns.join(', ')}, mapKeys(l0) AS base_keys
FROM ${scan.table}
WHERE ${where.join('\n  AND ')}
ORDER BY timestamp ${order} LIMIT ${params.bind(limit, 'UInt64')}`;
}

/** The evaluation grid of a metric query: points start + k·step for k in [0, points). */
export interface Grid {
  readonly startNs: bigint;
  readonly stepNs: bigint;
  readonly points: number;
  /** Rows before this are not read (the tenant's retention), whatever the ranges reach back to. */
  readonly notBeforeNs?: bigint;
}

/** A range aggregation: per label set and grid point k, the value over (t_k - range, t_k]. */
function rangeSql(params: SqlParams, scan: Scan, expr: MetricExpr & { kind: 'range' }, grid: Grid): string {
  const lastNs = grid.startNs + grid.stepNs * BigInt(grid.points - 1);
  const { columns, where } = selectorParts(params, scan, expr.selector, [
    `timestamp > ${ns(params, grid.startNs - expr.rangeNs)}`, `timestamp <= ${ns(params, lastNs)}`,
    ...(grid.notBeforeNs === undefined ? [] : [`timestamp >= ${ns(params, grid.notBeforeNs)}`]),
  ]);
  const start = params.bind(grid.startNs.toString(), 'Int64');
  const step = params.bind(grid.stepNs.toString(), 'Int64');
  const range = params.bind(expr.rangeNs.toString(), 'Int64');
  // Each row counts at every grid point t with t - range < ts <= t: k from ceil((ts-start)/step) to ceil((ts+range-start)/step) - 1.
  const first = `if(ts - ${start} <= 0, 0, intDiv(ts - ${start} + ${step} - 1, ${step}))`;
  const after = `least(${params.bind(grid.points, 'Int64')}, intDiv(ts + ${range} - ${start} + ${step} - 1, ${step}))`;
  // materialize(): a true division, as Loki's; ClickHouse turns division by a constant into multiplication by its inverse (9 / 300 ≠ 9 × (1/300)).
  const seconds = `materialize(${params.bind(Number(expr.rangeNs) / 1e9, 'Float64')})`;
  const value = { count_over_time: 'toFloat64(count())', rate: `count() / ${seconds}`, bytes_over_time: 'toFloat64(sum(length(body)))', bytes_rate: `sum(length(body)) / ${seconds}` }[expr.fn];
  return `SELECT labels, k, ${value} AS v FROM (
  SELECT labels, body, arrayJoin(range(toInt64(${first}), toInt64(${after}))) AS k FROM (
    SELECT toUnixTimestamp64Nano(timestamp) AS ts, body, ${columns.join(', ')}
    FROM ${scan.table}
    WHERE ${where.join('\n      AND ')}))
GROUP BY labels, k`;
}

/** The label map a grouping keeps. */
function groupedSql(params: SqlParams, grouping: Grouping | undefined): string {
  if (grouping === undefined) return 'map()';
  const names = params.bind(grouping.labels, 'Array(String)');
  return grouping.mode === 'by' ? `mapFilter((k, v) -> k IN ${names}, labels)` : `mapFilter((k, v) -> k NOT IN ${names}, labels)`;
}

/** A metric expression's rows: (labels Map(String, String), k grid index, v Float64). */
export function metricSql(params: SqlParams, scan: Scan, expr: MetricExpr, grid: Grid): string {
  if (expr.kind === 'constant') return `SELECT map() AS labels, k, ${params.bind(expr.value, 'Float64')} AS v FROM (SELECT arrayJoin(range(${params.bind(grid.points, 'UInt64')})) AS k)`;
  if (expr.kind === 'range') return rangeSql(params, scan, expr, grid);
  const inner = metricSql(params, scan, expr.inner, grid);
  const group = groupedSql(params, expr.grouping);
  if (expr.fn === 'topk') {
    return `SELECT labels, k, v FROM (
  SELECT labels, k, v, row_number() OVER (PARTITION BY k, ${group} ORDER BY v DESC) AS rank FROM (${inner}))
WHERE rank <= ${params.bind(expr.k ?? 1, 'UInt64')}`;
  }
  // Compensated summation, as Prometheus's engine (which Loki's follows) sums.
  const aggregate = { sum: 'sumKahan(v)', avg: 'sumKahan(v) / count()', min: 'min(v)', max: 'max(v)', count: 'toFloat64(count())' }[expr.fn];
  // New names inside, so the aggregate's alias never shadows the column it reads (ClickHouse resolves aliases first).
  return `SELECT grouped AS labels, k, value AS v FROM (SELECT ${group} AS grouped, k, ${aggregate} AS value FROM (${inner}) GROUP BY grouped, k)`;
}
