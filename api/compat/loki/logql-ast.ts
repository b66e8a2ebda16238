// LogQL text to the subset Tenantry runs, through the official grammar
// (@grafana/lezer-logql). A syntax error becomes Loki's "parse error at line
// L, col C" message; a construct outside the subset becomes an error naming
// it, never an approximate query (DESIGN.md section 9).
import { parser } from '@grafana/lezer-logql';
import type { SyntaxNode } from '@lezer/common';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import { parseLogqlDuration } from '../../query/durations.ts';

export type MatchOp = '=' | '!=' | '=~' | '!~';
export interface Matcher {
  readonly name: string;
  readonly op: MatchOp;
  readonly value: string;
}

export type LineOp = '|=' | '!=' | '|~' | '!~';
/** One line filter; several values are Loki 3's `|= "a" or "b"` (any of them). */
export interface LineFilter {
  readonly op: LineOp;
  readonly values: readonly string[];
}

export type NumberOp = '==' | '!=' | '>' | '>=' | '<' | '<=';
export type LabelPredicate =
  | { readonly kind: 'match'; readonly matcher: Matcher }
  | { readonly kind: 'number'; readonly name: string; readonly op: NumberOp; readonly value: number }
  | { readonly kind: 'and' | 'or'; readonly left: LabelPredicate; readonly right: LabelPredicate };

export type Stage =
  | { readonly kind: 'line'; readonly filter: LineFilter }
  | { readonly kind: 'parser'; readonly parser: 'json' | 'logfmt' }
  | { readonly kind: 'label'; readonly predicate: LabelPredicate }
  | { readonly kind: 'drop'; readonly names: readonly string[] };

export interface LogSelector {
  readonly matchers: readonly Matcher[];
  readonly stages: readonly Stage[];
}

export type RangeFn = 'count_over_time' | 'rate' | 'bytes_over_time' | 'bytes_rate';
export type VectorFn = 'sum' | 'avg' | 'min' | 'max' | 'count' | 'topk';

export interface Grouping {
  readonly mode: 'by' | 'without';
  readonly labels: readonly string[];
}

export type MetricExpr =
  /** `vector(n)`, a number literal, or arithmetic between them (Grafana's health check asks `vector(1)+vector(1)`). */
  | { readonly kind: 'constant'; readonly value: number; readonly scalar: boolean }
  | { readonly kind: 'range'; readonly fn: RangeFn; readonly selector: LogSelector; readonly rangeNs: bigint }
  | { readonly kind: 'vector'; readonly fn: VectorFn; readonly grouping: Grouping | undefined; readonly k: number | undefined; readonly inner: MetricExpr };

export type LogQuery = { readonly kind: 'logs'; readonly selector: LogSelector } | { readonly kind: 'metric'; readonly expr: MetricExpr };

/** Why a query is refused: its text is not LogQL (with Loki's position) or uses what Tenantry does not run. */
export interface LogqlError {
  readonly message: string;
}

class Refusal extends Error {}

const refuse = (message: string): never => {
  throw new Refusal(message);
};

/** The 1-based line and column of an offset, as Loki's parse errors give them. */
function position(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, col: (before.at(-1)?.length ?? 0) + 1 };
}

const simpleEscapes: Readonly<Record<string, string>> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"', "'": "'" };

/** A LogQL string literal as Go's strconv.Unquote reads it: "…" with Go escapes, or `…` raw. */
export function unquote(literal: string): string {
  if (literal.startsWith('`')) return literal.slice(1, -1);
  const body = literal.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i] ?? '';
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[i + 1] ?? '';
    const simple = simpleEscapes[e];
    if (simple !== undefined) {
      out += simple;
      i += 1;
      continue;
    }
    const hex = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    const digits = hex > 0 ? body.slice(i + 2, i + 2 + hex) : body.slice(i + 1, i + 4);
    const valid = hex > 0 ? new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(digits) : /^[0-7]{3}$/.test(digits);
    if (!valid) return refuse(`invalid string literal ${literal}: unknown escape sequence \\${e}`);
    out += String.fromCodePoint(parseInt(digits, hex > 0 ? 16 : 8));
    i += hex > 0 ? 1 + hex : 3;
  }
  return out;
}

