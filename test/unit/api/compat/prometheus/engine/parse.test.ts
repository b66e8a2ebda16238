// The parser's refusals in Prometheus' words, its canonical printing
// (format_query), and that printing then parsing gives the same expression.
import { expect } from 'chai';
import fc from 'fast-check';
import { parseQuery } from '../../../../../../api/compat/prometheus/engine/engine.ts';
import { formatExpr, prettifyExpr } from '../../../../../../api/compat/prometheus/engine/format-expr.ts';

const errorOf = (q: string): string => {
  const r = parseQuery(q);
  return r.ok ? 'parsed' : `${r.error.type}: ${r.error.message}`;
};

const formatted = (q: string): string => {
  const r = parseQuery(q);
  return r.ok ? formatExpr(r.value.expr) : `error: ${r.error.message}`;
};

describe('PromQL parser', () => {
  const refusals: readonly (readonly [string, string])[] = [
    ['rate(up)', 'bad_data: 1:6: parse error: expected type range vector in call to function "rate", got instant vector'],
    ['sum(up[5m])', 'bad_data: 1:5: parse error: expected type instant vector in aggregation expression, got range vector'],
    ['1 > 2', 'bad_data: 1:3: parse error: comparisons between scalars must use BOOL modifier'],
    ['up + bool up', 'bad_data: 1:4: parse error: bool modifier can only be used on comparison operators'],
    ['up and 1', 'bad_data: 1:1: parse error: set operator "and" not allowed in binary scalar expression'],
    ['up and on(job) group_left up', 'bad_data: 1:1: parse error: no grouping allowed for "and" operation'],
    ['{job=""}', 'bad_data: 1:1: parse error: vector selector must contain at least one non-empty matcher'],
    ['up{__name__="x"}', 'bad_data: 1:1: parse error: metric name must not be set twice: "up" or "x"'],
    ['limitk(1, up)', 'bad_data: 1:1: parse error: limitk() is experimental and must be enabled with --enable-feature=promql-experimental-functions'],
    ['mad_over_time(up[5m])', 'bad_data: 1:1: parse error: function "mad_over_time" is not enabled'],
    ['holt_winters(up[5m], 0.5, 0.5)', 'bad_data: 1:1: parse error: unknown function with name "holt_winters"'],
    ['up[1m+1m]', 'bad_data: 1:4: parse error: experimental duration expression is not enabled'],
    ['label_replace(up)', 'bad_data: 1:1: parse error: expected 5 argument(s) in call to "label_replace", got 1'],
    ['sum(up) offset 5m', 'bad_data: 1:1: parse error: offset modifier must be preceded by an instant vector selector or range vector selector or a subquery'],
    ['up offset 1m offset 2m', 'bad_data: 1:1: parse error: offset may not be set multiple times'],
    ['up @ 1 @ 2', 'bad_data: 1:1: parse error: @ <timestamp> may not be set multiple times'],
    ['sum(up) @ 1', 'bad_data: 1:1: parse error: @ modifier must be preceded by an instant vector selector or range vector selector or a subquery'],
    ['rate(sum(up)[5m])', 'bad_data: 1:6: parse error: ranges only allowed for vector selectors'],
    ['up{a=~"("}', 'bad_data: 1:4: parse error: error parsing regexp: Invalid regular expression: /^(?:()$/su: Unterminated group'],
    ['', 'bad_data: unknown position: parse error: no expression found in input'],
    ['-"a"', 'bad_data: 1:1: parse error: unary expression only allowed on expressions of type scalar or instant vector, got "string"'],
    // Ranges, subqueries, offset and @ bind tighter than any operator, as in Prometheus' grammar.
    ['up + up[5m]', 'bad_data: 1:6: parse error: binary expression must contain only scalar and instant vector types'],
    ['-up[5m:]', 'bad_data: 1:1: parse error: unary expression only allowed on expressions of type scalar or instant vector, got "range vector"'],
    ['count_values(1, up)', 'bad_data: 1:14: parse error: expected type string in aggregation parameter, got scalar'],
  ];
  for (const [query, message] of refusals) {
    it(`refuses ${JSON.stringify(query)}`, () => {
      expect(errorOf(query)).to.equal(message);
    });
  }

  const canonical: readonly (readonly [string, string])[] = [
    ['sum(rate(http_requests_total[5m])) by (job)', 'sum by (job) (rate(http_requests_total[5m]))'],
    ['sum without() (x)', 'sum without () (x)'],
    ['x offset -5m', 'x offset -5m'],
    ['x @ 100', 'x @ 100.000'],
    ['x[90m] @ end() offset 1h', 'x[1h30m] @ end() offset 1h'],
    ['rate(x[5m:])', 'rate(x[5m:])'],
    ['max_over_time((x)[1h:5m] @ start() offset 1d)', 'max_over_time((x)[1h:5m] @ start() offset 1d)'],
    ['{"my.metric", "my.label"="v"}', '{"my.label"="v",__name__="my.metric"}'],
    ['a*on(x)group_left(y)b', 'a * on (x) group_left (y) b'],
    ['a / ignoring(x) group_right b', 'a / ignoring (x) group_right () b'],
    ['-1 ^ 2', '-1 ^ 2'],
    ['foo{b="1",a="2"}', 'foo{a="2",b="1"}'],
    ['1e3 + 0x10 + 010', '1000 + 16 + 8'],
    ['time() - 5m', 'time() - 5m'],
    ['x > bool 1', 'x > bool 1'],
    ['topk(3, x)', 'topk(3, x)'],
    ['count_values("v", x)', 'count_values("v", x)'],
    ['x[1w]', 'x[1w]'],
    ['x[8d]', 'x[8d]'],
    ['label_replace(up, "a", "$1", "b", "(.*)")', 'label_replace(up, "a", "$1", "b", "(.*)")'],
    ['"a\\nb"', '"a\\nb"'],
  ];
  for (const [query, text] of canonical) {
    it(`prints ${JSON.stringify(query)} as Prometheus does`, () => {
      expect(formatted(query)).to.equal(text);
    });
  }

  it('prettifies what is longer than 100 characters over indented lines', () => {
    const q = parseQuery('sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{namespace="kube-system", container!=""}[5m]))');
    expect(q.ok).to.equal(true);
    if (!q.ok) return;
    expect(prettifyExpr(q.value.expr)).to.equal(
      ['sum by (namespace, pod) (', '  rate(container_cpu_usage_seconds_total{container!="",namespace="kube-system"}[5m])', ')'].join('\n'),
    );
  });

  it('parses its own printing back to the same expression', () => {
    const name = fc.constantFrom('up', 'http_requests_total', 'node:cpu:rate5m', '{"my.metric"}');
    const matcher = fc
      .tuple(fc.constantFrom('job', 'instance', '"a.b"'), fc.constantFrom('=', '!=', '=~', '!~'), fc.constantFrom('x', 'a.*', 'b|c', ''))
      .map(([n, op, v]) => `${n}${op}${JSON.stringify(v)}`);
    const selector = fc.tuple(name, fc.array(matcher, { maxLength: 2 })).map(([n, ms]) => {
      if (ms.length === 0) return n;
      return n.startsWith('{') ? `{${[n.slice(1, -1), ...ms].join(',')}}` : `${n}{${ms.join(',')}}`;
    });
    const mods = fc.tuple(fc.constantFrom('', ' offset 5m', ' offset -1h', ' @ 100', ' @ end()')).map(([m]) => m);
    const vector: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.tuple(selector, mods).map(([s, m]) => `${s}${m}`),
        fc
          .tuple(fc.constantFrom('rate', 'max_over_time', 'count_over_time'), selector, fc.constantFrom('5m', '1h30m', '90s'), mods)
          .map(([f, s, r, m]) => `${f}(${s}[${r}]${m})`),
        fc
          .tuple(fc.constantFrom('sum', 'avg', 'max', 'count'), fc.constantFrom('', ' by (job)', ' without (instance, "a.b")'), tie('v'))
          .map(([a, g, v]) => `${a}${g} (${v})`),
        fc
          .tuple(tie('v'), fc.constantFrom('+', '*', '/', '^', '>', '> bool', 'and', 'or', 'unless', '* on (job) group_left (x)', '- ignoring (a)'), tie('v'))
          .map(([l, op, r]) => `${l} ${op} ${r}`),
        fc.tuple(tie('v'), fc.integer({ min: -5, max: 5 })).map(([v, n]) => `${v} * ${n}`),
        tie('v').map((v) => `(${v})`),
        tie('v').map((v) => `-${v}`),
        fc.tuple(tie('v'), fc.constantFrom('[5m:]', '[1h:1m]', '[10m:30s] offset 1m')).map(([v, s]) => `max_over_time((${v})${s})`),
        fc.tuple(fc.integer({ min: 1, max: 5 }), tie('v')).map(([k, v]) => `topk(${k}, ${v})`),
      ),
    })).v;
    fc.assert(
      fc.property(vector, (q) => {
        const first = parseQuery(q);
        if (!first.ok) return; // the generator can build a query Prometheus refuses (e.g. a comparison of scalars); refusal is checked above
        const printed = formatExpr(first.value.expr);
        const second = parseQuery(printed);
        expect(second.ok, `${q} → ${printed}`).to.equal(true);
        if (second.ok) expect(formatExpr(second.value.expr)).to.equal(printed);
      }),
      { numRuns: 400 },
    );
  });
});
