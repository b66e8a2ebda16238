// Label matchers as ClickHouse SQL, for every read API: the value is always a
// bound parameter, and a regex is anchored to the whole value, each dialect
// its own way. Prometheus compiles `^(?s:re)$` (a dot matches a newline too);
// Loki's label matchers and TraceQL's =~ are anchored `^(?:re)$`. LogQL line
// filters are not label matchers: they match anywhere (logql-sql.ts).
import type { SqlParams } from './sql-params.ts';

/** The four matcher operators the three query languages share. */
export type MatchOp = '=' | '!=' | '=~' | '!~';

/** Whose anchoring a regex gets. */
export type RegexDialect = 'prometheus' | 'loki' | 'tempo';

/** The RE2 pattern for ClickHouse's match() that matches a whole value as `dialect` anchors `re`. */
export function anchoredPattern(dialect: RegexDialect, re: string): string {
  return dialect === 'prometheus' ? `^(?s:${re})$` : `^(?:${re})$`;
}

/** A matcher over the label value `valueSql` (an SQL expression of the query's own making, never a client's text). */
export function labelMatchSql(params: SqlParams, dialect: RegexDialect, valueSql: string, op: MatchOp, value: string): string {
  switch (op) {
    case '=':
      return `${valueSql} = ${params.bind(value, 'String')}`;
    case '!=':
      return `${valueSql} != ${params.bind(value, 'String')}`;
    case '=~':
      return `match(${valueSql}, ${params.bind(anchoredPattern(dialect, value), 'String')})`;
    case '!~':
      return `NOT match(${valueSql}, ${params.bind(anchoredPattern(dialect, value), 'String')})`;
  }
}
