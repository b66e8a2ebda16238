// Pure parts of request handling: time magnitudes, intervals, cursors, units, codecs.
import { expect } from 'chai';
import fc from 'fast-check';
import { isLeft } from 'fp-ts/lib/Either.js';
import { nsTextToMs, resolveRange, toNanoseconds } from '../../../api/query/time-range.ts';
import { planBuckets } from '../../../api/v1/timeseries/bucket-plan.ts';
import { decodeCursor, encodeCursor, filterDigest } from '../../../api/v1/query/cursor.ts';
import { unitNames } from '../../../api/v1/timeseries/ucum-units.ts';
import { LogQuery } from '../../../api/v1/logs/log-codecs.ts';
import { TimeseriesRequest } from '../../../api/v1/timeseries/timeseries-codecs.ts';
import { formatDecodeErrors } from '../../../src/codec/decode-errors.ts';
import { SqlParams } from '../../../api/query/sql-params.ts';
import { matchAny, matchAnyInsensitive, matchAttributes } from '../../../api/v1/query/filters.ts';
import { periodsTouching } from '../../../api/v1/usage/usage-periods.ts';
import { requestPath } from '../../../src/ops/ops-listener.ts';
import { infoOfTuple } from '../../../api/v1/timeseries/timeseries-queries.ts';

