// PromQL text → the expression tree of promql-ast.ts through the official
// grammar (@prometheus-io/lezer-promql), checked as Prometheus 3's parser
// checks it (parser/parse.go checkAST): types, argument counts, vector
// matching, selectors. The grammar also accepts what Prometheus only allows
// behind a feature flag (experimental functions, limitk, duration
// arithmetic, fill, anchored/smoothed): those are refused here by name.
import { parser } from '@prometheus-io/lezer-promql';
import type { SyntaxNode } from '@lezer/common';
import type { Result } from '../../../../src/result.ts';
import { fail, ok } from '../../../../src/result.ts';
import type { PromError } from '../prom-envelope.ts';
import { badData } from '../prom-envelope.ts';
import type { FunctionDef } from './functions/function-types.ts';
import type { AggregateOp, AtModifier, BinaryExpr, BinaryOp, Cardinality, Expr, PosRange, VectorMatching, VectorSelector } from './promql-ast.ts';
import { aggregateOps, documentedType, isComparison, isSetOp, typeOf } from './promql-ast.ts';
import { parseDurationLiteral, parseNumberLiteral, unquoteString } from './literals.ts';
import type { LabelMatcher, MatchOp } from './sample-source.ts';

/** The signatures the parser checks calls against (the function library's table). */
export type FunctionSignatures = ReadonlyMap<string, Pick<FunctionDef, 'name' | 'argTypes' | 'optional' | 'returnType'>>;

/** Functions Prometheus 3.16 only offers with --enable-feature=promql-experimental-functions (or duration expressions). */
const experimentalFunctions = new Set([
  'double_exponential_smoothing',
  'histogram_quantiles',
  'info',
  'mad_over_time',
  'sort_by_label',
  'sort_by_label_desc',
  'ts_of_first_over_time',
  'ts_of_last_over_time',
  'ts_of_max_over_time',
  'ts_of_min_over_time',
  'start_timestamp',
  'start',
  'end',
  'range',
  'step',
  'min_of',
  'max_of',
]);

const binaryOps: Readonly<Record<string, BinaryOp>> = {
  Add: '+',
  Sub: '-',
  Mul: '*',
  Div: '/',
  Mod: '%',
  Pow: '^',
  Atan2: 'atan2',
  Eql: '==',
  Neq: '!=',
  Gtr: '>',
  Lss: '<',
  Gte: '>=',
  Lte: '<=',
  And: 'and',
  Or: 'or',
  Unless: 'unless',
  TrimUpper: '</',
  TrimLower: '>/',
};

const matchOps: Readonly<Record<string, MatchOp>> = { EqlSingle: '=', Neq: '!=', EqlRegex: '=~', NeqRegex: '!~' };

/** Prometheus' bounds for an @ timestamp, in seconds (math.MaxInt64 / 1000 as ms). */
const maxAtSeconds = 9_223_372_036_854_776;

class ParseFailure extends Error {
  readonly pos: number;
  constructor(pos: number, message: string) {
    super(message);
    this.pos = pos;
  }
}

const children = (node: SyntaxNode): SyntaxNode[] => {
  const out: SyntaxNode[] = [];
  for (let c = node.firstChild; c !== null; c = c.nextSibling) if (c.name !== 'LineComment') out.push(c);
  return out;
};

/** "line:column" of a character offset, as Prometheus' StartPosInput. */
export function positionOf(text: string, pos: number): string {
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return `${line}:${column}`;
}

class Walker {
  private readonly text: string;
  private readonly functions: FunctionSignatures;

  constructor(text: string, functions: FunctionSignatures) {
    this.text = text;
    this.functions = functions;
  }

  private src(node: SyntaxNode): string {
    return this.text.slice(node.from, node.to);
  }

  private fail(pos: number | PosRange, message: string): never {
    throw new ParseFailure(typeof pos === 'number' ? pos : pos.start, message);
  }

  private range(node: SyntaxNode): PosRange {
    return { start: node.from, end: node.to };
  }

  private string(node: SyntaxNode): string {
    const r = unquoteString(this.src(node));
    return r.ok ? r.value : this.fail(node.from, r.error);
  }

