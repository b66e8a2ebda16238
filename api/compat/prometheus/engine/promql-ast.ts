// The PromQL expression tree of Prometheus 3 (promql/parser/ast.go), without
// the feature-flagged constructs: what parse.ts builds from the official
// grammar, what format-expr.ts prints and what the evaluator walks. Every node
// keeps where it stands in the query text for error messages and annotations.
import type { LabelMatcher } from './sample-source.ts';

/** Where a node stands in the query text: character offsets, end exclusive. */
export interface PosRange {
  readonly start: number;
  readonly end: number;
}

export type ValueType = 'scalar' | 'vector' | 'matrix' | 'string';

export const arithmeticOps = ['+', '-', '*', '/', '%', '^', 'atan2'] as const;
export const comparisonOps = ['==', '!=', '>', '<', '>=', '<='] as const;
export const setOps = ['and', 'or', 'unless'] as const;
/** Native-histogram bucket trimming (`</`, `>/`). */
export const trimOps = ['</', '>/'] as const;

export type ArithmeticOp = (typeof arithmeticOps)[number];
export type ComparisonOp = (typeof comparisonOps)[number];
export type SetOp = (typeof setOps)[number];
export type TrimOp = (typeof trimOps)[number];
export type BinaryOp = ArithmeticOp | ComparisonOp | SetOp | TrimOp;

export const aggregateOps = ['sum', 'avg', 'min', 'max', 'count', 'group', 'stddev', 'stdvar', 'topk', 'bottomk', 'quantile', 'count_values'] as const;
export type AggregateOp = (typeof aggregateOps)[number];

/** `@ <timestamp>` (Unix ms), `@ start()` or `@ end()`. */
export type AtModifier = { readonly kind: 'time'; readonly ms: number } | { readonly kind: 'start' } | { readonly kind: 'end' };

export interface NumberLiteral {
  readonly kind: 'number';
  readonly value: number;
  /** Written as a duration ("5m"): printed back as one. */
  readonly duration: boolean;
  readonly pos: PosRange;
}

export interface StringLiteral {
  readonly kind: 'string';
  readonly value: string;
  readonly pos: PosRange;
}

export interface VectorSelector {
  readonly kind: 'vector';
  /** The metric name written before the braces, if any (its matcher is in `matchers` too). */
  readonly name?: string;
  readonly matchers: readonly LabelMatcher[];
  /** As written; negative for `offset -5m`. */
  readonly offsetMs: number;
  readonly at?: AtModifier;
  readonly pos: PosRange;
}

export interface MatrixSelector {
  readonly kind: 'matrix';
  /** Carries the offset and @ of the whole range selector. */
  readonly selector: VectorSelector;
  readonly rangeMs: number;
  readonly pos: PosRange;
}

export interface SubqueryExpr {
  readonly kind: 'subquery';
  readonly expr: Expr;
  readonly rangeMs: number;
  /** 0 when left out (`[5m:]`): the engine's default subquery step. */
  readonly stepMs: number;
  readonly offsetMs: number;
  readonly at?: AtModifier;
  readonly pos: PosRange;
}

export interface ParenExpr {
  readonly kind: 'paren';
  readonly expr: Expr;
  readonly pos: PosRange;
}

export interface UnaryExpr {
  readonly kind: 'unary';
  readonly op: '-' | '+';
  readonly expr: Expr;
  readonly pos: PosRange;
}

export type Cardinality = 'one-to-one' | 'many-to-one' | 'one-to-many' | 'many-to-many';

export interface VectorMatching {
  readonly card: Cardinality;
  /** `on (...)` when true, else `ignoring (...)` (or no clause). */
  readonly on: boolean;
  readonly labels: readonly string[];
  /** group_left/group_right's extra labels taken from the "one" side. */
  readonly include: readonly string[];
}

export interface BinaryExpr {
  readonly kind: 'binary';
  readonly op: BinaryOp;
  readonly lhs: Expr;
  readonly rhs: Expr;
  readonly bool: boolean;
  /** Set when both sides are instant vectors. */
  readonly matching?: VectorMatching;
  readonly pos: PosRange;
}

export interface AggregateExpr {
  readonly kind: 'aggregate';
  readonly op: AggregateOp;
  readonly expr: Expr;
  /** topk/bottomk's k, quantile's φ, count_values' label. */
  readonly param?: Expr;
  readonly grouping: readonly string[];
  readonly without: boolean;
  readonly pos: PosRange;
}

export interface CallExpr {
  readonly kind: 'call';
  readonly fn: string;
  readonly args: readonly Expr[];
  readonly returnType: 'scalar' | 'vector';
  readonly pos: PosRange;
}

export type Expr =
  NumberLiteral | StringLiteral | VectorSelector | MatrixSelector | SubqueryExpr | ParenExpr | UnaryExpr | BinaryExpr | AggregateExpr | CallExpr;

/** The type of value an expression evaluates to, as Prometheus' Expr.Type(). */
export function typeOf(e: Expr): ValueType {
  switch (e.kind) {
    case 'number':
      return 'scalar';
    case 'string':
      return 'string';
    case 'vector':
      return 'vector';
    case 'matrix':
    case 'subquery':
      return 'matrix';
    case 'paren':
    case 'unary':
      return typeOf(e.expr);
    case 'binary':
      return typeOf(e.lhs) === 'scalar' && typeOf(e.rhs) === 'scalar' ? 'scalar' : 'vector';
    case 'aggregate':
      return 'vector';
    case 'call':
      return e.returnType;
  }
}

/** Prometheus' DocumentedType: the name a type has in error messages. */
export function documentedType(t: ValueType): string {
  if (t === 'vector') return 'instant vector';
  if (t === 'matrix') return 'range vector';
  return t;
}

export const isComparison = (op: BinaryOp): op is ComparisonOp => (comparisonOps as readonly string[]).includes(op);
export const isSetOp = (op: BinaryOp): op is SetOp => (setOps as readonly string[]).includes(op);
/** Operators after which the result is no longer the metric the name says (Prometheus' changesMetricSchema). */
export const changesMetricSchema = (op: BinaryOp): boolean => (arithmeticOps as readonly string[]).includes(op);