/** The longest duration a parameter or a LogQL range may give (since, step, interval, [range]): 3650 days. */
export const maxDurationNs = 3650n * 86_400_000_000_000n;

/** Most characters of a query (a longer one is refused before it is parsed). */
export const maxQueryChars = 65_536;

/** Most levels of parentheses a query may nest (each aggregation is one or two subqueries in ClickHouse, which allows 100). */
export const maxNesting = 32;

/** Most parser stages (| json, | logfmt) one selector may have: each one's label map reads the previous one's, so the statement's size doubles per parser. */
export const maxParsers = 3;

/** The deepest nesting of parentheses outside string literals. */
function nesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote !== '') {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === '`') quote = c;
    else if (c === '(') deepest = Math.max(deepest, ++depth);
    else if (c === ')') depth--;
  }
  return deepest;
}

class Reader {
  readonly #text: string;
  constructor(text: string) {
    this.#text = text;
  }

  text(node: SyntaxNode): string {
    return this.#text.slice(node.from, node.to);
  }

  child(node: SyntaxNode, name: string): SyntaxNode {
    return node.getChild(name) ?? refuse(`unexpected ${this.text(node)}`);
  }

  matcher(node: SyntaxNode): Matcher {
    const name = this.text(this.child(node, 'Identifier'));
    const op = ['Eq', 'Neq', 'Re', 'Nre'].map((n) => node.getChild(n)).find((n) => n !== null);
    const ops: Readonly<Record<string, MatchOp>> = { Eq: '=', Neq: '!=', Re: '=~', Nre: '!~' };
    return { name, op: ops[op?.name ?? ''] ?? refuse(`unexpected matcher ${this.text(node)}`), value: unquote(this.text(this.child(node, 'String'))) };
  }

  selector(node: SyntaxNode): Matcher[] {
    return node.getChildren('Matchers').flatMap((m) => this.matchers(m));
  }

  matchers(node: SyntaxNode): Matcher[] {
    return [...node.getChildren('Matchers').flatMap((m) => this.matchers(m)), ...node.getChildren('Matcher').map((m) => this.matcher(m))];
  }

  lineFilter(node: SyntaxNode): LineFilter {
    const filter = this.child(node, 'Filter');
    const opNode = filter.firstChild;
    const ops: Readonly<Record<string, LineOp>> = { PipeExact: '|=', Neq: '!=', PipeMatch: '|~', Nre: '!~' };
    const op = ops[opNode?.name ?? ''] ?? refuse(`the line filter ${this.text(filter)} is not supported`);
    if (node.getChild('FilterOp') !== null) refuse(`the line filter ${this.text(node)} (ip()) is not supported`);
    const values: string[] = [];
    const collect = (n: SyntaxNode): void => {
      for (let c = n.firstChild; c !== null; c = c.nextSibling) {
        if (c.name === 'String') values.push(unquote(this.text(c)));
        else if (c.name === 'OrFilter') collect(c);
        else if (c.name === 'FilterOp') refuse(`the line filter ${this.text(node)} (ip()) is not supported`);
      }
    };
    collect(node);
    return { op, values };
  }

