// The Tempo API's input ranges at and past their edges (issue 33): Go
// durations up to 2^63 − 1 ns, times before 2200, integer parameters from
// their minimum, legacy tags, TraceQL's length, nesting, size, numbers and
// comparisons it cannot run; every refusal names what it refuses.
import { expect } from 'chai';
import { boundedInt, durationParam, maxDurationNs, maxSearchTags, parseLogfmt } from '../../../../../api/compat/tempo/tempo-params.ts';
import { lookupWindow, searchWindow } from '../../../../../api/compat/tempo/tempo-window.ts';
import { maxComparisons, maxNesting, maxQueryLength, maxSpansets, parseTraceQl } from '../../../../../api/compat/tempo/traceql-parser.ts';
import { comparisonProblem } from '../../../../../api/compat/tempo/traceql-sql.ts';
import type { TenantScan } from '../../../../../api/query/tenant-scan.ts';
import { scanOf, settingsWith } from '../../../../support/tenant-scans.ts';

const scan = (at: bigint, maxQueryDays?: number): TenantScan =>
  scanOf('t', 'traces', at, maxQueryDays === undefined ? undefined : settingsWith((s) => ({ ...s, limits: { ...s.limits, maxQueryDays } })));
const now = 1_800_000_000n * 1_000_000_000n;

/** The refusal of a TraceQL query (fails the test when it is accepted). */
function refusal(q: string): string {
  const r = parseTraceQl(q);
  if (r.ok) throw new Error(`${q.slice(0, 80)} was accepted`);
  return r.error.message;
}

describe('Tempo input ranges', () => {
  it('reads durations up to 2^63 − 1 ns and refuses longer ones naming the parameter', () => {
    expect(durationParam('9223372036854775807ns', 'maxDuration')).to.deep.equal({ ok: true, value: maxDurationNs });
    expect(durationParam('2562047h', 'maxDuration').ok).to.equal(true);
    for (const raw of ['9223372036854775808ns', '2562048h', '99999999999h', `${'9'.repeat(400)}.5s`]) {
      const r = durationParam(raw, 'minDuration');
      expect(r.ok, raw).to.equal(false);
      if (!r.ok) expect(r.error).to.match(/^invalid minDuration: .* longer than the longest duration/);
    }
    const notOne = durationParam('1e308s', 'maxDuration');
    expect(!notOne.ok && notOne.error).to.match(/^invalid maxDuration: .* is not a duration/);
  });

  it('reads times before 2200 and refuses later ones naming the parameter', () => {
    expect(searchWindow({ start: '7258118399', end: '7258118399' }, scan(now), now).ok).to.equal(true);
    const late = lookupWindow({ end: '7258118400' }, scan(now), now);
    expect(!late.ok && late.error).to.match(/^invalid end: 7258118400 is not before 2200/);
    const huge = searchWindow({ start: '999999999999' }, scan(now), now);
    expect(!huge.ok && huge.error).to.match(/^invalid start/);
  });

  it('bounds integers from their minimum', () => {
    expect(boundedInt('0', 'maxStaleValues', 0, 10, 0)).to.deep.equal({ ok: true, value: 0 });
    expect(boundedInt('-1', 'maxStaleValues', 0, 10, 0)).to.deep.equal({ ok: false, error: 'invalid maxStaleValues: "-1" is not an integer of at least 0' });
    expect(boundedInt('1e308', 'limit', 20, 100)).to.deep.equal({ ok: false, error: 'invalid limit: "1e308" is not a positive integer' });
  });

  it('reads at most maxSearchTags tags, and refuses a bad escape naming tags', () => {
    const tags = (n: number): string => Array.from({ length: n }, (_, i) => `k${i}=v`).join(' ');
    expect(parseLogfmt(tags(maxSearchTags)).ok).to.equal(true);
    const many = parseLogfmt(tags(maxSearchTags + 1));
    expect(!many.ok && many.error).to.equal(`invalid tags: more than ${maxSearchTags} tags`);
    const escape = parseLogfmt('a="\\q"');
    expect(!escape.ok && escape.error).to.match(/^invalid tags: cannot read the quoted value/);
  });

  it("bounds a TraceQL query's length, nesting, spansets and comparisons, at and past each edge", () => {
    const nested = (d: number): string => `{ ${'('.repeat(d - 1)}name = "a"${')'.repeat(d - 1)} }`;
    expect(parseTraceQl(nested(maxNesting)).ok).to.equal(true);
    expect(refusal(nested(maxNesting + 1))).to.equal(`invalid TraceQL query: parentheses and braces nested ${maxNesting + 1} deep, more than ${maxNesting}`);
    // Parentheses inside a string literal are text, not nesting.
    expect(parseTraceQl(`{ name = "${'('.repeat(100)}" }`).ok).to.equal(true);
    const long = (n: number): string => `{ name = "${'x'.repeat(n - 13)}" }`;
    expect(parseTraceQl(long(maxQueryLength)).ok).to.equal(true);
    expect(refusal(long(maxQueryLength + 1))).to.contain(`characters long, more than ${maxQueryLength}`);
    const sets = (n: number): string => Array.from({ length: n }, (_, i) => `{ span.k${i} = "v" }`).join(' || ');
    expect(parseTraceQl(sets(maxSpansets)).ok).to.equal(true);
    expect(refusal(sets(maxSpansets + 1))).to.contain(`${maxSpansets + 1} spanset filters, more than ${maxSpansets}`);
    const conditions = (n: number): string => `{ ${Array.from({ length: n }, (_, i) => `span.k${i} = "v"`).join(' || ')} }`;
    expect(parseTraceQl(conditions(maxComparisons)).ok).to.equal(true);
    expect(refusal(`${conditions(maxComparisons)} | select(span.x)`)).to.contain(
      `${maxComparisons + 1} conditions and selected fields, more than ${maxComparisons}`,
    );
  });

  it('refuses numbers and durations out of range, naming them', () => {
    expect(parseTraceQl('{ span.x > 9007199254740991 }').ok).to.equal(true);
    expect(refusal('{ span.x > 9007199254740992 }')).to.contain('the integer 9007199254740992 is out of range');
    expect(refusal(`{ span.x = ${'9'.repeat(400)}.5 }`)).to.contain('is out of range (a 64-bit float)');
    expect(refusal('{ duration > 18446744073709551616ns }')).to.contain('the duration 18446744073709551616ns is longer than the longest duration');
    expect(parseTraceQl('{ duration < 2562047h }').ok).to.equal(true);
  });

  it('finds comparisons it cannot run before any statement is built', () => {
    const check = (q: string): string | undefined => {
      const r = parseTraceQl(q);
      if (!r.ok) throw new Error(r.error.message);
      return comparisonProblem(r.value);
    };
    expect(check('{ status = 5 }')).to.match(/^invalid TraceQL query: status is compared with/);
    expect(check('{ span.x > 1s }')).to.equal('invalid TraceQL query: an attribute cannot be compared with a duration');
    expect(check('{ } && { name = "a" && status = error }')).to.equal(undefined);
  });
});
