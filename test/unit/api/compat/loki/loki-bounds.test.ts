// Issue 33: the ranges of the Loki API's numbers, checked without a process
// (test/integration/loki/loki-input-bounds.test.ts sends them to one).
import { expect } from 'chai';
import { parseLogqlDuration } from '../../../../../api/query/durations.ts';
import { maxDurationNs, maxNesting, maxParsers, maxQueryChars, parseLogql } from '../../../../../api/compat/loki/logql-ast.ts';
import {
  maxTimestampNs,
  parseBounds,
  parseInterval,
  parseLimit,
  parseSecondsOrDuration,
  parseStep,
  parseTime,
  parseVolumeLimit,
  parseVolumeStep,
} from '../../../../../api/compat/loki/loki-params.ts';
import type { Form } from '../../../../../api/compat/loki/loki-params.ts';
import { badRequest, fromApiError } from '../../../../../api/compat/loki/loki-reply.ts';

const form =
  (values: Record<string, string>): Form =>
  (name) =>
    values[name];
const now = 1_795_490_000_000_000_000n;
const errorOf = (r: { ok: boolean; error?: unknown }): string => (r.ok ? '' : String((r.error as { message?: string }).message ?? r.error));
const range = 'count_over_time({a="b"}[1m])';

describe('Loki API bounds', () => {
  it('parses durations exactly, whatever their size, and never throws', () => {
    expect(parseLogqlDuration('1.5s')).to.equal(1_500_000_000n);
    expect(parseLogqlDuration('0.1ns')).to.equal(0n);
    expect(parseLogqlDuration('0.9ns')).to.equal(0n);
    expect(parseLogqlDuration('1.1999999999s')).to.equal(1_199_999_999n);
    expect(parseLogqlDuration('1.5h30m')).to.equal(7_200_000_000_000n);
    expect(parseLogqlDuration(`${'9'.repeat(400)}.5h`)).to.equal(BigInt('9'.repeat(400)) * 3_600_000_000_000n + 1_800_000_000_000n);
    expect(parseSecondsOrDuration('1e308')).to.equal(BigInt(1e308) * 1_000_000_000n);
    expect(parseSecondsOrDuration('1e309')).to.equal(undefined);
    expect(parseSecondsOrDuration('0.25')).to.equal(250_000_000n);
  });

  it('keeps timestamps in [1970, 2200) and names the parameter', () => {
    expect(parseTime(form({ time: '1.5e308' }), now).ok).to.equal(false);
    expect(errorOf(parseTime(form({ time: '9'.repeat(30) }), now))).to.include("'time'");
    expect(errorOf(parseBounds(form({ start: '-1' }), now))).to.include("'start'");
    expect(errorOf(parseBounds(form({ end: '9999-12-31T23:59:59Z' }), now))).to.include("'end'");
    expect(parseBounds(form({ end: String(maxTimestampNs - 1n) }), now).ok).to.equal(true);
    expect(errorOf(parseBounds(form({ end: String(maxTimestampNs) }), now))).to.include("'end'");
  });

  it('keeps since, step and interval within 3650 days', () => {
    const bounds = { startNs: now - 3_600_000_000_000n, endNs: now };
    expect(parseBounds(form({ since: '3650d' }), now)).to.deep.equal({ ok: true, value: { startNs: now - maxDurationNs, endNs: now } });
    expect(errorOf(parseBounds(form({ since: '3651d' }), now))).to.include("'since'");
    expect(parseStep(form({ step: '3650d' }), bounds)).to.deep.equal({ ok: true, value: maxDurationNs });
    for (const step of ['1e308', '3651d', '100000000d']) expect(errorOf(parseStep(form({ step }), bounds)), step).to.include("'step'");
    expect(errorOf(parseStep(form({ step: '-1e308' }), bounds))).to.include('zero or negative');
    expect(parseInterval(form({ interval: '30s' }))).to.deep.equal({ ok: true, value: 30_000_000_000n });
    for (const interval of ['1e308', 'abc', '-1']) expect(errorOf(parseInterval(form({ interval }))), interval).to.include("'interval'");
    expect(errorOf(parseVolumeStep(form({ step: '1e308' })))).to.include("'step'");
  });

  it('reads counts as positive integers within their maximum', () => {
    for (const limit of ['1e308', '18446744073709551616', '-1', '0', '1.5']) expect(errorOf(parseLimit(form({ limit }))), limit).to.include('limit');
    expect(parseVolumeLimit(form({ limit: '10000' }))).to.deep.equal({ ok: true, value: 10_000 });
    expect(errorOf(parseVolumeLimit(form({ limit: '1e308' })))).to.include("'limit'");
    expect(errorOf(parseVolumeLimit(form({ limit: '10001' })))).to.include("'limit'");
  });

  it('refuses a query too long, too deep, with too many parsers, a topk k or a range beyond its range', () => {
    const nested = (n: number): string => `${'sum('.repeat(n)}${range}${')'.repeat(n)}`;
    expect(parseLogql(nested(maxNesting - 1)).ok).to.equal(true);
    expect(errorOf(parseLogql(nested(maxNesting)))).to.include("'query'");
    expect(errorOf(parseLogql(nested(50)))).to.include('nests parentheses');
    // Parentheses inside strings do not count.
    expect(parseLogql(`{a="b"} |= "${'('.repeat(100)}"`).ok).to.equal(true);
    expect(errorOf(parseLogql(`{a="b"} |= "${'x'.repeat(maxQueryChars)}"`))).to.include("'query'");
    expect(parseLogql(`{a="b"}${' | logfmt'.repeat(maxParsers)}`).ok).to.equal(true);
    expect(errorOf(parseLogql(`{a="b"}${' | logfmt'.repeat(maxParsers + 1)}`))).to.include('parser stages');
    for (const k of ['1e308', '18446744073709551616', '0', '1.5']) expect(errorOf(parseLogql(`topk(${k}, ${range})`)), k).to.include('topk');
    expect(parseLogql(`topk(${Number.MAX_SAFE_INTEGER}, ${range})`).ok).to.equal(true);
    expect(parseLogql('rate({a="b"}[3650d])').ok).to.equal(true);
    for (const r of ['3651d', '100000000d', `${'9'.repeat(30)}s`]) expect(errorOf(parseLogql(`rate({a="b"}[${r}])`)), r).to.include('range');
  });

  it("writes refusals with Loki's status and Retry-After", () => {
    expect(badRequest('x')).to.deep.equal({ status: 400, message: 'x' });
    expect(fromApiError({ code: 'rate_limited', message: 'slow down' })).to.deep.equal({ status: 429, message: 'slow down', retryAfterSeconds: 1 });
    expect(fromApiError({ code: 'invalid_request', message: 'bad' })).to.deep.equal({ status: 400, message: 'bad' });
  });
});