describe('api/request parts', () => {
  it('reads time bounds as s, ms, µs or ns by magnitude', () => {
    const ns = 1_795_000_000_123_000_000n;
    expect(toNanoseconds(1_795_000_000.123)).to.equal(ns);
    expect(toNanoseconds(1_795_000_000_123)).to.equal(ns);
    expect(toNanoseconds(1_795_000_000_123_000)).to.equal(ns);
    expect(toNanoseconds(99_999_999_999)).to.equal(99_999_999_999n * 1_000_000_000n);
    expect(toNanoseconds(100_000_000_000)).to.equal(100_000_000_000n * 1_000_000n);
    const r = resolveRange(10, 5, 0n);
    expect(r.ok).to.equal(false);
    const open = resolveRange(10, undefined, 42_000_000_000n);
    expect(open.ok && open.value.endNs).to.equal(42_000_000_000n);
  });

  it('turns ns text into whole ms exactly as the bigint division does', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 18n), max: 2n ** 63n - 1n }), (ns) => {
        expect(nsTextToMs(ns.toString())).to.equal(Number(ns / 1_000_000n));
      }),
    );
    expect(nsTextToMs('999999')).to.equal(0);
    expect(nsTextToMs('1795000000123456789')).to.equal(1_795_000_000_123);
  });

  it('takes the path of a request target, origin-form or absolute-form', () => {
    expect(requestPath('/healthz')).to.equal('/healthz');
    expect(requestPath('/metrics?x=1')).to.equal('/metrics');
    expect(requestPath('/v1/tenants/a%2Fb/logs?')).to.equal('/v1/tenants/a%2Fb/logs');
    expect(requestPath('http://api.example:8080/readyz?full=1')).to.equal('/readyz');
  });

  it('reads the aggregated metric description as an unnamed or a named tuple', () => {
    const expected = { name: 'm', type: 'sum', temporality: 'cumulative', monotonic: true, unit: 'By', description: 'bytes sent' };
    expect(infoOfTuple('m', ['sum', 'cumulative', true, 'By', 'bytes sent'])).to.deep.equal(expected);
    expect(infoOfTuple('m', { metric_type: 'sum', temporality: 'cumulative', is_monotonic: true, unit: 'By', description: 'bytes sent' })).to.deep.equal(
      expected,
    );
  });

  it('picks the smallest default interval giving at most 300 points', () => {
    const hour = planBuckets(0, 3_600_000, undefined);
    expect(hour.ok && hour.value.stepMs).to.equal(15_000); // 3600/10 = 360 > 300; 3600/15 = 240
    const fiveMinutes = planBuckets(0, 300_000, undefined);
    expect(fiveMinutes.ok && fiveMinutes.value.stepMs).to.equal(1000);
    const day = planBuckets(0, 86_400_000, undefined);
    expect(day.ok && day.value.stepMs).to.equal(300_000);
    expect(planBuckets(0, 86_400_000, 1).ok).to.equal(false); // 86,400 points > 11,000
    const aligned = planBuckets(90_000, 200_000, 60);
    expect(aligned.ok && [aligned.value.originMs, aligned.value.points]).to.deep.equal([60_000, 3]);
  });

  it('round-trips cursors and refuses tampered or foreign ones', () => {
    const digest = filterDigest(['logs', 'acme', { body: ['x'] }]);
    const text = encodeCursor(digest, { key: ['123', 'id'], frozenEndNs: '99' });
    const back = decodeCursor(text, digest, 2);
    expect(back.ok && back.value).to.deep.equal({ key: ['123', 'id'], frozenEndNs: '99' });
    expect(decodeCursor(text, filterDigest(['logs', 'acme', { body: ['y'] }]), 2).ok).to.equal(false);
    expect(decodeCursor(text + 'x', digest, 2).ok).to.equal(false);
    expect(decodeCursor('not a cursor!', digest, 2).ok).to.equal(false);
    expect(filterDigest({ a: 1, b: [2] })).to.equal(filterDigest({ b: [2], a: 1 }));
  });

  it('names UCUM units', () => {
    expect(unitNames('ms')).to.deep.equal({ name: 'millisecond', short_name: 'ms' });
    expect(unitNames('By')).to.deep.equal({ name: 'byte', short_name: 'B' });
    expect(unitNames('1')).to.deep.equal({ name: '', short_name: '' });
    expect(unitNames('By/s')).to.deep.equal({ name: 'byte per second', short_name: 'B/s' });
    expect(unitNames('{requests}')).to.deep.equal({ name: 'requests', short_name: 'requests' });
  });

  it('names unknown and mistyped fields', () => {
    const bad = LogQuery.decode({ startTime: 1, bodyy: 'x', pagination: { limit: 0, pge: 'x' } });
    expect(isLeft(bad)).to.equal(true);
    if (!isLeft(bad)) return;
    const text = formatDecodeErrors(bad.left).join('\n');
    expect(text).to.contain('unknown field "bodyy"');
    const nested = LogQuery.decode({ startTime: 1, pagination: { limit: 0 } });
    expect(isLeft(nested) && formatDecodeErrors(nested.left).join()).to.contain('pagination.limit');
    const ts = TimeseriesRequest.decode({ startTime: 1, queries: [{ metrics: ['a'], operatr: 'avg' }] });
    expect(isLeft(ts) && formatDecodeErrors(ts.left).join()).to.contain('unknown field "queries[0].operatr"');
  });

  it('never puts a filter value or attribute key into SQL text', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1 }), { minLength: 1, maxLength: 4 }), fc.string({ minLength: 1 }), (values, key) => {
        const params = new SqlParams();
        const sql = [matchAny(params, 'c', values), matchAnyInsensitive(params, 'body', values), ...matchAttributes(params, ['m'], { [key]: values })].join(
          ' ',
        );
        // The SQL is made only of our own fixed text and placeholders.
        expect(sql.replace(/\{p\d+:[A-Za-z0-9()]+\}/g, '')).to.match(/^[A-Za-z0-9_ ()=,[\]]*$/);
        expect(Object.values(params.values).flat()).to.include.members(values.filter((v) => !v.includes('%')));
      }),
    );
  });

  it('lists the UTC days and months touching a range', () => {
    const day = 86_400_000_000_000n;
    expect(periodsTouching(0n, day, 'day', 10)?.map((p) => p.firstDay)).to.deep.equal([0]);
    expect(periodsTouching(1n, day + 1n, 'day', 10)?.map((p) => p.firstDay)).to.deep.equal([0, 1]);
    expect(periodsTouching(day * 20n, day * 40n, 'month', 10)).to.deep.equal([
      { firstDay: 0, endDay: 31 },
      { firstDay: 31, endDay: 59 },
    ]);
    expect(periodsTouching(0n, day * 100n, 'day', 10)).to.equal(undefined);
  });
});