  labelPredicate(node: SyntaxNode): LabelPredicate {
    const inner = node.getChildren('LabelFilter');
    if (inner.length === 2) {
      const [left, right] = inner as [SyntaxNode, SyntaxNode];
      const mode = node.getChild('Or') !== null ? 'or' : 'and';
      return { kind: mode, left: this.labelPredicate(left), right: this.labelPredicate(right) };
    }
    if (inner.length === 1) return this.labelPredicate(inner[0] as SyntaxNode);
    const matcher = node.getChild('Matcher');
    if (matcher !== null) return { kind: 'match', matcher: this.matcher(matcher) };
    const number = node.getChild('NumberFilter');
    if (number !== null) {
      const ops: Readonly<Record<string, NumberOp>> = { Eql: '==', Eq: '==', Neq: '!=', Gtr: '>', Gte: '>=', Lss: '<', Lte: '<=' };
      const opNode = ['Eql', 'Eq', 'Neq', 'Gtr', 'Gte', 'Lss', 'Lte'].map((n) => number.getChild(n)).find((n) => n !== null);
      const literal = number.getChild('LiteralExpr');
      const value = Number(literal === null ? NaN : this.text(literal).replace(/\s+/g, ''));
      if (opNode === undefined || !Number.isFinite(value)) return refuse(`the label filter ${this.text(number)} is not supported`);
      return { kind: 'number', name: this.text(this.child(number, 'Identifier')), op: ops[opNode.name] ?? '==', value };
    }
    if (node.getChild('IpLabelFilter') !== null) return refuse(`the ip() label filter ${this.text(node)} is not supported`);
    if (node.getChild('UnitFilter') !== null) return refuse(`the duration/bytes label filter ${this.text(node)} is not supported`);
    return refuse(`the label filter ${this.text(node)} is not supported`);
  }

  stage(node: SyntaxNode): Stage[] {
    const lines = node.getChild('LineFilters');
    if (lines !== null) return this.lineFilters(lines).map((filter) => ({ kind: 'line', filter }));
    const body = node.lastChild ?? refuse(`unexpected ${this.text(node)}`);
    switch (body.name) {
      case 'LabelParser': {
        if (body.getChild('Json') !== null) return [{ kind: 'parser', parser: 'json' }];
        if (body.getChild('Logfmt') !== null) return [{ kind: 'parser', parser: 'logfmt' }];
        return refuse(`the parser ${this.text(body)} is not supported (only json and logfmt without arguments)`);
      }
      case 'LogfmtParser': {
        if (body.getChild('LogfmtParserFlags') !== null) return refuse(`logfmt flags (${this.text(body)}) are not supported`);
        return [{ kind: 'parser', parser: 'logfmt' }];
      }
      case 'LabelFilter':
        return [{ kind: 'label', predicate: this.labelPredicate(body) }];
      case 'DropLabelsExpr':
        return [{ kind: 'drop', names: this.dropNames(body) }];
      case 'JsonExpressionParser':
        return refuse(`json with arguments (${this.text(body)}) is not supported`);
      case 'LogfmtExpressionParser':
        return refuse(`logfmt with arguments (${this.text(body)}) is not supported`);
      case 'LineFormatExpr':
        return refuse(`line_format is not supported`);
      case 'LabelFormatExpr':
        return refuse(`label_format is not supported`);
      case 'DecolorizeExpr':
        return refuse(`decolorize is not supported`);
      case 'KeepLabelsExpr':
        return refuse(`keep is not supported`);
      default:
        return refuse(`the pipeline stage ${this.text(body)} is not supported`);
    }
  }

  dropNames(node: SyntaxNode): string[] {
    const names: string[] = [];
    const walk = (n: SyntaxNode): void => {
      for (let c = n.firstChild; c !== null; c = c.nextSibling) {
        if (c.name === 'DropLabel') {
          if (c.getChild('Matcher') !== null) refuse(`drop with a matcher (${this.text(c)}) is not supported`);
          names.push(this.text(this.child(c, 'Identifier')));
        } else if (c.name === 'DropLabels') walk(c);
      }
    };
    walk(node);
    return names;
  }

  lineFilters(node: SyntaxNode): LineFilter[] {
    return [...node.getChildren('LineFilters').flatMap((n) => this.lineFilters(n)), ...node.getChildren('LineFilter').map((n) => this.lineFilter(n))];
  }

  pipeline(node: SyntaxNode | null): Stage[] {
    if (node === null) return [];
    return [...node.getChildren('PipelineExpr').flatMap((n) => this.pipeline(n)), ...node.getChildren('PipelineStage').flatMap((n) => this.stage(n))];
  }

