// PromQL text → the expression tree of promql-ast.ts, through the official
// grammar (@prometheus-io/lezer-promql). The grammar accepts every construct
// of current Prometheus; what Tenantry does not evaluate is refused here by
// name ("unsupported function \"predict_linear\""), never approximated, and
// the types are checked as Prometheus checks them.
import { parser } from '@prometheus-io/lezer-promql';
import type { SyntaxNode } from '@lezer/common';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { AggregateOp, BinaryOp, Expr, Grouping, LabelMatcher, MatchOp, MatrixSelector, RangeFunction, ValueType, VectorFunction, VectorMatching, VectorSelector } from './promql-ast.ts';
import { aggregateOps, isComparison, rangeFunctions, typeOf, vectorFunctions } from './promql-ast.ts';
import { parsePromDuration } from './prom-time.ts';

/** A query that cannot be evaluated: a syntax error, a type error or an unsupported construct. */
export interface ParseError { readonly message: string }

class Refusal extends Error {}

const refuse = (message: string): never => { throw new Refusal(message); };

const binaryOps: Readonly<Record<string, BinaryOp>> = {
  Add: '+', Sub: '-', Mul: '*', Div: '/', Mod: '%', Pow: '^', Eql: '==', Neq: '!=', Gtr: '>', Lss: '<', Gte: '>=', Lte: '<=',
};

const unsupportedBinary: Readonly<Record<string, string>> = { And: 'and', Or: 'or', Unless: 'unless', Atan2: 'atan2' };

const matchOps: Readonly<Record<string, MatchOp>> = { EqlSingle: '=', Neq: '!=', EqlRegex: '=~', NeqRegex: '!~' };

const children = (node: SyntaxNode): SyntaxNode[] => {
  const out: SyntaxNode[] = [];
  for (let c = node.firstChild; c !== null; c = c.nextSibling) if (c.name !== 'LineComment') out.push(c);
  return out;
};

const typeNames: Readonly<Record<ValueType, string>> = { scalar: 'scalar', vector: 'instant vector', matrix: 'range vector' };

class Walker {
  private readonly text: string;

  constructor(text: string) { this.text = text; }

  private src(node: SyntaxNode): string { return this.text.slice(node.from, node.to); }

  private at(node: SyntaxNode): string { return `at char ${node.from + 1}`; }

