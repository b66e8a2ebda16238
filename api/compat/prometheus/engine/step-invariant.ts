// Which parts of a query give the same answer at every step (Prometheus'
// preprocessExprHelper): what depends only on selectors pinned by @. A range
// query evaluates such a part once, at its first step, and repeats the
// answer, as Prometheus' StepInvariantExpr does.
import type { Expr } from './promql-ast.ts';

/** Functions whose answer depends on the step's time even when their arguments do not (AtModifierUnsafeFunctions). */
const stepDependent = new Set([
  'days_in_month',
  'day_of_month',
  'day_of_week',
  'day_of_year',
  'hour',
  'minute',
  'month',
  'year',
  'predict_linear',
  'time',
  'timestamp',
]);

/** Whether `e` answers the same at every step. */
export function isStepInvariant(e: Expr): boolean {
  switch (e.kind) {
    case 'vector':
      return e.at !== undefined;
    case 'matrix':
      return e.selector.at !== undefined;
    case 'subquery':
      return e.at !== undefined;
    case 'number':
    case 'string':
      return true;
    case 'paren':
    case 'unary':
      return isStepInvariant(e.expr);
    case 'aggregate':
      return isStepInvariant(e.expr);
    case 'binary':
      return isStepInvariant(e.lhs) && isStepInvariant(e.rhs);
    case 'call': {
      const args = e.args.map(unwrap);
      const all = args.every(isStepInvariant);
      // timestamp(metric @ t) repeats the pinned sample's time.
      if (e.fn === 'timestamp') return all && args.every((a) => a.kind === 'vector');
      return all && !stepDependent.has(e.fn);
    }
  }
}

/** Whether evaluating `e` once and repeating it is worth it (literals are already constant). */
export function worthPinning(e: Expr): boolean {
  return e.kind !== 'number' && e.kind !== 'string' && e.kind !== 'matrix' && e.kind !== 'subquery' && isStepInvariant(e);
}

/** `e` without the parentheses around it. */
export function unwrap(e: Expr): Expr {
  return e.kind === 'paren' ? unwrap(e.expr) : e;
}
