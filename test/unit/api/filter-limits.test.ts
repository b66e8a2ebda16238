// Filter limits: malformed LIKE patterns and requests over the per-request
// bounds are refused while decoding, with a sentence naming the problem;
// each bound is crossed here by one.
import { expect } from 'chai';
import fc from 'fast-check';
import { decodeWith } from '../../../api/http/request-decoder.ts';
import { filterLimits, filterProblem, patternProblem } from '../../../api/v1/query/filter-limits.ts';
import { LogRequest } from '../../../api/v1/logs/log-codecs.ts';
import { TraceRequest } from '../../../api/v1/traces/trace-codecs.ts';
import { BoundedTimeseriesRequest } from '../../../api/v1/timeseries/timeseries-codecs.ts';

const messageOf = (r: { ok: boolean; error?: { message: string } }): string => (r.ok ? '' : (r.error?.message ?? ''));

describe('api/filter limits', () => {
  it('accepts escapes of %, _ and \\ in a pattern, and refuses a lone or unknown escape', () => {
    for (const p of ['%a%', '100\\%%', 'a\\_b%', 'C:\\\\Users%', '%']) expect(patternProblem(p), p).to.equal(undefined);
    expect(patternProblem('abc%\\')).to.match(/ends in a lone "\\"/);
    expect(patternProblem('%\\\\\\')).to.match(/ends in a lone "\\"/);
    expect(patternProblem('%\\d%')).to.match(/has "\\d"/);
  });

  it('never throws on any string, and a pattern it accepts has only known escapes', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '%', '_', '\\', 'é') }), (s) => {
        const problem = patternProblem(s);
        const bare = s.replace(/\\[%_\\]/g, '');
        expect(problem === undefined).to.equal(!bare.includes('\\'));
      }),
      { seed: 12, numRuns: 500 },
    );
  });

  it('leaves exact values (no %) alone: a backslash there is a literal', () => {
    expect(filterProblem([{ path: 'spanName', values: ['a\\'] }])).to.equal(undefined);
  });

  it('bounds patterns, values, bytes and pattern length per request, one over each', () => {
    const patterns = (n: number): string[] => Array.from({ length: n }, (_, i) => `%p${i}%`);
    expect(filterProblem([{ path: 'a.k', values: patterns(filterLimits.patterns) }])).to.equal(undefined);
    expect(filterProblem([{ path: 'a.k', values: patterns(filterLimits.patterns + 1) }])).to.match(/hold 101 patterns.*at most 100/);
    const exact = (n: number, at: number): string[] => Array.from({ length: n }, (_, i) => `v${at}-${i}`);
    expect(
      filterProblem([
        { path: 'traceId', values: exact(600, 0) },
        { path: 'spanId', values: exact(400, 1) },
      ]),
    ).to.equal(undefined);
    expect(
      filterProblem([
        { path: 'traceId', values: exact(600, 0) },
        { path: 'spanId', values: exact(401, 1) },
      ]),
    ).to.match(/hold 1001 values: at most 1000/);
    const bytes = filterLimits.bytes - 'body'.length;
    expect(filterProblem([{ path: 'body', values: ['x'.repeat(bytes)] }])).to.equal(undefined);
    expect(filterProblem([{ path: 'body', values: ['x'.repeat(bytes + 1)] }])).to.match(/hold 65537 bytes: at most 65536/);
    expect(filterProblem([{ path: 'body', values: [`%${'x'.repeat(filterLimits.patternChars - 1)}`] }])).to.equal(undefined);
    expect(filterProblem([{ path: 'body', values: [`%${'x'.repeat(filterLimits.patternChars)}`] }])).to.match(
      /body\[0\] is a pattern of 1025 characters: at most 1024/,
    );
  });

  it('is applied by the logs, traces and timeseries request codecs, naming where the problem is', () => {
    expect(messageOf(decodeWith(LogRequest, { startTime: 1, body: ['ok', 'abc%\\'] }, 'request body'))).to.match(/body\[1\] "abc%\\\\" ends in a lone/);
    expect(messageOf(decodeWith(TraceRequest, { startTime: 1, attributes: { 'http.route': '%\\x' } }, 'request body'))).to.match(
      /attributes\.http\.route\[0\] .* has "\\x"/,
    );
    const attributes = Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, Array.from({ length: 1000 }, (_, i) => `%a${i}%`)]));
    expect(messageOf(decodeWith(LogRequest, { startTime: 1, attributes }, 'request body'))).to.match(/hold 50000 patterns/);
    const queries = Array.from({ length: 3 }, () => ({ metrics: ['m'], attributes: { k: Array.from({ length: 40 }, (_, i) => `%${i}%`) } }));
    expect(messageOf(decodeWith(BoundedTimeseriesRequest, { startTime: 1, queries }, 'request body'))).to.match(/hold 120 patterns/);
    expect(decodeWith(LogRequest, { startTime: 1, body: '%timeout%', attributes: { constructor: 'x' } }, 'request body').ok).to.equal(true);
  });
});
