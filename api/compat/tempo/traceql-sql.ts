// TraceQL conditions as ClickHouse SQL over one row of the spans table,
// every value a bound parameter. Attribute values are stored as text
// (gateway/convert/common/otlp-values.ts); Tempo compares typed values, so an
// integer literal matches only values written as integers, a float literal
// only non-integer numbers, a boolean only `true`/`false` (what Tempo answers
// for values the SDKs send typed; docs/tempo.md). Trace-level intrinsics
// (rootName, rootServiceName, traceDuration) read the columns of the
// per-trace join that `traceColumns` names.
import { anchoredPattern, labelMatchSql } from '../../query/label-match-sql.ts';
import { SqlParams } from '../../query/sql-params.ts';
import type { Condition, Field, Spansets, TraceQuery, Value } from './traceql-parser.ts';

export class UnsupportedComparison extends Error {}

/** The per-trace columns a query with trace-level intrinsics joins in. */
export const traceColumns = { rootName: 't_root_name', rootServiceName: 't_root_service', traceDuration: 't_duration_ns' } as const;

const intText = "match({v}, '^-?[0-9]+$')";
const floatText = "(isNotNull(toFloat64OrNull({v})) AND NOT match({v}, '^-?[0-9]+$') AND {v} NOT IN ('inf', '-inf', 'nan'))";
const boolText = "{v} IN ('true', 'false')";

/** The map column of an attribute scope. */
const mapOf = (scope: 'span' | 'resource'): string => (scope === 'span' ? 'span_attributes' : 'resource_attributes');

function orderOp(op: string): string {
  return op === '=' ? '=' : op;
}

/** A comparison of text `expr` (present when `has`) with a typed literal. */
function compareText(params: SqlParams, has: string, expr: string, op: string, value: Value): string {
  const typed = (template: string): string => template.replaceAll('{v}', expr);
  if (value.type === 'nil') {
    if (op === '!=') return has;
    if (op === '=') return `NOT ${has}`;
    throw new UnsupportedComparison(`the operator ${op} cannot compare with nil`);
  }
  if (op === '=~' || op === '!~') {
    if (value.type !== 'string') throw new UnsupportedComparison(`${op} needs a string pattern`);
    // Tempo anchors the pattern at both ends (Go regexp, RE2 syntax like ClickHouse's).
    const pattern = params.bind(anchoredPattern('tempo', value.value), 'String');
    return `(${has} AND ${op === '=~' ? '' : 'NOT '}match(${expr}, ${pattern}))`;
  }
  switch (value.type) {
    case 'string':
      return `(${has} AND NOT ${typed(intText)} AND NOT ${typed(floatText)} AND NOT ${typed(boolText)} AND ${expr} ${orderOp(op)} ${params.bind(value.value, 'String')})`;
    case 'int':
      return `(${has} AND ${typed(intText)} AND toInt64OrZero(${expr}) ${orderOp(op)} ${params.bind(value.value, 'Int64')})`;
    case 'float':
      return `(${has} AND ${typed(floatText)} AND toFloat64OrZero(${expr}) ${orderOp(op)} ${params.bind(value.value, 'Float64')})`;
    case 'bool':
      if (op !== '=' && op !== '!=') throw new UnsupportedComparison(`the operator ${op} cannot compare booleans`);
      return `(${has} AND ${typed(boolText)} AND ${expr} ${op} ${params.bind(String(value.value), 'String')})`;
    case 'duration':
      throw new UnsupportedComparison('an attribute cannot be compared with a duration');
    case 'keyword':
      throw new UnsupportedComparison(`an attribute cannot be compared with the keyword ${value.value}`);
  }
}

const statusValues = new Set(['error', 'ok', 'unset']);
const kindValues = new Set(['server', 'client', 'producer', 'consumer', 'internal', 'unspecified']);