  private duration(node: SyntaxNode): number {
    const parts = children(node);
    const literal = parts[0];
    if (parts.length !== 1 || literal?.name !== 'NumberDurationLiteralInDurationContext')
      return this.fail(node.from, 'experimental duration expression is not enabled');
    const ms = parseDurationLiteral(this.src(literal));
    return ms.ok ? ms.value : this.fail(node.from, ms.error);
  }

  private labelName(node: SyntaxNode): string {
    if (node.name === 'LabelName') return this.src(node);
    const s = node.getChild('StringLiteral');
    return s === null ? this.src(node) : this.string(s);
  }

  private matcher(node: SyntaxNode): LabelMatcher {
    if (node.name === 'QuotedLabelName') return { name: '__name__', op: '=', value: this.labelName(node) };
    const [nameNode, opNode, valueNode] = children(node);
    if (nameNode === undefined || opNode === undefined || valueNode === undefined) return this.fail(node.from, `unexpected label matcher "${this.src(node)}"`);
    const op = matchOps[opNode.firstChild?.name ?? ''] ?? this.fail(opNode.from, `unexpected matcher operator "${this.src(opNode)}"`);
    const m: LabelMatcher = { name: this.labelName(nameNode), op, value: this.string(valueNode) };
    if (op === '=~' || op === '!~') {
      try {
        new RegExp(`^(?:${m.value})$`, 'su');
      } catch (e) {
        this.fail(node.from, `error parsing regexp: ${(e as Error).message}`);
      }
    }
    return m;
  }

  private vectorSelector(node: SyntaxNode): VectorSelector {
    const matchers: LabelMatcher[] = [];
    let name: string | undefined;
    for (const c of children(node)) {
      if (c.name === 'Identifier') name = this.src(c);
      else if (c.name === 'LabelMatchers') for (const m of children(c)) matchers.push(this.matcher(m));
    }
    const pos = this.range(node);
    if (name !== undefined) {
      const twice = matchers.find((m) => m.name === '__name__');
      if (twice !== undefined) this.fail(pos, `metric name must not be set twice: "${name}" or "${twice.value}"`);
      matchers.push({ name: '__name__', op: '=', value: name });
    } else if (!matchers.some((m) => !matchesEmpty(m))) {
      this.fail(pos, 'vector selector must contain at least one non-empty matcher');
    }
    return { kind: 'vector', matchers, offsetMs: 0, pos, ...(name === undefined ? {} : { name }) };
  }

  private grouping(node: SyntaxNode | null): string[] {
    const labels = node?.getChild('GroupingLabels') ?? null;
    return labels === null ? [] : children(labels).map((l) => this.labelName(l));
  }

  private call(node: SyntaxNode): Expr {
    const id = node.getChild('FunctionIdentifier');
    const body = node.getChild('FunctionCallBody');
    const name = id === null ? '' : this.src(id);
    const pos = this.range(node);
    const def = this.functions.get(name);
    if (def === undefined) {
      if (experimentalFunctions.has(name)) return this.fail(pos, `function "${name}" is not enabled`);
      return this.fail(pos, `unknown function with name "${name}"`);
    }
    const args = body === null ? [] : children(body).map((c) => this.expr(c));
    const n = def.argTypes.length;
    if (def.optional === 0) {
      if (args.length !== n) this.fail(pos, `expected ${n} argument(s) in call to "${name}", got ${args.length}`);
    } else {
      const least = def.optional < 0 ? n - 1 : n - def.optional;
      if (args.length < least) this.fail(pos, `expected at least ${least} argument(s) in call to "${name}", got ${args.length}`);
      if (def.optional > 0 && args.length > n) this.fail(pos, `expected at most ${n} argument(s) in call to "${name}", got ${args.length}`);
    }
    args.forEach((arg, i) => {
      const want = def.argTypes[Math.min(i, n - 1)];
      if (want !== undefined && typeOf(arg) !== want)
        this.fail(arg.pos, `expected type ${documentedType(want)} in call to function "${name}", got ${documentedType(typeOf(arg))}`);
    });
    return { kind: 'call', fn: name, args, returnType: def.returnType, pos };
  }