  /** A string literal's value: Go's escapes in "" and '', none in backquotes. */
  string(node: SyntaxNode): string {
    const raw = this.src(node);
    const quote = raw[0];
    const body = raw.slice(1, -1);
    if (quote === '`') return body;
    return body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)/gs, (_, e: string) => {
      const simple: Readonly<Record<string, string>> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"', "'": "'" };
      const s = simple[e];
      if (s !== undefined) return s;
      if (/^[xuU]/.test(e)) return String.fromCodePoint(parseInt(e.slice(1), 16));
      if (/^[0-7]{3}$/.test(e)) return String.fromCodePoint(parseInt(e, 8));
      return refuse(`parse error ${this.at(node)}: unknown escape sequence "\\${e}"`);
    });
  }

  number(node: SyntaxNode): number {
    const raw = this.src(node).trim();
    const sign = raw.startsWith('-') ? -1 : 1;
    const unsigned = raw.replace(/^[+-]/, '');
    const lower = unsigned.toLowerCase();
    if (lower === 'inf' || lower === '+inf') return sign * Infinity;
    if (lower === 'nan') return NaN;
    if (/^0x[0-9a-f]+$/.test(lower)) return sign * parseInt(lower.slice(2), 16);
    if (/^(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/.test(lower)) return sign * Number(lower);
    const ms = parsePromDuration(unsigned);
    if (ms !== undefined) return sign * ms / 1000;
    return refuse(`parse error ${this.at(node)}: bad number or duration syntax: "${raw}"`);
  }

  duration(node: SyntaxNode): number {
    const parts = children(node);
    const literal = parts[0];
    if (parts.length !== 1 || literal?.name !== 'NumberDurationLiteralInDurationContext') return refuse(`unsupported duration expression "${this.src(node)}"`);
    const raw = this.src(literal);
    const ms = parsePromDuration(raw) ?? (/^\d+(\.\d+)?$/.test(raw) ? Number(raw) * 1000 : undefined);
    if (ms === undefined) return refuse(`parse error ${this.at(node)}: bad duration syntax: "${raw}"`);
    return ms;
  }

  labelName(node: SyntaxNode): string {
    if (node.name === 'LabelName') return this.src(node);
    const s = node.getChild('StringLiteral');
    return s === null ? this.src(node) : this.string(s);
  }

  matcher(node: SyntaxNode): LabelMatcher {
    if (node.name === 'QuotedLabelName') return { name: '__name__', op: '=', value: this.labelName(node) };
    const parts = children(node);
    const [nameNode, opNode, valueNode] = parts;
    if (nameNode === undefined || opNode === undefined || valueNode === undefined) return refuse(`parse error ${this.at(node)}: unexpected label matcher "${this.src(node)}"`);
    const opName = opNode.firstChild?.name ?? '';
    const op = matchOps[opName] ?? refuse(`parse error ${this.at(opNode)}: unexpected matcher operator "${this.src(opNode)}"`);
    return { name: this.labelName(nameNode), op, value: this.string(valueNode) };
  }

  vectorSelector(node: SyntaxNode): VectorSelector {
    const matchers: LabelMatcher[] = [];
    for (const c of children(node)) {
      if (c.name === 'Identifier') matchers.push({ name: '__name__', op: '=', value: this.src(c) });
      else if (c.name === 'LabelMatchers') for (const m of children(c)) matchers.push(this.matcher(m));
    }
    // Prometheus: a selector must have a matcher that does not match the empty string.
    if (!matchers.some((m) => !matchesEmpty(m))) refuse('vector selector must contain at least one non-empty matcher');
    if (matchers.filter((m) => m.name === '__name__').length > 1 && node.getChild('Identifier') !== null) refuse(`parse error ${this.at(node)}: metric name must not be set twice: "${this.src(node)}"`);
    return { kind: 'vector', matchers, offsetMs: 0, pos: node.from };
  }

  grouping(node: SyntaxNode): Grouping {
    const without = node.getChild('Without') !== null;
    const labels = node.getChild('GroupingLabels');
    return { without, labels: labels === null ? [] : children(labels).map((l) => this.labelName(l)) };
  }

  args(body: SyntaxNode): Expr[] {
    return children(body).map((c) => this.expr(c));
  }

  call(node: SyntaxNode): Expr {
    const id = node.getChild('FunctionIdentifier');
    const body = node.getChild('FunctionCallBody');
    const name = id === null ? '' : this.src(id);
    if (![...rangeFunctions, ...vectorFunctions].includes(name as RangeFunction)) return refuse(`unsupported function "${name}"`);
    const args = body === null ? [] : this.args(body);
    if ((rangeFunctions as readonly string[]).includes(name)) {
      const fn = name as RangeFunction;
      if (args.length !== 1) refuse(`expected 1 argument(s) in call to "${fn}", got ${args.length}`);
      const arg = args[0];
      if (arg?.kind !== 'matrix') {
        if (arg !== undefined && typeOf(arg) === 'matrix') refuse(`unsupported range vector expression in call to "${fn}": only a range selector like foo[5m] is supported`);
        return refuse(`expected type range vector in call to function "${fn}", got ${typeNames[arg === undefined ? 'scalar' : typeOf(arg)]}`);
      }
      return { kind: 'range_call', fn, arg, pos: node.from };
    }
    if ((vectorFunctions as readonly string[]).includes(name)) return this.vectorCall(name as VectorFunction, args, node);
    return refuse(`unsupported function "${name}"`);
  }

  vectorCall(fn: VectorFunction, args: Expr[], node: SyntaxNode): Expr {
    const expect = (n: number): void => { if (args.length !== n) refuse(`expected ${n} argument(s) in call to "${fn}", got ${args.length}`); };
    const checkType = (e: Expr | undefined, want: ValueType): Expr => {
      if (e === undefined) return refuse(`missing argument in call to "${fn}"`);
      const got = typeOf(e);
      if (got !== want) refuse(`expected type ${typeNames[want]} in call to function "${fn}", got ${typeNames[got]}`);
      return e;
    };
    if (fn === 'histogram_quantile') {
      expect(2);
      const phi = checkType(args[0], 'scalar');
      return { kind: 'vector_call', fn, arg: checkType(args[1], 'vector'), scalars: [phi], pos: node.from };
    }
    if (fn === 'round') {
      if (args.length < 1 || args.length > 2) refuse(`expected at most 2 argument(s) in call to "round", got ${args.length}`);
      return { kind: 'vector_call', fn, arg: checkType(args[0], 'vector'), scalars: args.slice(1).map((a) => checkType(a, 'scalar')), pos: node.from };
    }
    if (fn === 'abs') {
      expect(1);
      return { kind: 'vector_call', fn, arg: checkType(args[0], 'vector'), scalars: [], pos: node.from };
    }
    expect(2);
    return { kind: 'vector_call', fn, arg: checkType(args[0], 'vector'), scalars: [checkType(args[1], 'scalar')], pos: node.from };
  }

  aggregate(node: SyntaxNode): Expr {
    const opNode = node.getChild('AggregateOp');
    const name = opNode === null ? '' : this.src(opNode);
    if (!(aggregateOps as readonly string[]).includes(name)) return refuse(`unsupported aggregation "${name}"`);
    const op = name as AggregateOp;
    const modifier = node.getChild('AggregateModifier');
    const grouping = modifier === null ? undefined : this.grouping(modifier);
    const body = node.getChild('FunctionCallBody');
    const args = body === null ? [] : this.args(body);
    const parameterised = op === 'topk' || op === 'bottomk';
    if (args.length !== (parameterised ? 2 : 1)) refuse(`wrong number of arguments for aggregate expression provided, expected ${parameterised ? 2 : 1}, got ${args.length}`);
    const expr = args[args.length - 1];
    if (expr === undefined || typeOf(expr) !== 'vector') return refuse(`expected type instant vector in aggregation expression, got ${typeNames[expr === undefined ? 'scalar' : typeOf(expr)]}`);
    const param = parameterised ? args[0] : undefined;
    if (param !== undefined && typeOf(param) !== 'scalar') refuse(`expected type scalar in aggregation parameter, got ${typeNames[typeOf(param)]}`);
    return { kind: 'aggregate', op, expr, pos: node.from, ...(grouping === undefined ? {} : { grouping }), ...(param === undefined ? {} : { param }) };
  }

  binary(node: SyntaxNode): Expr {
    const parts = children(node);
    const [l, opNode] = parts;
    const r = parts[parts.length - 1];
    if (l === undefined || opNode === undefined || r === undefined || parts.length < 3) return refuse(`parse error ${this.at(node)}: incomplete binary expression`);
    const unsupported = unsupportedBinary[opNode.name];
    if (unsupported !== undefined) return refuse(`unsupported binary operator "${unsupported}"`);
    const op = binaryOps[opNode.name] ?? refuse(`unsupported binary operator "${this.src(opNode)}"`);
    const signed = /^\s*([-+])/.exec(this.src(l))?.[1];
    if (op === '^' && l.name === 'NumberDurationLiteral' && signed !== undefined) {
      // The grammar reads "-1" as one literal; in PromQL unary minus binds looser than ^: -1 ^ 2 is -(1 ^ 2).
      const magnitude = this.number(l) * (signed === '-' ? -1 : 1);
      const exponent = this.expr(r);
      if (typeOf(exponent) === 'matrix') refuse('binary expression must contain only scalar and instant vector types');
      const power: Expr = { kind: 'binary', op, lhs: { kind: 'number', value: magnitude, pos: l.from + 1 }, rhs: exponent, bool: false, pos: node.from };
      return signed === '-' ? { kind: 'negate', expr: power, pos: node.from } : power;
    }
    const lhs = this.expr(l);
    const rhs = this.expr(r);
    const bool = node.getChild('BoolModifier') !== null;
    const clause = node.getChild('MatchingModifierClause');
    let matching: VectorMatching | undefined;
    if (clause !== null) {
      if (clause.getChild('GroupLeft') !== null || clause.getChild('GroupRight') !== null) refuse(`unsupported vector matching "${clause.getChild('GroupLeft') === null ? 'group_right' : 'group_left'}" (only one-to-one matching is supported)`);
      if (clause.getChild('Fill') !== null || clause.getChild('FillModifier') !== null) refuse('unsupported vector matching modifier "fill"');
      const labels = clause.getChild('GroupingLabels');
      matching = { on: clause.getChild('On') !== null, labels: labels === null ? [] : children(labels).map((c) => this.labelName(c)) };
    }
    const lt = typeOf(lhs);
    const rt = typeOf(rhs);
    if (lt === 'matrix' || rt === 'matrix') refuse('binary expression must contain only scalar and instant vector types');
    if (bool && !isComparison(op)) refuse('bool modifier can only be used on comparison operators');
    if (isComparison(op) && !bool && lt === 'scalar' && rt === 'scalar') refuse('comparisons between scalars must use BOOL modifier');
    if (matching !== undefined && (lt !== 'vector' || rt !== 'vector')) refuse('vector matching only allowed between instant vectors');
    return { kind: 'binary', op, lhs, rhs, bool, pos: node.from, ...(matching === undefined ? {} : { matching }) };
  }

  offset(node: SyntaxNode): Expr {
    const inner = children(node)[0];
    const dur = node.getChild('OffsetDurationExpr');
    if (inner === undefined || dur === null) return refuse(`parse error ${this.at(node)}: incomplete offset`);
    const negated = dur.getChild('UnaryOp') !== null ? dur.getChild('OffsetDurationExpr') : null;
    const ms = negated === null ? this.duration(dur) : -this.duration(negated);
    const e = this.expr(inner);
    if (e.kind === 'vector') {
      if (e.offsetMs !== 0) refuse('offset may not be set multiple times');
      return { ...e, offsetMs: ms };
    }
    if (e.kind === 'matrix') {
      if (e.selector.offsetMs !== 0) refuse('offset may not be set multiple times');
      return { ...e, selector: { ...e.selector, offsetMs: ms } };
    }
    return refuse('offset modifier must be preceded by an instant vector selector or range vector selector');
  }

  matrix(node: SyntaxNode): MatrixSelector {
    const inner = children(node)[0];
    const dur = node.getChild('DurationExpr');
    if (inner === undefined || dur === null) return refuse(`parse error ${this.at(node)}: incomplete range selector`);
    const e = this.expr(inner);
    if (e.kind !== 'vector') return refuse('ranges only allowed for vector selectors');
    if (e.offsetMs !== 0) refuse('offset must follow the range selector: write foo[5m] offset 1m');
    const rangeMs = this.duration(dur);
    if (rangeMs <= 0) refuse(`range selector duration must be greater than 0, got ${this.src(dur)}`);
    return { kind: 'matrix', selector: e, rangeMs, pos: node.from };
  }

  expr(node: SyntaxNode): Expr {
    if (node.type.isError) return refuse(`parse error ${this.at(node)}: unexpected ${node.from >= this.text.length ? 'end of input' : `"${this.text.slice(node.from, node.to + 1)}"`}`);
    switch (node.name) {
      case 'NumberDurationLiteral': return { kind: 'number', value: this.number(node), pos: node.from };
      case 'VectorSelector': return this.vectorSelector(node);
      case 'MatrixSelector': return this.matrix(node);
      case 'OffsetExpr': return this.offset(node);
      case 'FunctionCall': return this.call(node);
      case 'AggregateExpr': return this.aggregate(node);
      case 'BinaryExpr': return this.binary(node);
      case 'ParenExpr': {
        const inner = children(node)[0];
        return inner === undefined ? refuse(`parse error ${this.at(node)}: empty parentheses`) : this.expr(inner);
      }
      case 'UnaryExpr': {
        const op = node.getChild('UnaryOp');
        const inner = children(node).at(-1);
        if (op === null || inner === undefined || inner.from === op.from) return refuse(`parse error ${this.at(node)}: incomplete unary expression`);
        const e = this.expr(inner);
        if (typeOf(e) === 'matrix') refuse('unary expression only allowed on expressions of type scalar or instant vector');
        if (this.src(op) === '+') return e;
        return e.kind === 'number' ? { ...e, value: -e.value, pos: node.from } : { kind: 'negate', expr: e, pos: node.from };
      }
      case 'StringLiteral': return refuse('unsupported expression: string literal');
      case 'SubqueryExpr': return refuse('unsupported expression: subquery');
      case 'StepInvariantExpr': return refuse('unsupported modifier "@"');
      default: return refuse(`unsupported expression "${this.src(node)}" (${node.name})`);
    }
  }
}