  logSelector(node: SyntaxNode): LogSelector {
    const selector = this.child(node, 'Selector');
    const stages = this.pipeline(node.getChild('PipelineExpr'));
    if (stages.filter((s) => s.kind === 'parser').length > maxParsers)
      refuse(`a query may have at most ${maxParsers} parser stages (| json, | logfmt) per selector`);
    return { matchers: this.selector(selector), stages };
  }

  grouping(node: SyntaxNode | null): Grouping | undefined {
    if (node === null) return undefined;
    // Labels nest one level per comma: collect their identifiers in order.
    const names: string[] = [];
    const collect = (n: SyntaxNode): void => {
      for (let c = n.firstChild; c !== null; c = c.nextSibling) {
        if (c.name === 'Labels') collect(c);
        else if (c.name === 'Identifier') names.push(this.text(c));
      }
    };
    const labels = node.getChild('Labels');
    if (labels !== null) collect(labels);
    return { mode: node.getChild('Without') !== null ? 'without' : 'by', labels: names };
  }

  metric(node: SyntaxNode): MetricExpr {
    const inner = node.firstChild ?? refuse(`unexpected ${this.text(node)}`);
    switch (inner.name) {
      case 'RangeAggregationExpr':
        return this.rangeAggregation(inner);
      case 'VectorAggregationExpr':
        return this.vectorAggregation(inner);
      case 'BinOpExpr':
        return this.binary(inner);
      case 'LiteralExpr':
        return { kind: 'constant', value: Number(this.text(inner).replace(/\s+/g, '')), scalar: true };
      case 'LabelReplaceExpr':
        return refuse('label_replace is not supported');
      case 'VectorExpr':
        return { kind: 'constant', value: Number(this.text(this.child(inner, 'Number'))), scalar: false };
      case 'MetricExpr':
        return this.metric(inner);
      default:
        return refuse(`${this.text(inner)} is not supported`);
    }
  }

  /** Arithmetic between constants only; any other binary operation is refused. */
  binary(node: SyntaxNode): MetricExpr {
    const operands = node.getChildren('Expr').map((e) => this.child(e, 'MetricExpr'));
    // The grammar nests `2 * 3 - 1` as 2 * (3 - 1): an unparenthesised chain would be evaluated with the wrong precedence.
    if (operands.some((m) => m.firstChild?.name === 'BinOpExpr')) return refuse(`chained binary operations (${this.text(node)}) are not supported`);
    const sides = operands.map((m) => this.metric(m));
    const [left, right] = sides;
    const modifier = node.getChild('BinOpModifier');
    const op = ['Add', 'Sub', 'Mul', 'Div', 'Mod', 'Pow'].map((n) => node.getChild(n)).find((n) => n !== null);
    if (left?.kind !== 'constant' || right?.kind !== 'constant' || op === undefined || (modifier !== null && this.text(modifier) !== '')) {
      return refuse(`binary operations (${this.text(node)}) are not supported, except arithmetic between vector() and numbers`);
    }
    const [a, b] = [left.value, right.value];
    const value = { Add: a + b, Sub: a - b, Mul: a * b, Div: a / b, Mod: a % b, Pow: a ** b }[op.name as 'Add'];
    return { kind: 'constant', value, scalar: left.scalar && right.scalar };
  }