  private aggregate(node: SyntaxNode): Expr {
    const opNode = node.getChild('AggregateOp');
    const name = opNode === null ? '' : this.src(opNode);
    const pos = this.range(node);
    if (name === 'limitk' || name === 'limit_ratio')
      return this.fail(pos, `${name}() is experimental and must be enabled with --enable-feature=promql-experimental-functions`);
    if (!(aggregateOps as readonly string[]).includes(name)) return this.fail(pos, `unknown aggregation "${name}"`);
    const op = name as AggregateOp;
    const modifier = node.getChild('AggregateModifier');
    const body = node.getChild('FunctionCallBody');
    const args = body === null ? [] : children(body).map((c) => this.expr(c));
    const withParam = op === 'topk' || op === 'bottomk' || op === 'quantile' || op === 'count_values';
    if (args.length === 0) this.fail(pos, 'no arguments for aggregate expression provided');
    const want = withParam ? 2 : 1;
    if (args.length !== want) this.fail(pos, `wrong number of arguments for aggregate expression provided, expected ${want}, got ${args.length}`);
    const expr = args[args.length - 1] ?? this.fail(pos, 'no arguments for aggregate expression provided');
    const param = withParam ? args[0] : undefined;
    if (typeOf(expr) !== 'vector') this.fail(expr.pos, `expected type instant vector in aggregation expression, got ${documentedType(typeOf(expr))}`);
    if (param !== undefined) {
      const wantParam = op === 'count_values' ? 'string' : 'scalar';
      if (typeOf(param) !== wantParam) this.fail(param.pos, `expected type ${wantParam} in aggregation parameter, got ${documentedType(typeOf(param))}`);
    }
    return {
      kind: 'aggregate',
      op,
      expr,
      grouping: this.grouping(modifier),
      without: modifier?.getChild('Without') != null,
      pos,
      ...(param === undefined ? {} : { param }),
    };
  }

  private matching(clause: SyntaxNode | null, op: BinaryOp): VectorMatching {
    const base: Cardinality = isSetOp(op) ? 'many-to-many' : 'one-to-one';
    if (clause === null) return { card: base, on: false, labels: [], include: [] };
    const groupings = clause.getChildren('GroupingLabels');
    const labels = groupings[0] === undefined ? [] : children(groupings[0]).map((l) => this.labelName(l));
    const include = groupings[1] === undefined ? [] : children(groupings[1]).map((l) => this.labelName(l));
    const card: Cardinality = clause.getChild('GroupLeft') !== null ? 'many-to-one' : clause.getChild('GroupRight') !== null ? 'one-to-many' : base;
    return { card, on: clause.getChild('On') !== null, labels, include };
  }

  private binary(node: SyntaxNode): Expr {
    const parts = children(node);
    const [l, opNode] = parts;
    const r = parts[parts.length - 1];
    const pos = this.range(node);
    if (l === undefined || opNode === undefined || r === undefined || parts.length < 3) return this.fail(pos, 'incomplete binary expression');
    const op = binaryOps[opNode.name] ?? this.fail(opNode.from, `binary expression does not support operator "${this.src(opNode)}"`);
    if (op === '</' || op === '>/') this.fail(opNode.from, `binary operator "${op}" is not supported`);
    if (node.getChild('FillModifier') !== null) this.fail(pos, 'binop fill modifiers are experimental and not enabled');
    const signed = /^\s*([-+])/.exec(this.src(l))?.[1];
    const lhs: Expr =
      op === '^' && l.name === 'NumberDurationLiteral' && signed !== undefined
        ? // The grammar reads "-1" as one literal; in PromQL unary minus binds looser than ^: -1 ^ 2 is -(1 ^ 2).
          this.number(l, true)
        : this.expr(l);
    const rhs = this.expr(r);
    const bool = node.getChild('BoolModifier') !== null;
    const clause = node.getChild('MatchingModifierClause');
    const matching = this.matching(clause, op);
    const signedPower = op === '^' && l.name === 'NumberDurationLiteral' && signed === '-';
    const expr: BinaryExpr = { kind: 'binary', op, lhs, rhs, bool, pos, matching };
    const checked = this.checkBinary(expr, opNode.from, clause !== null);
    return signedPower ? { kind: 'unary', op: '-', expr: checked, pos } : checked;
  }