function intrinsicSql(params: SqlParams, name: string, op: string, value: Value): string {
  switch (name) {
    case 'name':
    case 'statusMessage':
    case 'rootName':
    case 'rootServiceName': {
      const column =
        name === 'name'
          ? 'span_name'
          : name === 'statusMessage'
            ? 'status_message'
            : name === 'rootName'
              ? traceColumns.rootName
              : traceColumns.rootServiceName;
      if (value.type === 'nil') return op === '!=' ? `${column} != ''` : `${column} = ''`;
      if (value.type !== 'string') throw new UnsupportedComparison(`${name} is compared with strings`);
      return compareString(params, column, op, value.value);
    }
    case 'status':
    case 'kind': {
      const allowed = name === 'status' ? statusValues : kindValues;
      if (value.type !== 'keyword' || !allowed.has(value.value) || (op !== '=' && op !== '!=')) {
        throw new UnsupportedComparison(`${name} is compared with = or != and one of ${[...allowed].join(', ')}`);
      }
      const column = name === 'status' ? 'status_code' : 'span_kind';
      return `toString(${column}) ${op} ${params.bind(value.value.toUpperCase(), 'String')}`;
    }
    default: {
      // duration and traceDuration
      const column = name === 'duration' ? 'duration_ns' : traceColumns.traceDuration;
      if (value.type !== 'duration' || op === '=~' || op === '!~') throw new UnsupportedComparison(`${name} is compared with a duration such as 100ms`);
      return `${column} ${orderOp(op)} ${params.bind(value.ns.toString(), 'UInt64')}`;
    }
  }
}

function compareString(params: SqlParams, column: string, op: string, value: string): string {
  if (op === '=~' || op === '!~') return labelMatchSql(params, 'tempo', column, op, value);
  return `${column} ${orderOp(op)} ${params.bind(value, 'String')}`;
}

/** The SQL of one attribute of a scope: whether the span has it, and its text. */
function attributeParts(params: SqlParams, scope: 'span' | 'resource', name: string): { has: string; expr: string } {
  // The gateway writes the resource's service.name into its own column too: a LowCardinality column reads far less than the map.
  if (scope === 'resource' && name === 'service.name') return { has: "service_name != ''", expr: 'service_name' };
  const key = params.bind(name, 'String');
  return { has: `mapContains(${mapOf(scope)}, ${key})`, expr: `${mapOf(scope)}[${key}]` };
}

/** One condition of a spanset filter as SQL over a span row. */
export function conditionSql(params: SqlParams, c: Condition): string {
  switch (c.kind) {
    case 'true':
      return '1';
    case 'and':
      return `(${conditionSql(params, c.left)} AND ${conditionSql(params, c.right)})`;
    case 'or':
      return `(${conditionSql(params, c.left)} OR ${conditionSql(params, c.right)})`;
    case 'compare': {
      if (c.field.kind === 'intrinsic') return intrinsicSql(params, c.field.name, c.op, c.value);
      const { scope, name } = c.field;
      const one = (s: 'span' | 'resource'): string => {
        const p = attributeParts(params, s, name);
        return compareText(params, p.has, p.expr, c.op, c.value);
      };
      if (scope !== 'any') return one(scope);
      // An unscoped attribute matches a span attribute or a resource attribute of that name.
      if (c.op === '=' && c.value.type === 'nil') return `(${one('span')} AND ${one('resource')})`;
      return `(${one('span')} OR ${one('resource')})`;
    }
  }
}

/**
 * Why a query's comparisons cannot run (a field compared with a type it is
 * not compared with, e.g. `status = 5`), or undefined: checked before any
 * statement is built, so the builders never throw for a client's query.
 */
export function comparisonProblem(query: TraceQuery): string | undefined {
  const params = new SqlParams();
  try {
    for (const c of filtersOf(query.spansets)) conditionSql(params, c);
    return undefined;
  } catch (error) {
    if (error instanceof UnsupportedComparison) return `invalid TraceQL query: ${error.message}`;
    throw error;
  }
}

/** The spanset filters of an expression, left to right. */
export function filtersOf(s: Spansets): Condition[] {
  return s.kind === 'filter' ? [s.condition] : [...filtersOf(s.left), ...filtersOf(s.right)];
}

/** The expression over `c0..cN` (per-trace counts of spans matching each filter, left to right) that decides whether a trace matches. */
export function spansetsSql(s: Spansets, counter = { next: 0 }): string {
  if (s.kind === 'filter') return `(c${counter.next++} > 0)`;
  const left = spansetsSql(s.left, counter);
  const right = spansetsSql(s.right, counter);
  return `(${left} ${s.kind === 'and' ? 'AND' : 'OR'} ${right})`;
}

/** Every field a condition reads, left to right. */
export function fieldsOf(c: Condition): Field[] {
  if (c.kind === 'true') return [];
  if (c.kind === 'compare') return [c.field];
  return [...fieldsOf(c.left), ...fieldsOf(c.right)];
}

/** Whether a query reads a trace-level intrinsic (and so needs the per-trace join). */
export function needsTraceJoin(fields: readonly Field[]): boolean {
  return fields.some((f) => f.kind === 'intrinsic' && (f.name === 'rootName' || f.name === 'rootServiceName' || f.name === 'traceDuration'));
}
