// Math, time, label, sort and conversion functions at one step.
import { expect } from 'chai';
import type { Labels } from '../../../../../../../api/compat/prometheus/engine/sample-source.ts';
import { call, expectClose, only, scalar, str, valueOf, vector, vectorOf } from './call-function.ts';

const up = (job: string, extra: Labels = []): Labels => [['__name__', 'up'], ['job', job], ...extra];

describe('PromQL instant functions', () => {
  it('maps each float element and marks the name for removal', () => {
    const el = only(call('abs', [vector([[up('a'), -2.5]])]));
    expect(el).to.deep.include({ f: 2.5, dropName: true });
    expect(el.labels).to.deep.equal(up('a'));
    expectClose(valueOf(call('ceil', [vector([[up('a'), 1.2]])])), 2);
    expectClose(valueOf(call('floor', [vector([[up('a'), -1.2]])])), -2);
    expectClose(valueOf(call('sqrt', [vector([[up('a'), 16]])])), 4);
    expect(Number.isNaN(valueOf(call('sqrt', [vector([[up('a'), -1]])])))).to.equal(true);
    expect(valueOf(call('ln', [vector([[up('a'), 0]])]))).to.equal(-Infinity);
    expectClose(valueOf(call('log2', [vector([[up('a'), 8]])])), 3);
    expectClose(valueOf(call('log10', [vector([[up('a'), 1000]])])), 3);
    expectClose(valueOf(call('exp', [vector([[up('a'), 1]])])), Math.E);
    expectClose(valueOf(call('deg', [vector([[up('a'), Math.PI]])])), 180);
    expectClose(valueOf(call('rad', [vector([[up('a'), 180]])])), Math.PI);
    expectClose(valueOf(call('atanh', [vector([[up('a'), 0.5]])])), 0.5493061443340548);
    expect(Object.is(valueOf(call('sgn', [vector([[up('a'), -0]])])), -0)).to.equal(true);
    expectClose(valueOf(call('sgn', [vector([[up('a'), -3]])])), -1);
  });

  it('clamps, and answers nothing when max < min', () => {
    const v = vector([
      [up('a'), 5],
      [up('b'), -5],
    ]);
    expect(vectorOf(call('clamp', [v, scalar(-1), scalar(1)])).map((e) => e.f)).to.deep.equal([1, -1]);
    expect(vectorOf(call('clamp_min', [v, scalar(0)])).map((e) => e.f)).to.deep.equal([5, 0]);
    expect(vectorOf(call('clamp_max', [v, scalar(0)])).map((e) => e.f)).to.deep.equal([0, -5]);
    expect(vectorOf(call('clamp', [v, scalar(2), scalar(1)]))).to.deep.equal([]);
  });

  it('rounds ties up, to the nearest multiple when given one', () => {
    expectClose(valueOf(call('round', [vector([[up('a'), 2.5]])])), 3);
    expectClose(valueOf(call('round', [vector([[up('a'), -2.5]])])), -2);
    expectClose(valueOf(call('round', [vector([[up('a'), 17]]), scalar(5)])), 15);
    expectClose(valueOf(call('round', [vector([[up('a'), 0.126]]), scalar(0.01)])), 0.13);
  });

  it('sorts by value with NaN last in both directions', () => {
    const v = vector([
      [up('a'), 2],
      [up('b'), NaN],
      [up('c'), 1],
      [up('d'), 3],
    ]);
    expect(vectorOf(call('sort', [v])).map((e) => e.f)).to.deep.equal([1, 2, 3, NaN]);
    expect(vectorOf(call('sort_desc', [v])).map((e) => e.f)).to.deep.equal([3, 2, 1, NaN]);
  });

  it('converts between scalars and vectors', () => {
    expect(only(call('time', [], 90_500))).to.deep.include({ f: 90.5, labels: [] });
    expectClose(valueOf(call('pi', [])), Math.PI);
    expectClose(valueOf(call('scalar', [vector([[up('a'), 7]])])), 7);
    expect(
      Number.isNaN(
        valueOf(
          call('scalar', [
            vector([
              [up('a'), 7],
              [up('b'), 8],
            ]),
          ]),
        ),
      ),
    ).to.equal(true);
    expect(Number.isNaN(valueOf(call('scalar', [vector([])])))).to.equal(true);
    expect(only(call('vector', [scalar(3)]))).to.deep.include({ f: 3, labels: [] });
  });

  it('answers the sample timestamp in seconds for timestamp()', () => {
    expect(only(call('timestamp', [vector([[up('a'), 1]], 12_345)]))).to.deep.include({ f: 12.345, dropName: true });
  });

  it('reads calendar fields in UTC, from the argument or the step time', () => {
    // 1700000000 is Tuesday 2023-11-14 22:13:20 UTC, day 318 of the year.
    const v = vector([[up('a'), 1_700_000_000]]);
    const at = (name: string): number => valueOf(call(name, [v]));
    expect([at('year'), at('month'), at('day_of_month'), at('day_of_week'), at('day_of_year'), at('hour'), at('minute'), at('days_in_month')]).to.deep.equal([
      2023, 11, 14, 2, 318, 22, 13, 30,
    ]);
    expect(only(call('days_in_month', [], Date.UTC(2024, 1, 10)))).to.deep.include({ f: 29, labels: [] });
    expect(valueOf(call('year', []))).to.equal(1970);
  });

  it('replaces labels with Go template expansion', () => {
    const v = vector([[up('api-7'), 1]]);
    const el = only(call('label_replace', [v, str('svc'), str('$1-x'), str('job'), str('(\\w+)-(\\d)')]));
    expect(el.labels).to.deep.equal([
      ['__name__', 'up'],
      ['job', 'api-7'],
      ['svc', 'api-x'],
    ]);
    expect(only(call('label_replace', [v, str('n'), str('${2}$$'), str('job'), str('(?P<name>\\w+)-(\\d)')])).labels).to.deep.include(['n', '7$']);
    expect(only(call('label_replace', [v, str('n'), str('$name'), str('job'), str('(?P<name>\\w+)-(\\d)')])).labels).to.deep.include(['n', 'api']);
    // `$1x` names a group "1x" that does not exist: empty, and an empty value removes the label.
    expect(only(call('label_replace', [v, str('job'), str('$1x'), str('job'), str('(.*)')])).labels).to.deep.equal([['__name__', 'up']]);
    // No match: the element is kept as it was.
    expect(only(call('label_replace', [v, str('svc'), str('x'), str('job'), str('nope')])).labels).to.deep.equal(up('api-7'));
  });

  it('keeps the metric name when label_replace writes __name__', () => {
    const marked = { type: 'vector' as const, value: [{ labels: up('a'), t: 0, f: 1, dropName: true }] };
    expect(only(call('label_replace', [marked, str('__name__'), str('renamed'), str('job'), str('(.*)')])).dropName).to.equal(false);
    expect(only(call('label_replace', [marked, str('x'), str('y'), str('job'), str('(.*)')])).dropName).to.equal(true);
  });

  it('refuses a bad regex, a bad destination and duplicate results as execution errors', () => {
    const v = vector([
      [up('a'), 1],
      [up('b'), 2],
    ]);
    expect(call('label_replace', [v, str('x'), str('y'), str('job'), str('(')])).to.deep.equal({
      ok: false,
      error: { type: 'execution', message: 'invalid regular expression in label_replace(): (' },
    });
    expect(call('label_replace', [v, str(''), str('y'), str('job'), str('.*')])).to.deep.equal({
      ok: false,
      error: { type: 'execution', message: 'invalid destination label name in label_replace(): ' },
    });
    expect(call('label_replace', [v, str('job'), str('same'), str('job'), str('.*')])).to.deep.equal({
      ok: false,
      error: { type: 'execution', message: 'vector cannot contain metrics with the same labelset' },
    });
  });

  it('joins labels with a separator', () => {
    const v = vector([[up('a', [['zone', 'z1']]), 1]]);
    expect(only(call('label_join', [v, str('both'), str('/'), str('job'), str('zone'), str('missing')])).labels).to.deep.include(['both', 'a/z1/']);
    expect(call('label_join', [v, str('x'), str('-'), str('')]).ok).to.equal(false);
  });

  it('answers absent() with the equality matchers once each', () => {
    const matchers = [
      { name: '__name__', op: '=' as const, value: 'up' },
      { name: 'job', op: '=' as const, value: 'a' },
      { name: 'job', op: '=' as const, value: 'b' },
      { name: 'env', op: '=' as const, value: 'prod' },
      { name: 'zone', op: '!=' as const, value: 'x' },
    ];
    expect(only(call('absent', [vector([])], 60_000, 60_000, matchers))).to.deep.include({ labels: [['env', 'prod']], f: 1 });
    expect(only(call('absent', [vector([])]))).to.deep.include({ labels: [], f: 1 });
    expect(vectorOf(call('absent', [vector([[up('a'), 1]])], 60_000, 60_000, matchers))).to.deep.equal([]);
  });
});