  /** Prometheus' checks of a binary operation; `matching` is kept only between two vectors. */
  private checkBinary(e: BinaryExpr, opPos: number, explicit = e.matching !== undefined && (e.matching.on || e.matching.labels.length > 0)): BinaryExpr {
    const { op, lhs, rhs, bool, pos } = e;
    const matching = e.matching ?? this.matching(null, op);
    const lt = typeOf(lhs);
    const rt = typeOf(rhs);
    if (bool && !isComparison(op)) this.fail(opPos, 'bool modifier can only be used on comparison operators');
    if (isComparison(op) && !bool && lt === 'scalar' && rt === 'scalar') this.fail(opPos, 'comparisons between scalars must use BOOL modifier');
    if (matching.on)
      for (const label of matching.include)
        if (matching.labels.includes(label)) this.fail(opPos, `label "${label}" must not occur in ON and GROUP clause at once`);
    if (lt !== 'scalar' && lt !== 'vector') this.fail(lhs.pos, 'binary expression must contain only scalar and instant vector types');
    if (rt !== 'scalar' && rt !== 'vector') this.fail(rhs.pos, 'binary expression must contain only scalar and instant vector types');
    const vectors = lt === 'vector' && rt === 'vector';
    if (!vectors && explicit && matching.labels.length > 0) this.fail(pos, 'vector matching only allowed between instant vectors');
    if (vectors && isSetOp(op)) {
      if (matching.card === 'many-to-one' || matching.card === 'one-to-many') this.fail(pos, `no grouping allowed for "${op}" operation`);
    }
    if ((lt === 'scalar' || rt === 'scalar') && isSetOp(op)) this.fail(pos, `set operator "${op}" not allowed in binary scalar expression`);
    const { matching: _dropped, ...rest } = e;
    return vectors ? { ...rest, matching } : rest;
  }

  /** A number literal; `magnitude` drops a leading sign the grammar glued to it (see binary). */
  private number(node: SyntaxNode, magnitude = false): Expr {
    const raw = this.src(node).trim();
    const text = magnitude ? raw.replace(/^[-+]\s*/, '') : raw;
    const n = parseNumberLiteral(text);
    if (!n.ok) return this.fail(node.from, n.error);
    return { kind: 'number', value: n.value.value, duration: n.value.duration, pos: { start: node.from + (raw.length - text.length), end: node.to } };
  }

  private offset(node: SyntaxNode): Expr {
    const inner = children(node)[0];
    let dur = node.getChild('OffsetDurationExpr');
    if (inner === undefined || dur === null) return this.fail(node.from, 'incomplete offset');
    let sign = 1;
    while (dur.getChild('UnaryOp') !== null) {
      if (this.src(dur.getChild('UnaryOp') ?? dur) === '-') sign = -sign;
      const next: SyntaxNode | null = dur.getChild('OffsetDurationExpr');
      if (next === null) break;
      dur = next;
    }
    const ms = sign * this.duration(dur);
    return this.postfix(this.expr(inner), (e) => this.withOffset(e, ms, node.to));
  }

  private withOffset(e: Expr, ms: number, to: number): Expr {
    const pos = { start: e.pos.start, end: to };
    const twice = (): never => this.fail(pos, 'offset may not be set multiple times');
    if (e.kind === 'vector') return e.offsetMs !== 0 ? twice() : { ...e, offsetMs: ms, pos };
    if (e.kind === 'matrix') return e.selector.offsetMs !== 0 ? twice() : { ...e, selector: { ...e.selector, offsetMs: ms }, pos };
    if (e.kind === 'subquery') return e.offsetMs !== 0 ? twice() : { ...e, offsetMs: ms, pos };
    return this.fail(pos, 'offset modifier must be preceded by an instant vector selector or range vector selector or a subquery');
  }

  private at(node: SyntaxNode): Expr {
    const inner = children(node)[0];
    if (inner === undefined) return this.fail(node.from, 'incomplete @ modifier');
    const pre = node.getChild('AtModifierPreprocessors');
    let at: AtModifier;
    if (pre !== null) at = pre.getChild('AtStart') !== null ? { kind: 'start' } : { kind: 'end' };
    else {
      const lit = node.getChild('NumberDurationLiteral');
      const n = lit === null ? undefined : parseNumberLiteral(this.src(lit).trim());
      if (n === undefined || !n.ok) return this.fail(node.from, 'unexpected @ modifier value');
      const seconds = n.value.value;
      if (!Number.isFinite(seconds) || Math.abs(seconds) >= maxAtSeconds) this.fail(node.from, `timestamp out of bounds for @ modifier: ${seconds.toFixed(6)}`);
      at = { kind: 'time', ms: Math.round(seconds * 1000) };
    }
    const pinned = at;
    return this.postfix(this.expr(inner), (e) => this.withAt(e, pinned, node.to));
  }