  rangeAggregation(node: SyntaxNode): MetricExpr {
    const opText = this.text(this.child(node, 'RangeOp'));
    const fns: readonly string[] = ['count_over_time', 'rate', 'bytes_over_time', 'bytes_rate'];
    if (!fns.includes(opText)) return refuse(`${opText} is not supported (only count_over_time, rate, bytes_over_time and bytes_rate)`);
    if (node.getChild('Grouping') !== null) return refuse(`grouping on ${opText} is not supported`);
    const range = this.child(node, 'LogRangeExpr');
    if (range.getChild('OffsetExpr') !== null) return refuse('offset is not supported');
    if (range.getChild('UnwrapExpr') !== null) return refuse('unwrap is not supported');
    const duration = this.text(this.child(this.child(range, 'Range'), 'Duration'));
    const rangeNs = parseLogqlDuration(duration) ?? refuse(`invalid range duration ${duration}`);
    if (rangeNs <= 0n) return refuse(`the range [${duration}] must be positive`);
    if (rangeNs > maxDurationNs) return refuse(`the range [${duration}] is longer than the longest supported range, [3650d]`);
    // `({…} |= "x")[5m]`: the selector may sit in parentheses inside the range.
    const selectorHost = range.getChild('Selector') !== null ? range : (range.getChild('LogExpr') ?? refuse(`unexpected ${this.text(range)}`));
    return { kind: 'range', fn: opText as RangeFn, selector: this.logSelector(selectorHost), rangeNs };
  }

  vectorAggregation(node: SyntaxNode): MetricExpr {
    const opText = this.text(this.child(node, 'VectorOp'));
    const fns: readonly string[] = ['sum', 'avg', 'min', 'max', 'count', 'topk'];
    if (!fns.includes(opText)) return refuse(`${opText} is not supported (only sum, avg, min, max, count and topk)`);
    const number = node.getChild('Number');
    const k = number === null ? undefined : Number(this.text(number));
    if (opText === 'topk' && (k === undefined || !Number.isSafeInteger(k) || k < 1))
      return refuse(
        `invalid parameter for topk: k must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}, not ${number === null ? 'absent' : this.text(number)}`,
      );
    if (opText !== 'topk' && k !== undefined) return refuse(`${opText} takes no parameter`);
    const inner = this.metric(this.child(node, 'MetricExpr'));
    if (inner.kind === 'constant') return refuse(`${opText} over a constant is not supported`);
    return { kind: 'vector', fn: opText as VectorFn, grouping: this.grouping(node.getChild('Grouping')), k, inner };
  }
}

/** The first syntax error of a parse tree, as Loki words it. */
function syntaxError(text: string, tree: ReturnType<typeof parser.parse>): string | undefined {
  let at: number | undefined;
  tree.iterate({
    enter: (n) => {
      if (at === undefined && n.type.isError) at = n.from;
      return at === undefined;
    },
  });
  if (at === undefined) return undefined;
  const { line, col } = position(text, at);
  const rest = text.slice(at).trim();
  const unexpected = rest === '' ? '$end' : (/^\S+/.exec(rest)?.[0] ?? rest);
  return `parse error at line ${line}, col ${col}: syntax error: unexpected ${unexpected}`;
}

/** Parses a LogQL query into the subset Tenantry runs. */
export function parseLogql(text: string): Result<LogQuery, LogqlError> {
  if (text.trim() === '') return fail({ message: 'parse error : syntax error: unexpected $end' });
  if (text.length > maxQueryChars) return fail({ message: `invalid 'query' parameter: the query has ${text.length} characters, more than ${maxQueryChars}` });
  const depth = nesting(text);
  if (depth > maxNesting) return fail({ message: `invalid 'query' parameter: the query nests parentheses ${depth} deep, more than ${maxNesting}` });
  const tree = parser.parse(text);
  const error = syntaxError(text, tree);
  if (error !== undefined) return fail({ message: error });
  const reader = new Reader(text);
  try {
    const expr = tree.topNode.getChild('Expr') ?? refuse('parse error : syntax error: unexpected $end');
    const logExpr = expr.getChild('LogExpr');
    if (logExpr !== null) return ok({ kind: 'logs', selector: reader.logSelector(logExpr) });
    return ok({ kind: 'metric', expr: reader.metric(reader.child(expr, 'MetricExpr')) });
  } catch (e) {
    if (e instanceof Refusal) return fail({ message: e.message });
    throw e;
  }
}

/** The selectors a metric expression reads. */
export function selectorsOf(expr: MetricExpr): LogSelector[] {
  if (expr.kind === 'constant') return [];
  return expr.kind === 'range' ? [expr.selector] : selectorsOf(expr.inner);
}
