// The three duration dialects of the read APIs (api/query/durations.ts):
// where they agree and where each one's rule differs.
import { expect } from 'chai';
import fc from 'fast-check';
import { parseGoDuration, parseLogqlDuration, parsePromDuration } from '../../../../api/query/durations.ts';

describe('durations', () => {
  it('reads Go durations exactly: fractions per component, any order, no days', () => {
    expect(parseGoDuration('1.5h30m')).to.equal(7_200_000_000_000n);
    expect(parseGoDuration('30m1h')).to.equal(5_400_000_000_000n);
    expect(parseGoDuration('1.1999999999s')).to.equal(1_199_999_999n);
    expect(parseGoDuration('100µs')).to.equal(100_000n);
    expect(parseGoDuration('2d')).to.equal(undefined);
    expect(parseGoDuration('-1s')).to.equal(undefined);
  });

  it('reads Prometheus durations: integers, units in order from years to ms', () => {
    expect(parsePromDuration('1y2w3d4h5m6s7ms')).to.equal(365 * 86_400_000 + 2 * 604_800_000 + 3 * 86_400_000 + 4 * 3_600_000 + 5 * 60_000 + 6_000 + 7);
    expect(parsePromDuration('0')).to.equal(0);
    expect(parsePromDuration('1.5s')).to.equal(undefined);
    expect(parsePromDuration('30m1h')).to.equal(undefined);
  });

  it("reads LogQL durations as Go's, else Prometheus' (Loki's lexer tries both)", () => {
    expect(parseLogqlDuration('1.5s')).to.equal(1_500_000_000n);
    expect(parseLogqlDuration('2d')).to.equal(172_800_000_000_000n);
    expect(parseLogqlDuration('1d12h')).to.equal(129_600_000_000_000n);
    expect(parseLogqlDuration(`${'9'.repeat(30)}d`)).to.equal(BigInt('9'.repeat(30)) * 86_400_000_000_000n);
    expect(parseLogqlDuration('1.5d')).to.equal(undefined);
    expect(parseLogqlDuration('')).to.equal(undefined);
  });

  it('agrees across dialects on what both read, and never throws', () => {
    const component = fc.tuple(fc.nat({ max: 10_000 }), fc.constantFrom('h', 'm', 's', 'ms'));
    fc.assert(
      fc.property(fc.array(component, { minLength: 1, maxLength: 4 }), (parts) => {
        const order = ['h', 'm', 's', 'ms'];
        const sorted = [...new Map(parts.map(([n, u]) => [u, n])).entries()].sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
        const text = sorted.map(([u, n]) => `${n}${u}`).join('');
        const ms = parsePromDuration(text);
        expect(ms).to.not.equal(undefined);
        expect(parseGoDuration(text)).to.equal(BigInt(ms ?? 0) * 1_000_000n);
        expect(parseLogqlDuration(text)).to.equal(BigInt(ms ?? 0) * 1_000_000n);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (text) => {
        parseGoDuration(text);
        parsePromDuration(text);
        parseLogqlDuration(text);
      }),
      { numRuns: 300 },
    );
  });
});