  private withAt(e: Expr, at: AtModifier, to: number): Expr {
    const pos = { start: e.pos.start, end: to };
    const twice = (): never => this.fail(pos, '@ <timestamp> may not be set multiple times');
    if (e.kind === 'vector') return e.at !== undefined ? twice() : { ...e, at, pos };
    if (e.kind === 'matrix') return e.selector.at !== undefined ? twice() : { ...e, selector: { ...e.selector, at }, pos };
    if (e.kind === 'subquery') return e.at !== undefined ? twice() : { ...e, at, pos };
    return this.fail(pos, '@ modifier must be preceded by an instant vector selector or range vector selector or a subquery');
  }

  private matrix(node: SyntaxNode): Expr {
    const inner = children(node)[0];
    const dur = node.getChild('DurationExpr');
    if (inner === undefined || dur === null) return this.fail(node.from, 'incomplete range selector');
    return this.postfix(this.expr(inner), (e) => this.rangeOf(e, dur, node.to));
  }

  private rangeOf(e: Expr, dur: SyntaxNode, to: number): Expr {
    const pos = { start: e.pos.start, end: to };
    if (e.kind !== 'vector') return this.fail(pos, 'ranges only allowed for vector selectors');
    if (e.offsetMs !== 0 || e.at !== undefined) this.fail(pos, 'no offset or @ modifiers allowed before range');
    const rangeMs = this.duration(dur);
    if (rangeMs <= 0) this.fail(dur.from, `duration must be greater than 0`);
    return { kind: 'matrix', selector: e, rangeMs, pos };
  }

  private subquery(node: SyntaxNode): Expr {
    const inner = children(node)[0];
    const durs = node.getChildren('DurationExpr');
    const [rangeNode, stepNode] = durs;
    if (inner === undefined || rangeNode === undefined) return this.fail(node.from, 'incomplete subquery');
    return this.postfix(this.expr(inner), (e) => this.subqueryOf(e, rangeNode, stepNode, node.to));
  }

  private subqueryOf(e: Expr, rangeNode: SyntaxNode, stepNode: SyntaxNode | undefined, to: number): Expr {
    const pos = { start: e.pos.start, end: to };
    const durs = [rangeNode, stepNode];
    if (typeOf(e) !== 'vector') this.fail(pos, `subquery is only allowed on instant vector, got ${typeOf(e)} instead`);
    const rangeMs = this.duration(rangeNode);
    const stepMs = durs[1] === undefined ? 0 : this.duration(durs[1]);
    if (rangeMs <= 0) this.fail(rangeNode.from, 'duration must be greater than 0');
    if (durs[1] !== undefined && stepMs <= 0) this.fail(durs[1].from, 'duration must be greater than 0');
    return { kind: 'subquery', expr: e, rangeMs, stepMs, offsetMs: 0, pos };
  }

  /**
   * Applies a postfix (range, subquery, offset, @) the way Prometheus' grammar
   * binds it: tighter than any operator, so `a + b[5m]` is `a + (b[5m])`.
   * The official lezer grammar binds it loosely; this moves it onto the
   * rightmost operand and checks the rebuilt operations again.
   */
  private postfix(inner: Expr, apply: (e: Expr) => Expr): Expr {
    if (inner.kind === 'binary') {
      const rhs = this.postfix(inner.rhs, apply);
      const rebuilt = { ...inner, rhs, pos: { start: inner.pos.start, end: rhs.pos.end } };
      this.checkBinary(rebuilt, inner.lhs.pos.end);
      return rebuilt;
    }
    if (inner.kind === 'unary') {
      const x = this.postfix(inner.expr, apply);
      const t = typeOf(x);
      if (t !== 'scalar' && t !== 'vector')
        this.fail(inner.pos, `unary expression only allowed on expressions of type scalar or instant vector, got "${documentedType(t)}"`);
      return { ...inner, expr: x, pos: { start: inner.pos.start, end: x.pos.end } };
    }
    return apply(inner);
  }

