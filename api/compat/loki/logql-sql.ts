// LogQL (the subset of logql-ast.ts) as ClickHouse SQL over the logs table:
// one WHERE term per matcher, line filter and label filter, one label map
// per pipeline stage, one subquery per range or vector aggregation. Every
// value from the query is a bound parameter.
import type { Grouping, LabelPredicate, LineFilter, LogSelector, Matcher, MetricExpr, Stage } from './logql-ast.ts';
import { jsonLabelsSql, labelLookupSql, logfmtLabelsSql, mergeParsedSql, metadataSql, streamLabelSql, streamLabelsSql } from './otlp-labels.ts';
import { labelMatchSql } from '../../query/label-match-sql.ts';
import type { SqlParams } from '../../query/sql-params.ts';
import { rawLabelColumns } from './row-labels.ts';

/** What every statement reads: one tenant's rows (its predicate, bound by the statement's TenantScan) in a window of Unix ns, `(after, until]` or `[from, before)`. */
export interface Scan {
  readonly table: string;
  readonly tenantIs: string;
}

/** A matcher over a label value expression; regexes are anchored as Loki anchors them. */
export function matchSql(params: SqlParams, value: string, m: Matcher): string {
  return labelMatchSql(params, 'loki', value, m.op, m.value);
}

/** A line filter over the body; RE2 un-anchored, as Loki's. */
function lineSql(params: SqlParams, f: LineFilter): string {
  const any = (term: (v: string) => string): string => (f.values.length === 1 ? term(f.values[0] ?? '') : `(${f.values.map(term).join(' OR ')})`);
  switch (f.op) {
    case '|=':
      return any((v) => `position(body, ${params.bind(v, 'String')}) > 0`);
    case '!=':
      return `NOT ${any((v) => `position(body, ${params.bind(v, 'String')}) > 0`)}`;
    case '|~':
      return any((v) => `match(body, ${params.bind(v, 'String')})`);
    case '!~':
      return `NOT ${any((v) => `match(body, ${params.bind(v, 'String')})`)}`;
  }
}

const numberOps: Readonly<Record<string, string>> = { '==': '=', '!=': '!=', '>': '>', '>=': '>=', '<': '<', '<=': '<=' };

/** A label filter; `value(name)` is the expression of a label's value ("" when absent, as Loki compares a missing label). */
function predicateSql(params: SqlParams, value: (name: string) => string, p: LabelPredicate): string {
  switch (p.kind) {
    case 'match':
      return matchSql(params, value(p.matcher.name), p.matcher);
    case 'number': {
      const number = `toFloat64OrNull(${value(p.name)})`;
      return `ifNull(${number} ${numberOps[p.op] ?? '='} ${params.bind(p.value, 'Float64')}, false)`;
    }
    case 'and':
      return `(${predicateSql(params, value, p.left)} AND ${predicateSql(params, value, p.right)})`;
    case 'or':
      return `(${predicateSql(params, value, p.left)} OR ${predicateSql(params, value, p.right)})`;
  }
}

const baseLabels = `mapConcat(${streamLabelsSql()}, ${metadataSql()})`;

/** Whether a pipeline keeps the row's own labels (no parser, no drop): its label filters then read single labels, not maps. */
export function keepsLabels(selector: LogSelector): boolean {
  return selector.stages.every((s) => s.kind === 'line' || s.kind === 'label');
}

/**
 * The WHERE terms and label-map columns of a selector's rows. Label filters
 * before the first parser read single labels (labelLookupSql); after it,
 * the label map of their stage. `labels` is each row's final label set,
 * `l0` its labels before the pipeline.
 */
