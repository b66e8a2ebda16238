// Time and duration parameters as Prometheus reads them, and sample values
// as it prints them (Go's strconv 'f' format, -1 precision).
import { expect } from 'chai';
import fc from 'fast-check';
import { formatSampleValue, parseStoreFloat } from '../../../../../api/compat/prometheus/prom-float.ts';
import { parsePromDuration } from '../../../../../api/query/durations.ts';
import { parseDurationParam, parseTimeParam } from '../../../../../api/compat/prometheus/prom-time.ts';

describe('prometheus time and values', () => {
  it('parses times as float seconds or RFC 3339', () => {
    expect(parseTimeParam('1700000000', 'time')).to.deep.equal({ ok: true, value: 1_700_000_000_000 });
    expect(parseTimeParam('1700000000.123', 'time')).to.deep.equal({ ok: true, value: 1_700_000_000_123 });
    expect(parseTimeParam('2023-11-14T22:13:20Z', 'time')).to.deep.equal({ ok: true, value: 1_700_000_000_000 });
    expect(parseTimeParam('2023-11-14T23:13:20.5+01:00', 'time')).to.deep.equal({ ok: true, value: 1_700_000_000_500 });
    expect(parseTimeParam('yesterday', 'start')).to.deep.equal({
      ok: false,
      error: 'invalid parameter "start": cannot parse "yesterday" to a valid timestamp',
    });
  });

  it('parses durations as Prometheus durations or float seconds', () => {
    expect(parsePromDuration('1m30s')).to.equal(90_000);
    expect(parsePromDuration('1h')).to.equal(3_600_000);
    expect(parsePromDuration('2d')).to.equal(172_800_000);
    expect(parsePromDuration('1w')).to.equal(604_800_000);
    expect(parsePromDuration('1y')).to.equal(31_536_000_000);
    expect(parsePromDuration('250ms')).to.equal(250);
    expect(parsePromDuration('1s1m')).to.equal(undefined);
    expect(parsePromDuration('5')).to.equal(undefined);
    expect(parseDurationParam('15', 'step')).to.deep.equal({ ok: true, value: 15_000 });
    expect(parseDurationParam('0.5', 'step')).to.deep.equal({ ok: true, value: 500 });
    expect(parseDurationParam('30s', 'step')).to.deep.equal({ ok: true, value: 30_000 });
    expect(parseDurationParam('soon', 'step').ok).to.equal(false);
  });

  it('prints values as Prometheus does: no exponent, NaN and ±Inf spelled out', () => {
    expect(formatSampleValue(1.5)).to.equal('1.5');
    expect(formatSampleValue(0)).to.equal('0');
    expect(formatSampleValue(-2)).to.equal('-2');
    expect(formatSampleValue(1e21)).to.equal('1000000000000000000000');
    expect(formatSampleValue(1.234e-7)).to.equal('0.0000001234');
    expect(formatSampleValue(-5e-324)).to.equal(`-0.${'0'.repeat(323)}5`);
    expect(formatSampleValue(NaN)).to.equal('NaN');
    expect(formatSampleValue(Infinity)).to.equal('+Inf');
    expect(formatSampleValue(-Infinity)).to.equal('-Inf');
  });

  it('prints every finite double so it reads back exactly', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const text = formatSampleValue(x);
        expect(text).to.not.match(/e/i);
        expect(Number(text)).to.equal(x === 0 ? 0 : x);
      }),
    );
  });

  it('reads ClickHouse float text', () => {
    expect(Number.isNaN(parseStoreFloat('nan'))).to.equal(true);
    expect(parseStoreFloat('inf')).to.equal(Infinity);
    expect(parseStoreFloat('-inf')).to.equal(-Infinity);
    expect(parseStoreFloat('1e21')).to.equal(1e21);
  });
});