  private unary(node: SyntaxNode): Expr {
    const op = node.getChild('UnaryOp');
    const inner = children(node).at(-1);
    if (op === null || inner === undefined || inner.from === op.from) return this.fail(node.from, 'incomplete unary expression');
    const e = this.expr(inner);
    const pos = this.range(node);
    const t = typeOf(e);
    if (t !== 'scalar' && t !== 'vector')
      this.fail(pos, `unary expression only allowed on expressions of type scalar or instant vector, got "${documentedType(t)}"`);
    const sign = this.src(op) === '-' ? '-' : '+';
    // Prometheus folds a sign into a number literal.
    if (e.kind === 'number') return { ...e, value: sign === '-' ? -e.value : e.value, pos };
    return { kind: 'unary', op: sign, expr: e, pos };
  }

  expr(node: SyntaxNode): Expr {
    if (node.type.isError)
      return this.fail(node.from, `unexpected ${node.from >= this.text.length ? 'end of input' : `"${this.text.slice(node.from, node.to + 1)}"`}`);
    switch (node.name) {
      case 'NumberDurationLiteral':
        return this.number(node);
      case 'StringLiteral':
        return { kind: 'string', value: this.string(node), pos: this.range(node) };
      case 'VectorSelector':
        return this.vectorSelector(node);
      case 'MatrixSelector':
        return this.matrix(node);
      case 'SubqueryExpr':
        return this.subquery(node);
      case 'OffsetExpr':
        return this.offset(node);
      case 'StepInvariantExpr':
        return this.at(node);
      case 'FunctionCall':
        return this.call(node);
      case 'AggregateExpr':
        return this.aggregate(node);
      case 'BinaryExpr':
        return this.binary(node);
      case 'UnaryExpr':
        return this.unary(node);
      case 'ParenExpr': {
        const inner = children(node)[0];
        return inner === undefined ? this.fail(node.from, 'empty parentheses') : { kind: 'paren', expr: this.expr(inner), pos: this.range(node) };
      }
      case 'AnchoredExpr':
        return this.fail(node.from, 'anchored modifier is experimental and not enabled');
      case 'SmoothedExpr':
        return this.fail(node.from, 'smoothed modifier is experimental and not enabled');
      default:
        return this.fail(node.from, `unexpected expression "${this.src(node)}"`);
    }
  }
}

/** Whether a matcher matches the empty string (an absent label): such matchers alone would select every series. */
export function matchesEmpty(m: LabelMatcher): boolean {
  if (m.op === '=') return m.value === '';
  if (m.op === '!=') return m.value !== '';
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${m.value})$`, 'su');
  } catch {
    return false;
  }
  return m.op === '=~' ? re.test('') : !re.test('');
}

/** Parses a PromQL query as Prometheus 3.16 does without feature flags; a failure is bad_data with Prometheus' "1:5: parse error: …" shape. */
export function parseExpr(text: string, functions: FunctionSignatures): Result<Expr, PromError> {
  const at = (pos: number, message: string): Result<Expr, PromError> => fail(badData(`${positionOf(text, pos)}: parse error: ${message}`));
  if (text.trim() === '') return fail(badData('unknown position: parse error: no expression found in input'));
  const tree = parser.parse(text);
  const [top, extra] = children(tree.topNode);
  let error: SyntaxNode | undefined;
  tree.iterate({
    enter: (n) => {
      if (error === undefined && n.type.isError) error = n.node;
      return error === undefined;
    },
  });
  if (error !== undefined) {
    // A name the grammar does not know as a function, called: name it, as Prometheus does.
    const called = /([A-Za-z_][A-Za-z0-9_]*)\s*$/.exec(text.slice(0, error.from));
    if (called?.[1] !== undefined && /^\s*\(/.test(text.slice(error.from))) {
      const name = called[1];
      return at(error.from - name.length, experimentalFunctions.has(name) ? `function "${name}" is not enabled` : `unknown function with name "${name}"`);
    }
    if (error.from >= text.trimEnd().length) return at(error.from, 'unexpected end of input');
    return at(error.from, `unexpected character or token "${text.slice(error.from, Math.max(error.to, error.from + 1))}"`);
  }
  if (top === undefined) return fail(badData('unknown position: parse error: no expression found in input'));
  if (extra !== undefined) return at(extra.from, `unexpected "${text.slice(extra.from, extra.to)}"`);
  try {
    return ok(new Walker(text, functions).expr(top));
  } catch (e) {
    if (e instanceof ParseFailure) return at(e.pos, e.message);
    throw e;
  }
}
