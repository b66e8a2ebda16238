// PromQL text → Tenantry's expression tree: every supported construct, and
// every other one refused with a message naming it.
import { expect } from 'chai';
import { parsePromql } from '../../../../../api/compat/prometheus/promql-parser.ts';
import type { Expr } from '../../../../../api/compat/prometheus/promql-ast.ts';

const parse = (q: string): Expr => {
  const r = parsePromql(q);
  if (!r.ok) throw new Error(`${q}: ${r.error.message}`);
  return r.value;
};
const refusal = (q: string): string => {
  const r = parsePromql(q);
  if (r.ok) throw new Error(`${q} parsed`);
  return r.error.message;
};
const name = (n: string): { name: string; op: '='; value: string } => ({ name: '__name__', op: '=', value: n });

describe('promql parser', () => {
  it('reads selectors with all four matchers, quoted names and escapes', () => {
    expect(parse('up{a="b", c!="d", e=~"f.*", g!~\'h\\n\'}')).to.deep.equal({
      kind: 'vector', pos: 0, offsetMs: 0,
      matchers: [name('up'), { name: 'a', op: '=', value: 'b' }, { name: 'c', op: '!=', value: 'd' }, { name: 'e', op: '=~', value: 'f.*' }, { name: 'g', op: '!~', value: 'h\n' }],
    });
    expect(parse('{__name__=~"a|b"}')).to.include({ kind: 'vector' });
    expect(parse('{"my.metric", x=`raw\\n`}')).to.deep.include({ matchers: [name('my.metric'), { name: 'x', op: '=', value: 'raw\\n' }] });
  });

  it('reads range selectors and offsets (also negative)', () => {
    expect(parse('x[1m30s] offset 5m')).to.deep.equal({ kind: 'matrix', pos: 0, rangeMs: 90_000, selector: { kind: 'vector', pos: 0, offsetMs: 300_000, matchers: [name('x')] } });
    expect(parse('x offset -1h')).to.deep.include({ offsetMs: -3_600_000 });
    expect(parse('x[90]')).to.deep.include({ rangeMs: 90_000 });
  });

  it('reads every supported function, aggregation and operator', () => {
    for (const fn of ['rate', 'irate', 'increase', 'delta', 'avg_over_time', 'sum_over_time', 'min_over_time', 'max_over_time', 'count_over_time', 'last_over_time']) {
      expect(parse(`${fn}(x[5m])`)).to.deep.include({ kind: 'range_call', fn });
    }
    expect(parse('abs(x)')).to.deep.include({ kind: 'vector_call', fn: 'abs', scalars: [] });
    expect(parse('clamp_min(x, -1)')).to.deep.include({ fn: 'clamp_min', scalars: [{ kind: 'number', value: -1, pos: 13 }] });
    expect(parse('clamp_max(x, 2)')).to.deep.include({ fn: 'clamp_max' });
    expect(parse('round(x, 0.5)')).to.deep.include({ fn: 'round' });
    expect(parse('histogram_quantile(0.9, x_bucket)')).to.deep.include({ fn: 'histogram_quantile', scalars: [{ kind: 'number', value: 0.9, pos: 19 }] });
    for (const op of ['sum', 'avg', 'min', 'max', 'count']) expect(parse(`${op} by (a, b) (x)`)).to.deep.include({ kind: 'aggregate', op, grouping: { without: false, labels: ['a', 'b'] } });
    expect(parse('sum(x) without (a)')).to.deep.include({ grouping: { without: true, labels: ['a'] } });
    expect(parse('topk(3, x)')).to.deep.include({ op: 'topk', param: { kind: 'number', value: 3, pos: 5 } });
    expect(parse('bottomk by (a) (2, x)')).to.deep.include({ op: 'bottomk' });
    for (const op of ['+', '-', '*', '/', '%', '^', '==', '!=', '>', '<', '>=', '<=']) {
      expect(parse(`x ${op} bool y`.replace(/ bool/, ['==', '!=', '>', '<', '>=', '<='].includes(op) ? ' bool' : ''))).to.deep.include({ kind: 'binary', op });
    }
    expect(parse('x / on(a) y')).to.deep.include({ matching: { on: true, labels: ['a'] }, bool: false });
    expect(parse('x > bool ignoring(a) y')).to.deep.include({ matching: { on: false, labels: ['a'] }, bool: true });
    expect(parse('-x')).to.deep.include({ kind: 'negate' });
    expect(parse('(1 + 2) * -3')).to.deep.include({ kind: 'binary', op: '*', rhs: { kind: 'number', value: -3, pos: 10 } });
  });

  it('skips comments', () => {
    expect(parse('sum( # total\n  rate(x[5m]) # per second\n)')).to.deep.include({ kind: 'aggregate', op: 'sum' });
    expect(parse('# header\n-x')).to.deep.include({ kind: 'negate' });
  });

  it('binds unary minus looser than ^ also on a signed literal', () => {
    expect(parse('-1 ^ 2')).to.deep.equal({ kind: 'negate', pos: 0, expr: { kind: 'binary', op: '^', bool: false, pos: 0, lhs: { kind: 'number', value: 1, pos: 1 }, rhs: { kind: 'number', value: 2, pos: 5 } } });
    expect(parse('-1 * 2')).to.deep.include({ kind: 'binary', op: '*', lhs: { kind: 'number', value: -1, pos: 0 } });
  });

  it('reads numbers as Prometheus does', () => {
    const value = (q: string): number => (parse(q) as { value: number }).value;
    expect(value('1.5e3')).to.equal(1500);
    expect(value('0x1F')).to.equal(31);
    expect(value('Inf')).to.equal(Infinity);
    expect(value('-Inf')).to.equal(-Infinity);
    expect(Number.isNaN(value('NaN'))).to.equal(true);
    expect(value('.5')).to.equal(0.5);
  });

  it('refuses unsupported constructs by name', () => {
    expect(refusal('predict_linear(x[5m], 60)')).to.equal('unsupported function "predict_linear"');
    expect(refusal('label_replace(x, "a", "b", "c", "d")')).to.equal('unsupported function "label_replace"');
    expect(refusal('holt_winters(x[1m], 0.5, 0.5)')).to.equal('unsupported function "holt_winters"');
    expect(refusal('no_such_function(up)')).to.equal('unsupported function "no_such_function"');
    expect(refusal('quantile(0.9, x)')).to.equal('unsupported aggregation "quantile"');
    expect(refusal('count_values("v", x)')).to.equal('unsupported aggregation "count_values"');
    expect(refusal('x and y')).to.equal('unsupported binary operator "and"');
    expect(refusal('x or y')).to.equal('unsupported binary operator "or"');
    expect(refusal('x unless y')).to.equal('unsupported binary operator "unless"');
    expect(refusal('x * on(a) group_left y')).to.include('group_left');
    expect(refusal('x * on(a) group_right y')).to.include('group_right');
    expect(refusal('rate(x[5m:1m])')).to.include('subquery');
    expect(refusal('x @ 100')).to.equal('unsupported modifier "@"');
    expect(refusal('"text"')).to.include('string literal');
  });

  it('refuses type errors and syntax errors as Prometheus does', () => {
    expect(refusal('rate(x)')).to.equal('expected type range vector in call to function "rate", got instant vector');
    expect(refusal('abs(x[5m])')).to.equal('expected type instant vector in call to function "abs", got range vector');
    expect(refusal('sum(x[5m])')).to.include('expected type instant vector in aggregation expression');
    expect(refusal('x[5m] + 1')).to.include('binary expression must contain only scalar and instant vector types');
    expect(refusal('1 > 2')).to.equal('comparisons between scalars must use BOOL modifier');
    expect(refusal('x + bool y')).to.equal('bool modifier can only be used on comparison operators');
    expect(refusal('{a=""}')).to.equal('vector selector must contain at least one non-empty matcher');
    expect(refusal('sum(x')).to.include('parse error');
    expect(refusal('x +')).to.include('parse error');
    expect(refusal('  ')).to.include('no expression found');
    expect(refusal('rate(x[5m], 1)')).to.include('expected 1 argument(s)');
  });
});
