// /api/v1/parse_query's answer: a query's syntax tree in the JSON shape
// Prometheus' HTTP API gives it (web/api/v1's translation of its AST), so
// tools that draw or inspect a query's tree read Tenantry's the same way.
import type { AtModifier, Expr, VectorSelector } from './engine/promql-ast.ts';
import type { LabelMatcher } from './engine/sample-source.ts';
import { functionTable } from './engine/functions/function-table.ts';
import { formatSampleValue } from './prom-float.ts';

type Tree = Record<string, unknown>;

const matchers = (ms: readonly LabelMatcher[]): Tree[] => ms.map((m) => ({ type: m.op, name: m.name, value: m.value }));

/** `@ t` as its millisecond timestamp; `@ start()`/`@ end()` as startOrEnd. */
const atFields = (at: AtModifier | undefined): Tree => ({
  timestamp: at?.kind === 'time' ? at.ms : null,
  startOrEnd: at === undefined || at.kind === 'time' ? null : at.kind,
});

/** A selector's fields; 3.16 also names the flagged modifiers (anchored, smoothed) and duration expressions, never set without their flags. */
function selector(s: VectorSelector): Tree {
  return { name: s.name ?? '', offset: s.offsetMs, offsetExpr: null, matchers: matchers(s.matchers), anchored: false, smoothed: false, ...atFields(s.at) };
}

/** The JSON syntax tree of a parsed expression. */
export function parsedTree(e: Expr): Tree {
  switch (e.kind) {
    case 'number':
      return { type: 'numberLiteral', val: formatSampleValue(e.value) };
    case 'string':
      return { type: 'stringLiteral', val: e.value };
    case 'paren':
      return { type: 'parenExpr', expr: parsedTree(e.expr) };
    // Prometheus' parser folds a sign into the number it stands before.
    case 'unary':
      return e.expr.kind === 'number'
        ? { type: 'numberLiteral', val: formatSampleValue(e.op === '-' ? -e.expr.value : e.expr.value) }
        : { type: 'unaryExpr', op: e.op, expr: parsedTree(e.expr) };
    case 'vector':
      return { type: 'vectorSelector', ...selector(e) };
    case 'matrix': {
      return { type: 'matrixSelector', ...selector(e.selector), range: e.rangeMs, rangeExpr: null };
    }
    case 'subquery':
      return {
        type: 'subquery',
        expr: parsedTree(e.expr),
        range: e.rangeMs,
        rangeExpr: null,
        offset: e.offsetMs,
        offsetExpr: null,
        step: e.stepMs,
        stepExpr: null,
        ...atFields(e.at),
      };
    case 'aggregate':
      return {
        type: 'aggregation',
        op: e.op,
        expr: parsedTree(e.expr),
        param: e.param === undefined ? null : parsedTree(e.param),
        grouping: e.grouping,
        without: e.without,
      };
    case 'binary':
      return {
        type: 'binaryExpr',
        op: e.op,
        lhs: parsedTree(e.lhs),
        rhs: parsedTree(e.rhs),
        matching:
          e.matching === undefined
            ? null
            : {
                card: e.matching.card,
                labels: e.matching.labels,
                on: e.matching.on,
                include: e.matching.include,
                fillValues: { lhs: null, rhs: null },
              },
        bool: e.bool,
      };
    case 'call': {
      const def = functionTable.get(e.fn);
      return {
        type: 'call',
        func: { name: e.fn, argTypes: def?.argTypes ?? [], variadic: def?.optional ?? 0, returnType: e.returnType },
        args: e.args.map(parsedTree),
      };
    }
  }
}
