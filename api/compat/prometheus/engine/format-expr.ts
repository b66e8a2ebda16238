// An expression back to text as Prometheus prints it: String() (parser/
// printer.go) gives the canonical one-line form, and prettify (parser/
// prettier.go, what /api/v1/format_query answers) splits whatever is longer
// than 100 characters over indented lines.
import type { AtModifier, Expr, VectorMatching, VectorSelector } from './promql-ast.ts';
import type { LabelMatcher } from './sample-source.ts';

const maxLineLength = 100;

const durationUnits: readonly (readonly [string, number, boolean])[] = [
  ['y', 365 * 86_400_000, true],
  ['w', 7 * 86_400_000, true],
  ['d', 86_400_000, false],
  ['h', 3_600_000, false],
  ['m', 60_000, false],
  ['s', 1000, false],
  ['ms', 1, false],
];

/** Milliseconds as Prometheus' model.Duration prints them ("1h30m", "0s"; years and weeks only when exact). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const [unit, size, exact] of durationUnits) {
    if (exact && rest % size !== 0) continue;
    const n = Math.floor(rest / size);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * size;
    }
  }
  return out;
}

/** Go's strconv.Quote for the strings PromQL prints. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (c === 7) out += '\\a';
    else if (c === 8) out += '\\b';
    else if (c === 12) out += '\\f';
    else if (c === 10) out += '\\n';
    else if (c === 13) out += '\\r';
    else if (c === 9) out += '\\t';
    else if (c === 11) out += '\\v';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else if ((c >= 0x80 && c < 0xa0) || c === 0xad || c === 0xfeff)
      out += c > 0xffff ? `\\U${c.toString(16).padStart(8, '0')}` : `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** A float as Go's strconv.FormatFloat(v, 'f', -1, 64): no exponent, shortest digits. */
export function formatFloatPlain(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  const s = String(v);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (m === null) return s;
  const [, sign = '', lead = '', frac = '', expText = '0'] = m;
  const exp = Number(expText);
  const digits = lead + frac;
  if (exp >= 0) return digits.length <= exp + 1 ? sign + digits.padEnd(exp + 1, '0') : `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
}

const legacyLabelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

const labelList = (names: readonly string[]): string => names.map((n) => (legacyLabelName.test(n) ? n : goQuote(n))).join(', ');

function matcherString(m: LabelMatcher): string {
  return `${legacyLabelName.test(m.name) ? m.name : goQuote(m.name)}${m.op}${goQuote(m.value)}`;
}

function atString(at: AtModifier | undefined): string {
  if (at === undefined) return '';
  if (at.kind === 'start') return ' @ start()';
  if (at.kind === 'end') return ' @ end()';
  return ` @ ${(at.ms / 1000).toFixed(3)}`;
}

function offsetString(ms: number): string {
  if (ms > 0) return ` offset ${formatDuration(ms)}`;
  if (ms < 0) return ` offset -${formatDuration(-ms)}`;
  return '';
}

function selectorBody(v: VectorSelector): string {
  const shown = v.matchers
    .filter((m) => !(m.name === '__name__' && m.op === '=' && v.name !== undefined && m.value === v.name && m.value !== ''))
    .map(matcherString)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const name = v.name ?? '';
  return shown.length === 0 ? name : `${name}{${shown.join(',')}}`;
}

function matchingString(m: VectorMatching | undefined): string {
  if (m === undefined) return '';
  const grouped = m.card === 'many-to-one' || m.card === 'one-to-many';
  let out = '';
  if (m.labels.length > 0 || m.on || grouped) out += ` ${m.on ? 'on' : 'ignoring'} (${labelList(m.labels)})`;
  if (grouped) out += ` group_${m.card === 'many-to-one' ? 'left' : 'right'} (${labelList(m.include)})`;
  return out;
}

function aggregatePrefix(e: Extract<Expr, { kind: 'aggregate' }>): string {
  if (e.without) return `${e.op} without (${labelList(e.grouping)}) `;
  if (e.grouping.length > 0) return `${e.op} by (${labelList(e.grouping)}) `;
  return e.op;
}

/** Prometheus' Expr.String(): the canonical one-line form. */
export function formatExpr(e: Expr): string {
  switch (e.kind) {
    case 'number':
      if (e.duration) return e.value < 0 ? `-${formatDuration(Math.round(-e.value * 1000))}` : formatDuration(Math.round(e.value * 1000));
      return formatFloatPlain(e.value);
    case 'string':
      return goQuote(e.value);
    case 'vector':
      return `${selectorBody(e)}${atString(e.at)}${offsetString(e.offsetMs)}`;
    case 'matrix':
      return `${selectorBody(e.selector)}[${formatDuration(e.rangeMs)}]${atString(e.selector.at)}${offsetString(e.selector.offsetMs)}`;
    case 'subquery':
      return `${formatExpr(e.expr)}${subquerySuffix(e)}`;
    case 'paren':
      return `(${formatExpr(e.expr)})`;
    case 'unary':
      return `${e.op}${formatExpr(e.expr)}`;
    case 'binary':
      return `${formatExpr(e.lhs)} ${e.op}${e.bool ? ' bool' : ''}${matchingString(e.matching)} ${formatExpr(e.rhs)}`;
    case 'aggregate':
      return `${aggregatePrefix(e)}(${e.param === undefined ? '' : `${formatExpr(e.param)}, `}${formatExpr(e.expr)})`;
    case 'call':
      return `${e.fn}(${e.args.map(formatExpr).join(', ')})`;
  }
}

function subquerySuffix(e: Extract<Expr, { kind: 'subquery' }>): string {
  return `[${formatDuration(e.rangeMs)}:${e.stepMs === 0 ? '' : formatDuration(e.stepMs)}]${atString(e.at)}${offsetString(e.offsetMs)}`;
}

const indent = (level: number): string => '  '.repeat(level);

/** Prometheus' Prettify: /api/v1/format_query's answer. */
export function prettifyExpr(e: Expr, level = 0): string {
  const flat = formatExpr(e);
  const split = flat.length > maxLineLength;
  switch (e.kind) {
    case 'aggregate':
      if (!split) return indent(level) + flat;
      return `${indent(level)}${aggregatePrefix(e)}(\n${e.param === undefined ? '' : `${prettifyExpr(e.param, level + 1)},\n`}${prettifyExpr(e.expr, level + 1)}\n${indent(level)})`;
    case 'binary':
      if (!split) return indent(level) + flat;
      return `${prettifyExpr(e.lhs, level + 1)}\n${indent(level)}${e.op}${e.bool ? ' bool' : ''}${matchingString(e.matching)}\n${prettifyExpr(e.rhs, level + 1)}`;
    case 'call':
      if (!split) return indent(level) + flat;
      return `${indent(level)}${e.fn}(\n${e.args.map((a) => prettifyExpr(a, level + 1)).join(',\n')}\n${indent(level)})`;
    case 'paren':
      if (!split) return indent(level) + flat;
      return `${indent(level)}(\n${prettifyExpr(e.expr, level + 1)}\n${indent(level)})`;
    case 'subquery':
      if (!split) return flat;
      return `${prettifyExpr(e.expr, level)}${subquerySuffix(e)}`;
    case 'unary':
      return `${indent(level)}${e.op}${prettifyExpr(e.expr, level).trim()}`;
    default:
      return indent(level) + flat;
  }
}
