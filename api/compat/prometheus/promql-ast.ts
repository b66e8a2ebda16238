// The PromQL expressions Tenantry evaluates, as a small tree of its own built
// from the official grammar's syntax tree (promql-parser.ts). Every node
// keeps its position in the query text for error messages.

export type MatchOp = '=' | '!=' | '=~' | '!~';

export interface LabelMatcher {
  readonly name: string;
  readonly op: MatchOp;
  readonly value: string;
}

/** Where a node starts in the query text (a character offset). */
export interface Positioned { readonly pos: number }

export interface NumberLiteral extends Positioned { readonly kind: 'number'; readonly value: number }

export interface VectorSelector extends Positioned {
  readonly kind: 'vector';
  readonly matchers: readonly LabelMatcher[];
  readonly offsetMs: number;
}

export interface MatrixSelector extends Positioned {
  readonly kind: 'matrix';
  readonly selector: VectorSelector;
  readonly rangeMs: number;
}

/** Functions over a range vector, one value per series and step. */
export const rangeFunctions = ['rate', 'irate', 'increase', 'delta', 'avg_over_time', 'sum_over_time', 'min_over_time', 'max_over_time', 'count_over_time', 'last_over_time'] as const;
export type RangeFunction = typeof rangeFunctions[number];

/** Functions of an instant vector and scalar arguments. */
export const vectorFunctions = ['abs', 'clamp_min', 'clamp_max', 'round', 'histogram_quantile'] as const;
export type VectorFunction = typeof vectorFunctions[number];

export interface RangeCall extends Positioned {
  readonly kind: 'range_call';
  readonly fn: RangeFunction;
  readonly arg: MatrixSelector;
}

export interface VectorCall extends Positioned {
  readonly kind: 'vector_call';
  readonly fn: VectorFunction;
  readonly arg: Expr;
  /** The scalar arguments besides the vector (clamp bound, round's "to nearest", histogram_quantile's φ). */
  readonly scalars: readonly Expr[];
}

export const aggregateOps = ['sum', 'avg', 'min', 'max', 'count', 'topk', 'bottomk'] as const;
export type AggregateOp = typeof aggregateOps[number];

export interface Grouping {
  readonly without: boolean;
  readonly labels: readonly string[];
}

export interface Aggregate extends Positioned {
  readonly kind: 'aggregate';
  readonly op: AggregateOp;
  /** topk/bottomk's k. */
  readonly param?: Expr;
  readonly expr: Expr;
  /** Absent: aggregate everything into one series. */
  readonly grouping?: Grouping;
}

export const arithmeticOps = ['+', '-', '*', '/', '%', '^'] as const;
export const comparisonOps = ['==', '!=', '>', '<', '>=', '<='] as const;
export type ArithmeticOp = typeof arithmeticOps[number];
export type ComparisonOp = typeof comparisonOps[number];
export type BinaryOp = ArithmeticOp | ComparisonOp;

export interface VectorMatching {
  /** on(...) when true, ignoring(...) when false. */
  readonly on: boolean;
  readonly labels: readonly string[];
}

export interface Binary extends Positioned {
  readonly kind: 'binary';
  readonly op: BinaryOp;
  readonly lhs: Expr;
  readonly rhs: Expr;
  /** The bool modifier of a comparison. */
  readonly bool: boolean;
  readonly matching?: VectorMatching;
}

export interface Negation extends Positioned { readonly kind: 'negate'; readonly expr: Expr }

export type Expr = NumberLiteral | VectorSelector | MatrixSelector | RangeCall | VectorCall | Aggregate | Binary | Negation;

/** What an expression evaluates to. */
export type ValueType = 'scalar' | 'vector' | 'matrix';

export const isComparison = (op: BinaryOp): op is ComparisonOp => (comparisonOps as readonly string[]).includes(op);

/** The type of an expression (the parser only builds well-typed trees). */
export function typeOf(e: Expr): ValueType {
  switch (e.kind) {
    case 'number': return 'scalar';
    case 'matrix': return 'matrix';
    case 'negate': return typeOf(e.expr);
    case 'binary': return typeOf(e.lhs) === 'scalar' && typeOf(e.rhs) === 'scalar' ? 'scalar' : 'vector';
    default: return 'vector';
  }
}