export function selectorParts(params: SqlParams, scan: Scan, selector: LogSelector, window: string[]): { columns: string[]; where: string[] } {
  const where = [scan.tenantIs, ...window];
  const columns = [`${baseLabels} AS l0`];
  for (const m of selector.matchers) where.push(matchSql(params, streamLabelSql(m.name) ?? "''", m));
  let current = 'l0';
  selector.stages.forEach((stage: Stage, i) => {
    const next = `l${i + 1}`;
    const lookup =
      current === 'l0'
        ? (name: string): string => labelLookupSql(name, params.bind(name, 'String'), baseLabels)
        : (name: string): string => `${current}[${params.bind(name, 'String')}]`;
    switch (stage.kind) {
      case 'line':
        where.push(lineSql(params, stage.filter));
        return;
      case 'label':
        where.push(predicateSql(params, lookup, stage.predicate));
        return;
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

/** The rows of a log query with parsers: `[startNs, endNs)`, `limit` of them in the direction's order, labels built in SQL. */
export function logsSql(
  params: SqlParams,
  scan: Scan,
  selector: LogSelector,
  startNs: bigint,
  endNs: bigint,
  limit: number,
  direction: 'forward' | 'backward',
): string {
  const { columns, where } = selectorParts(params, scan, selector, [`timestamp >= ${ns(params, startNs)}`, `timestamp < ${ns(params, endNs)}`]);
  const order = direction === 'forward' ? 'ASC' : 'DESC';
  // Only what the answer needs leaves the store (not the pipeline's intermediate maps).
  return `SELECT toString(toUnixTimestamp64Nano(timestamp)) AS ts, body, labels, base_keys FROM (
  SELECT timestamp, body, ${columns.join(', ')}, mapKeys(l0) AS base_keys
  FROM ${scan.table}
  WHERE ${where.join('\n    AND ')}
  ORDER BY timestamp ${order} LIMIT ${params.bind(limit, 'UInt64')})
ORDER BY timestamp ${order}`;
}

/** The rows of a log query whose pipeline keeps the row's own labels, as stored columns: their labels are built in Node (row-labels.ts). */
export function rawLogsSql(
  params: SqlParams,
  scan: Scan,
  selector: LogSelector,
  startNs: bigint,
  endNs: bigint,
  limit: number,
  direction: 'forward' | 'backward',
): string {
  const { where } = selectorParts(params, scan, selector, [`timestamp >= ${ns(params, startNs)}`, `timestamp < ${ns(params, endNs)}`]);
  const order = direction === 'forward' ? 'ASC' : 'DESC';
  return `SELECT ${rawLabelColumns} FROM ${scan.table}
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
function rangeSql(params: SqlParams, scan: Scan, expr: MetricExpr & { kind: 'range' }, grid: Grid, only?: readonly string[]): string {
  const lastNs = grid.startNs + grid.stepNs * BigInt(grid.points - 1);
  const parts = selectorParts(params, scan, expr.selector, [
    `timestamp > ${ns(params, grid.startNs - expr.rangeNs)}`,
    `timestamp <= ${ns(params, lastNs)}`,
    ...(grid.notBeforeNs === undefined ? [] : [`timestamp >= ${ns(params, grid.notBeforeNs)}`]),
  ]);
  const { where } = parts;
  // With `only`, rows group by the kept labels' values (plain strings) and the label map is built once per group.
  const kept = (only ?? []).map((n, i) => {
    const bound = params.bind(n, 'String');
    return { bound, expr: `${labelLookupSql(n, bound, baseLabels)} AS g${i}` };
  });
  const keys = only === undefined ? ['labels'] : kept.map((_, i) => `g${i}`);
  const columns = only === undefined ? parts.columns : kept.map((g) => g.expr);
  const start = params.bind(grid.startNs.toString(), 'Int64');
  const step = params.bind(grid.stepNs.toString(), 'Int64');
  const range = params.bind(expr.rangeNs.toString(), 'Int64');
  // Each row counts at every grid point t with t - range < ts <= t: k from ceil((ts-start)/step) to ceil((ts+range-start)/step) - 1.
  const first = `if(ts - ${start} <= 0, 0, intDiv(ts - ${start} + ${step} - 1, ${step}))`;
  const after = `least(${params.bind(grid.points, 'Int64')}, intDiv(ts + ${range} - ${start} + ${step} - 1, ${step}))`;
  // materialize(): a true division, as Loki's; ClickHouse turns division by a constant into multiplication by its inverse (9 / 300 ≠ 9 × (1/300)).
  const seconds = `materialize(${params.bind(Number(expr.rangeNs) / 1e9, 'Float64')})`;
  const value = {
    count_over_time: 'toFloat64(count())',
    rate: `count() / ${seconds}`,
    bytes_over_time: 'toFloat64(sum(length(body)))',
    bytes_rate: `sum(length(body)) / ${seconds}`,
  }[expr.fn];
  const list = (...items: string[]): string => items.filter((i) => i !== '').join(', ');
  const grouped = `SELECT ${list(...keys, 'k')}, ${value} AS v FROM (
  SELECT ${list(...keys, 'body')}, arrayJoin(range(toInt64(${first}), toInt64(${after}))) AS k FROM (
    SELECT ${list('toUnixTimestamp64Nano(timestamp) AS ts', 'body', ...columns)}
    FROM ${scan.table}
    WHERE ${where.join('\n      AND ')}))
GROUP BY ${list(...keys, 'k')}`;
  if (only === undefined) return grouped;
  const pairs = kept.flatMap((g, i) => [g.bound, `g${i}`]);
  const labels = pairs.length === 0 ? "CAST(map(), 'Map(String, String)')" : `mapSort(mapFilter((k, v) -> v != '', map(${pairs.join(', ')})))`;
  return `SELECT ${labels} AS labels, k, v FROM (${grouped})`;
}

/** Whether a pipeline's labels can be grouped before its maps are built: no parser, and no label filter after a drop. */
function groupsEarly(selector: LogSelector): boolean {
  const firstDrop = selector.stages.findIndex((st) => st.kind === 'drop');
  return selector.stages.every((st, i) => st.kind === 'line' || st.kind === 'drop' || (st.kind === 'label' && (firstDrop < 0 || i < firstDrop)));
}

/** The label map a grouping keeps. */
function groupedSql(params: SqlParams, grouping: Grouping | undefined): string {
  if (grouping === undefined) return 'map()';
  const names = params.bind(grouping.labels, 'Array(String)');
  return grouping.mode === 'by' ? `mapFilter((k, v) -> k IN ${names}, labels)` : `mapFilter((k, v) -> k NOT IN ${names}, labels)`;
}

/** A constant as Float64: ±Inf and NaN (vector(1e308) * 10) as the text ClickHouse reads, since a Float64 parameter cannot carry them. */
function constantSql(params: SqlParams, value: number): string {
  if (Number.isFinite(value)) return params.bind(value, 'Float64');
  return `toFloat64(${params.bind(Number.isNaN(value) ? 'nan' : value > 0 ? 'inf' : '-inf', 'String')})`;
}

/** A metric expression's rows: (labels Map(String, String), k grid index, v Float64). */
export function metricSql(params: SqlParams, scan: Scan, expr: MetricExpr, grid: Grid): string {
  if (expr.kind === 'constant')
    return `SELECT map() AS labels, k, ${constantSql(params, expr.value)} AS v FROM (SELECT arrayJoin(range(${params.bind(grid.points, 'UInt64')})) AS k)`;
  if (expr.kind === 'range') return rangeSql(params, scan, expr, grid);
  // sum by (…) straight over a range aggregation without parsers: the rows are grouped by the kept labels at once
  // (a sum of per-series counts is the count of their rows), so no row's whole label map is built.
  // A drop before the end only removes labels (Explore's volume query drops __error__): those are not kept.
  const pushdown =
    expr.fn === 'sum' && expr.inner.kind === 'range' && groupsEarly(expr.inner.selector) && expr.grouping?.mode !== 'without' ? expr.inner : undefined;
  const dropped = new Set(pushdown?.selector.stages.flatMap((st) => (st.kind === 'drop' ? st.names : [])) ?? []);
  const inner =
    pushdown !== undefined
      ? rangeSql(
          params,
          scan,
          pushdown,
          grid,
          (expr.grouping?.labels ?? []).filter((n) => !dropped.has(n)),
        )
      : metricSql(params, scan, expr.inner, grid);
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
