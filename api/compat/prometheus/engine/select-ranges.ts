// Which samples each selector of a query needs, before anything is read:
// Prometheus' FindMinMaxTime/getTimeRangesForSelector. A range selector
// reads (t - range, t], an instant selector (t - lookback, t], both moved by
// their offset, pinned by @, and widened by every subquery around them
// (its range and offset, or its own @). The caller clamps or refuses these
// ranges (retention, maxQueryDays) before the engine fetches them.
import type { AtModifier, Expr, SubqueryExpr, VectorSelector } from './promql-ast.ts';
import type { SelectRequest } from './sample-source.ts';

/** One selector of the query and the samples it needs. */
export interface SelectorRange {
  readonly selector: VectorSelector;
  readonly request: SelectRequest;
}

/** The @ modifier's time once start() and end() are known. */
export function atTime(at: AtModifier | undefined, start: number, end: number): number | undefined {
  if (at === undefined) return undefined;
  if (at.kind === 'start') return start;
  if (at.kind === 'end') return end;
  return at.ms;
}

/** The subqueries' offsets and ranges around a selector (an @ on a subquery resets what is outside it). */
function subqueryTimes(path: readonly SubqueryExpr[], start: number, end: number): { offset: number; range: number; at?: number } {
  let offset = 0;
  let range = 0;
  let at: number | undefined;
  for (const s of path) {
    offset += s.offsetMs;
    range += s.rangeMs;
    const t = atTime(s.at, start, end);
    if (t !== undefined) {
      offset = s.offsetMs;
      range = s.rangeMs;
      at = t;
    }
  }
  return at === undefined ? { offset, range } : { offset, range, at };
}

/** Every selector of `expr` with the closed time range of samples it needs for a query over [start, end] (Unix ms). */
export function selectRanges(expr: Expr, start: number, end: number, lookbackMs: number): SelectorRange[] {
  const out: SelectorRange[] = [];
  const visit = (e: Expr, path: readonly SubqueryExpr[], rangeMs: number): void => {
    switch (e.kind) {
      case 'vector': {
        const sub = subqueryTimes(path, start, end);
        let from = sub.at ?? start;
        let to = sub.at ?? end;
        const at = atTime(e.at, start, end);
        if (at !== undefined) {
          from = at;
          to = at;
        } else {
          from -= sub.offset + sub.range;
          to -= sub.offset;
        }
        from -= (rangeMs === 0 ? lookbackMs : rangeMs) - 1;
        out.push({ selector: e, request: { matchers: e.matchers, minT: from - e.offsetMs, maxT: to - e.offsetMs } });
        return;
      }
      case 'matrix':
        visit(e.selector, path, e.rangeMs);
        return;
      case 'subquery':
        visit(e.expr, [...path, e], 0);
        return;
      case 'paren':
      case 'unary':
        visit(e.expr, path, 0);
        return;
      case 'binary':
        visit(e.lhs, path, 0);
        visit(e.rhs, path, 0);
        return;
      case 'aggregate':
        if (e.param !== undefined) visit(e.param, path, 0);
        visit(e.expr, path, 0);
        return;
      case 'call':
        for (const a of e.args) visit(a, path, 0);
        return;
      case 'number':
      case 'string':
        return;
    }
  };
  visit(expr, [], 0);
  return out;
}
