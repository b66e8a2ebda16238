// Embedded ClickHouse's parameter binding, done in this process: each
// `{name:Type}` placeholder of a statement becomes `_CAST(literal, 'Type')`,
// the very expression ClickHouse's own binder substitutes for it
// (ReplaceQueryParameterVisitor), so plans, key analysis and answers are
// those of a bound statement; a String is its quoted literal alone.
//
// Why: chDB's native binder keeps a statement's parameters in state that
// is not isolated per connection, so chdb-node runs every statement with
// parameters one at a time in the whole process (its index.js explains the
// crash it avoids). A tenant's query then waited behind any other tenant's
// statement, however many connections the store opened (issue 33). A
// statement without parameters runs on its own connection beside the
// others.
//
// Safety rests on one function, `sqlLiteral`, which renders a value from
// its JavaScript type alone: numbers and bigints as digits, strings quoted
// with every quote, backslash and control character escaped, arrays
// element by element. Nothing a client sends is ever spliced as text, and
// test/unit/clickhouse/inline-params.test.ts round-trips hostile strings
// through the real engine. The statements are still written with bound
// placeholders, so server mode sends the same text with HTTP parameters.

/** A placeholder: `{name:Type}`, the type without braces (ClickHouse's syntax; types come from the code's SQL, never a request). */
const placeholder = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}/g;

/** Characters a quoted literal escapes: the quote, the backslash and every control character. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what it finds
const escaped = /['\\\u0000-\u001f\u007f]/g;

function escapeChar(c: string): string {
  if (c === "'") return "\\'";
  if (c === '\\') return '\\\\';
  return `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
}

/** A quoted ClickHouse string literal holding exactly `s`. */
export function quoted(s: string): string {
  return `'${s.replace(escaped, escapeChar)}'`;
}

/** `value` as a ClickHouse literal; throws for a value no bound parameter could carry (a bug in the caller, not input). */
export function sqlLiteral(value: unknown): string {
  if (typeof value === 'string') return quoted(value);
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'nan';
    if (value === Number.POSITIVE_INFINITY) return 'inf';
    if (value === Number.NEGATIVE_INFINITY) return '-inf';
    // String() gives digits, a point, or an exponent: nothing else.
    return String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (value === null || value === undefined) return 'NULL';
  if (Array.isArray(value)) return `[${value.map(sqlLiteral).join(', ')}]`;
  // As the client sends one over HTTP: Unix seconds, which a DateTime or DateTime64 parameter takes as they are.
  if (value instanceof Date) return String(value.getTime() / 1000);
  throw new Error(`bug: a query parameter of type ${typeof value} has no literal`);
}

/** `sql` with each placeholder named in `params` replaced by its typed literal, in one pass (a value is never scanned again). */
export function inlineParams(sql: string, params: Readonly<Record<string, unknown>> | undefined): string {
  if (params === undefined) return sql;
  const names = Object.keys(params);
  if (names.length === 0) return sql;
  return sql.replace(placeholder, (whole, name: string, type: string) => {
    if (!Object.hasOwn(params, name)) return whole;
    const value = params[name];
    // A string literal is a String already, and fits where the grammar wants a literal (PARTITION ID, a file name).
    if (type === 'String' && typeof value === 'string') return quoted(value);
    return `_CAST(${sqlLiteral(value)}, ${quoted(type)})`;
  });
}