/** Whether a matcher matches the empty string (an absent label): such matchers alone select everything. */
function matchesEmpty(m: LabelMatcher): boolean {
  if (m.op === '=') return m.value === '';
  if (m.op === '!=') return m.value !== '';
  let re: RegExp;
  try { re = new RegExp(`^(?:${m.value})$`); } catch { return false; }
  return m.op === '=~' ? re.test('') : !re.test('');
}

/** Parses a PromQL query into an expression Tenantry evaluates, or says why not. */
export function parsePromql(text: string): Result<Expr, ParseError> {
  if (text.trim() === '') return fail({ message: 'unknown position: parse error: no expression found in input' });
  const tree = parser.parse(text);
  const [top, extra] = children(tree.topNode);
  let error: SyntaxNode | undefined;
  tree.iterate({ enter: (n) => { if (error === undefined && n.type.isError) error = n.node; return error === undefined; } });
  try {
    if (error !== undefined) {
      // A name the grammar does not know as a function, called: refuse it by name (also functions it no longer has, like holt_winters).
      const called = /([A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(text.slice(0, error.from));
      if (called?.[1] !== undefined && /^\s*\(/.test(text.slice(error.from))) return fail({ message: `unsupported function "${called[1]}"` });
      const at = error.from >= text.trim().length ? 'unexpected end of input' : `unexpected character or token "${text.slice(error.from, Math.max(error.to, error.from + 1))}"`;
      return fail({ message: `1:${error.from + 1}: parse error: ${at}` });
    }
    if (top === undefined) return fail({ message: 'unknown position: parse error: no expression found in input' });
    if (extra !== undefined) return fail({ message: `1:${extra.from + 1}: parse error: unexpected "${text.slice(extra.from, extra.to)}"` });
    return ok(new Walker(text).expr(top));
  } catch (e) {
    if (e instanceof Refusal) return fail({ message: e.message });
    throw e;
  }
}
