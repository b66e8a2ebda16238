// Issue 33: no input a client can send to /loki gives a 5xx. Every numeric
// parameter of every endpoint (timestamps, since, step, interval, limit) and
// every number inside LogQL (topk's k, range durations) has a range, and a
// value beyond it is a 400 in Loki's own error shape (text/plain) naming the
// parameter; a query nested too deep or too long is a 400 naming `query`.
// The compat body reader decodes Content-Encoding as /v1's does, and a
// scalar parameter given twice is a 400 (docs/api.md, "Compatibility APIs").
// A bounded fast-check run over LogQL-ish text and parameter values asserts
// that nothing answers 5xx. All against a real Tenantry `all` process.
import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync, gzipSync } from 'node:zlib';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';
import { exportLogs, tenantLogs } from './support/log-fixture.ts';

const tenant = 'bounds-a';
const keys = { ingest: 'bounds-ingest-key-0123456789', read: 'bounds-read-key-0123456789' };
const perService = 6;
const startMs = Math.floor((Date.now() - 30 * 60_000) / 60_000) * 60_000;
const startNs = BigInt(startMs) * 1_000_000n;
const endNs = startNs + 20n * 60_000_000_000n;
const window = { start: startNs.toString(), end: endNs.toString() };
const rangeQuery = 'count_over_time({service_name="checkout"}[1m])';

interface Answer {
  readonly status: number;
  readonly type: string;
  readonly text: string;
}

/** One input beyond its range: the endpoint, its parameters (POSTed as a form when `post`: too long for a URL), and what the 400's message must name. */
interface Beyond {
  readonly what: string;
  readonly path: string;
  readonly params: Record<string, string>;
  readonly names: RegExp;
  readonly post?: true;
}

const nested = (depth: number): string => `${'sum('.repeat(depth)}${rangeQuery}${')'.repeat(depth)}`;

const beyond: readonly Beyond[] = [
  { what: 'sum( nested 50 deep', path: 'query_range', params: { query: nested(50) }, names: /query/ },
  { what: 'sum( nested 50 deep, instant', path: 'query', params: { query: nested(50) }, names: /query/ },
  { what: '5,000 parentheses', path: 'query_range', params: { query: `${'('.repeat(5000)}${rangeQuery}${')'.repeat(5000)}` }, names: /query/, post: true },
  { what: 'a 100 KiB query', path: 'query_range', params: { query: `{service_name="checkout"} |= "${'x'.repeat(100_000)}"` }, names: /query/, post: true },
  {
    what: '500 label filters (a statement past max_query_size)',
    path: 'query_range',
    params: { query: `{service_name="checkout"}${' | a="b"'.repeat(500)}` },
    names: /query/,
    post: true,
  },
  {
    what: '8 parsers (a statement doubling per parser)',
    path: 'query_range',
    params: { query: `{service_name="checkout"}${' | logfmt'.repeat(8)}` },
    names: /parser/,
  },
  { what: 'topk(1e308, …)', path: 'query_range', params: { query: `topk(1e308, ${rangeQuery})` }, names: /topk/ },
  { what: 'topk(2^64, …) instant', path: 'query', params: { query: `topk(18446744073709551616, ${rangeQuery})` }, names: /topk/ },
  { what: 'range [100000000d]', path: 'query_range', params: { query: 'count_over_time({service_name="checkout"}[100000000d])' }, names: /range/ },
  { what: 'range [1e308s]', path: 'query_range', params: { query: 'count_over_time({service_name="checkout"}[1e308s])' }, names: /query|parse error/ },
  { what: 'range of 30 digits of seconds', path: 'query', params: { query: `rate({service_name="checkout"}[${'9'.repeat(30)}s])` }, names: /range/ },
  { what: 'range 400 digits with a fraction', path: 'query', params: { query: `rate({service_name="checkout"}[${'9'.repeat(400)}.5s])` }, names: /range/ },
  { what: 'offset 100000000d', path: 'query_range', params: { query: 'count_over_time({service_name="checkout"}[1m] offset 100000000d)' }, names: /offset/ },
  {
    what: 'quantile φ 1e308',
    path: 'query_range',
    params: { query: 'quantile_over_time(1e308, {service_name="checkout"} | logfmt | unwrap latency [1m])' },
    names: /quantile_over_time|unwrap/,
  },
  { what: 'step=1e308', path: 'query_range', params: { query: rangeQuery, step: '1e308' }, names: /step/ },
  { what: 'step=100000000d', path: 'query_range', params: { query: rangeQuery, step: '100000000d' }, names: /step/ },
  { what: 'step=-1e308', path: 'query_range', params: { query: rangeQuery, step: '-1e308' }, names: /step/ },
  { what: 'step=NaN', path: 'query_range', params: { query: rangeQuery, step: 'NaN' }, names: /step/ },
  { what: 'step=Infinity', path: 'query_range', params: { query: rangeQuery, step: 'Infinity' }, names: /step/ },
  { what: 'interval=1e308', path: 'query_range', params: { query: '{service_name="checkout"}', interval: '1e308' }, names: /interval/ },
  { what: 'interval=abc', path: 'query_range', params: { query: '{service_name="checkout"}', interval: 'abc' }, names: /interval/ },
  { what: 'limit=1e308', path: 'query_range', params: { query: '{service_name="checkout"}', limit: '1e308' }, names: /limit/ },
  { what: 'limit=2^64', path: 'query_range', params: { query: '{service_name="checkout"}', limit: '18446744073709551616' }, names: /limit/ },
  { what: 'limit=-1', path: 'query_range', params: { query: '{service_name="checkout"}', limit: '-1' }, names: /limit/ },
  { what: 'instant limit=1e308', path: 'query', params: { query: rangeQuery, limit: '1e308' }, names: /limit/ },
  { what: 'direction=sideways', path: 'query_range', params: { query: '{service_name="checkout"}', direction: 'sideways' }, names: /direction/ },
  { what: 'start=1e308', path: 'query_range', params: { query: rangeQuery, start: '1e308', end: window.end }, names: /start/ },
  { what: 'start=1.5e308', path: 'query_range', params: { query: rangeQuery, start: '1.5e308', end: window.end }, names: /start/ },
  { what: 'end=30 digits', path: 'query_range', params: { query: rangeQuery, start: window.start, end: '9'.repeat(30) }, names: /end/ },
  {
    what: 'end=year 9999',
    path: 'query_range',
    params: { query: '{service_name="checkout"}', start: window.start, end: '9999-12-31T23:59:59Z' },
    names: /end/,
  },
  { what: 'start=-1e18 s', path: 'query_range', params: { query: rangeQuery, start: '-1000000000.5e9', end: window.end }, names: /start/ },
  { what: 'time=1.5e308', path: 'query', params: { query: rangeQuery, time: '1.5e308' }, names: /time/ },
  { what: 'time=30 digits', path: 'query', params: { query: rangeQuery, time: '9'.repeat(30) }, names: /time/ },
  { what: 'since=100000000d', path: 'query_range', params: { query: rangeQuery, since: '100000000d' }, names: /since/ },
  { what: 'since=400 digits.5h', path: 'query_range', params: { query: rangeQuery, since: `${'9'.repeat(400)}.5h` }, names: /since/ },
  { what: 'labels start=1.5e308', path: 'labels', params: { start: '1.5e308' }, names: /start/ },
  { what: 'labels since=100000000d', path: 'labels', params: { since: '100000000d' }, names: /since/ },
  { what: 'label values end=30 digits', path: 'label/service_name/values', params: { end: '9'.repeat(30) }, names: /end/ },
  { what: 'series start=1.5e308', path: 'series', params: { 'match[]': '{service_name="checkout"}', start: '1.5e308' }, names: /start/ },
  { what: 'index/stats end=1.5e308', path: 'index/stats', params: { query: '{service_name="checkout"}', end: '1.5e308' }, names: /end/ },
  { what: 'index/volume limit=1e308', path: 'index/volume', params: { query: '{service_name="checkout"}', ...window, limit: '1e308' }, names: /limit/ },
  {
    what: 'index/volume limit=2^64',
    path: 'index/volume',
    params: { query: '{service_name="checkout"}', ...window, limit: '18446744073709551616' },
    names: /limit/,
  },
  { what: 'index/volume step=1e308', path: 'index/volume', params: { query: '{service_name="checkout"}', ...window, step: '1e308' }, names: /step/ },
  { what: 'detected_labels since=100000000d', path: 'detected_labels', params: { query: '{service_name="checkout"}', since: '100000000d' }, names: /since/ },
];

/** Inputs at the edge of their range: answered. */
const within: readonly { what: string; path: string; params: Record<string, string> }[] = [
  { what: 'sum( nested 8 deep', path: 'query_range', params: { query: nested(8), ...window, step: '60' } },
  { what: 'topk(5000, …)', path: 'query_range', params: { query: `topk(5000, ${rangeQuery})`, ...window, step: '60' } },
  { what: 'range [3650d]', path: 'query', params: { query: 'count_over_time({service_name="checkout"}[3650d])', time: window.end } },
  { what: 'step=3650d', path: 'query_range', params: { query: '{service_name="checkout"}', ...window, step: '3650d' } },
  { what: '3 parsers', path: 'query_range', params: { query: '{service_name="checkout"} | logfmt | json | logfmt', ...window } },
  { what: '100 label filters', path: 'query_range', params: { query: `{service_name="checkout"}${' | a!="b"'.repeat(100)}`, ...window } },
  { what: 'vector(1e308) * 10 (+Inf)', path: 'query', params: { query: 'vector(1e308) * 10', time: window.end } },
  { what: 'interval=30s on a log query', path: 'query_range', params: { query: '{service_name="checkout"}', ...window, interval: '30s' } },
  { what: 'limit=5000', path: 'query_range', params: { query: '{service_name="checkout"}', ...window, limit: '5000' } },
  { what: 'since=3650d', path: 'labels', params: { since: '3650d' } },
  { what: 'index/volume limit=1000 step=60s', path: 'index/volume', params: { query: '{service_name="checkout"}', ...window, limit: '1000', step: '60s' } },
];

describe('Loki API: inputs beyond their range (issue 33)', function () {
  this.timeout(300_000);
  let dir: string;
  let tenantry: TenantryProcess;
  let api: string;
  const headers = { authorization: `Bearer ${keys.read}`, 'X-Scope-OrgID': tenant };

  async function get(path: string, params: Record<string, string>): Promise<Answer> {
    const response = await fetch(`${api}/loki/api/v1/${path}?${new URLSearchParams(params).toString()}`, { headers });
    return { status: response.status, type: response.headers.get('content-type') ?? '', text: await response.text() };
  }

  async function post(path: string, body: Buffer | string, extra: Record<string, string>, query = ''): Promise<Answer> {
    const response = await fetch(`${api}/loki/api/v1/${path}${query}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded', ...extra },
      body,
    });
    return { status: response.status, type: response.headers.get('content-type') ?? '', text: await response.text() };
  }

  const lineCount = (a: Answer): number =>
    (JSON.parse(a.text) as { data: { result: { values: unknown[] }[] } }).data.result.reduce((n, s) => n + s.values.length, 0);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tenantry-loki-bounds-'));
    tenantry = startTenantry(
      ['all'],
      testEnvironment(join(dir, 'tenantry'), {
        TENANTRY_API_KEYS: JSON.stringify([
          { key: keys.ingest, scopes: ['ingest'], tenants: ['*'] },
          { key: keys.read, scopes: ['read'], tenants: [tenant] },
        ]),
      }),
    );
    const ports = await tenantry.started(120_000);
    api = `http://127.0.0.1:${ports['api'] ?? 0}`;
    for (const records of tenantLogs(tenant, 'alpha', startMs, perService)) {
      expect((await exportLogs(`http://127.0.0.1:${ports['otlpHttp'] ?? 0}/v1/logs`, { authorization: `Bearer ${keys.ingest}` }, records)).code).to.equal(0);
    }
    // Tenantry reports no event when an accepted line becomes queryable: poll, bounded.
    const deadline = Date.now() + 60_000;
    let seen = 0;
    while (Date.now() < deadline && seen < perService) {
      const answer = await get('query_range', { query: '{service_name="checkout"}', ...window });
      seen = answer.status === 200 ? lineCount(answer) : 0;
      if (seen < perService) await new Promise((r) => setTimeout(r, 250));
    }
    expect(seen, 'checkout lines queryable').to.equal(perService);
  });

  after(async () => {
    await tenantry.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers every input beyond its range with a 400 in Loki's shape naming the parameter", async () => {
    const wrong: string[] = [];
    for (const c of beyond) {
      const answer = c.post === true ? await post(c.path, new URLSearchParams(c.params).toString(), {}) : await get(c.path, c.params);
      const shaped = answer.status === 400 && answer.type.startsWith('text/plain') && c.names.test(answer.text);
      if (!shaped) wrong.push(`${c.what}: ${answer.status} ${answer.type} ${answer.text.slice(0, 200)}`);
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it('answers inputs at the edge of their range', async () => {
    const wrong: string[] = [];
    for (const c of within) {
      const answer = await get(c.path, c.params);
      if (answer.status !== 200) wrong.push(`${c.what}: ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
  });

  it("reads gzip and deflate form bodies, and refuses other encodings, other media types and oversized bodies in Loki's shape", async () => {
    const form = new URLSearchParams({ query: '{service_name="checkout"}', ...window, limit: '2' }).toString();
    const plain = await post('query_range', form, {});
    expect(plain.status, plain.text).to.equal(200);
    expect(lineCount(plain)).to.equal(2);
    for (const [encoding, body] of [
      ['gzip', gzipSync(form)],
      ['deflate', deflateSync(form)],
    ] as const) {
      const answer = await post('query_range', body, { 'content-encoding': encoding });
      expect(answer.status, `${encoding}: ${answer.text}`).to.equal(200);
      expect(lineCount(answer), encoding).to.equal(2);
    }
    const brotli = await post('query_range', form, { 'content-encoding': 'br' });
    expect([brotli.status, brotli.type.startsWith('text/plain')], brotli.text).to.deep.equal([415, true]);
    expect(brotli.text).to.match(/content-encoding/i);
    const json = await post('query_range', JSON.stringify({ query: '{service_name="checkout"}' }), { 'content-type': 'application/json' });
    expect([json.status, json.type.startsWith('text/plain')], json.text).to.deep.equal([415, true]);
    const bomb = gzipSync(`query=${'x'.repeat(2 * 1_048_576)}`);
    const tooLarge = await post('query_range', bomb, { 'content-encoding': 'gzip' });
    expect([tooLarge.status, tooLarge.type.startsWith('text/plain')], tooLarge.text).to.deep.equal([413, true]);
    const corrupt = await post('query_range', Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' });
    expect([corrupt.status, corrupt.type.startsWith('text/plain')], corrupt.text).to.deep.equal([400, true]);
  });

  it('refuses a scalar parameter given twice (query string and body together) and reads every match[]', async () => {
    const twice = await fetch(`${api}/loki/api/v1/query_range?query=${encodeURIComponent('{service_name="checkout"}')}&limit=1&limit=2`, { headers });
    const twiceText = await twice.text();
    expect([twice.status, twiceText], twiceText).to.satisfy(([status, text]: [number, string]) => status === 400 && text.includes('"limit"'));
    const split = await post('query_range', new URLSearchParams({ query: '{service_name="checkout"}', limit: '2' }).toString(), {}, '?limit=3');
    expect([split.status, split.text.includes('"limit"')], split.text).to.deep.equal([400, true]);
    const series = new URLSearchParams(window);
    series.append('match[]', '{service_name="checkout"}');
    series.append('match[]', '{service_name="payments"}');
    const response = await fetch(`${api}/loki/api/v1/series?${series.toString()}`, { headers });
    const body = (await response.json()) as { data: Record<string, string>[] };
    expect(response.status).to.equal(200);
    expect([...new Set(body.data.map((s) => s['service_name']))].sort()).to.deep.equal(['checkout', 'payments']);
  });

  it('never answers 5xx to generated LogQL and parameter values (fast-check, bounded)', async () => {
    const numberText = fc.oneof(
      fc.constantFrom(window.start, window.end, '60', '100', '5000', '1795000000.5', '2026-11-24T03:00:00Z'),
      fc.constantFrom(
        '0',
        '-0',
        '1',
        '-1',
        '1e308',
        '-1e308',
        '1e-308',
        'NaN',
        'Infinity',
        '-Infinity',
        '18446744073709551616',
        '9223372036854775808',
        '0x10',
        '1_000',
        '',
        ' ',
        '.5',
        '5.',
        '1e',
        'e5',
      ),
      fc.double().map(String),
      fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
      fc.integer().map(String),
    );
    const duration = fc.oneof(
      fc.tuple(fc.oneof(numberText, fc.nat().map(String)), fc.constantFrom('ns', 'us', 'ms', 's', 'm', 'h', 'd', 'w', 'y', '')).map(([n, u]) => `${n}${u}`),
      fc.constantFrom('1h30m', '1.5h', '100000000d', '1e308s', `${'9'.repeat(50)}.5s`, '0s', '-5m'),
    );
    const selector = fc.constantFrom(
      '{service_name="checkout"}',
      '{service_name=~".+"}',
      '{service_name!="x", k8s_namespace_name="shop"}',
      '{a=""}',
      '{service_name="checkout"} |= "POST"',
      '{service_name="checkout"} | logfmt | status >= 500',
      '{service_name="checkout"} | json | drop a',
    );
    const rangeFn = fc.constantFrom('count_over_time', 'rate', 'bytes_over_time', 'bytes_rate', 'sum_over_time', 'absent_over_time');
    const vectorFn = fc.constantFrom('sum', 'avg', 'min', 'max', 'count', 'topk', 'bottomk', 'stddev');
    const metric: fc.Arbitrary<string> = fc.letrec<{ expr: string }>((tie) => ({
      expr: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.tuple(rangeFn, selector, duration, fc.option(duration)).map(([fn, s, d, o]) => `${fn}(${s}[${d}]${o === null ? '' : ` offset ${o}`})`),
        fc
          .tuple(vectorFn, fc.option(numberText), fc.option(fc.constantFrom('by (service_name)', 'without (a)')), tie('expr'))
          .map(([fn, k, g, inner]) => `${fn}${g === null ? '' : ` ${g}`}(${k === null ? '' : `${k}, `}${inner})`),
        fc.tuple(numberText, fc.constantFrom('+', '-', '*', '/', '%', '^'), numberText).map(([a, op, b]) => `vector(${a}) ${op} ${b}`),
        fc.tuple(tie('expr'), fc.constantFrom('+', '/', 'and', '>')).map(([e, op]) => `${e} ${op} ${e}`),
      ),
    })).expr;
    const query = fc.oneof(
      metric,
      selector,
      fc.string({ maxLength: 40 }),
      fc.nat({ max: 80 }).map((n) => nested(n)),
    );
    const params = fc.record({
      query,
      start: fc.option(numberText),
      end: fc.option(numberText),
      since: fc.option(duration),
      step: fc.option(fc.oneof(numberText, duration)),
      interval: fc.option(fc.oneof(numberText, duration)),
      limit: fc.option(numberText),
      direction: fc.option(fc.constantFrom('forward', 'backward', 'FORWARD', 'x')),
      time: fc.option(numberText),
    });
    const path = fc.constantFrom('query_range', 'query', 'labels', 'label/service_name/values', 'series', 'index/stats', 'index/volume', 'detected_labels');
    const failures: string[] = [];
    await fc.assert(
      fc.asyncProperty(path, params, async (p, raw) => {
        const sent: Record<string, string> = {};
        for (const [name, value] of Object.entries(raw)) if (value !== null) sent[name === 'query' && p === 'series' ? 'match[]' : name] = value;
        const answer = await get(p, sent);
        if (answer.status >= 500 || (answer.status >= 400 && !answer.type.startsWith('text/plain')))
          failures.push(`${p} ${JSON.stringify(sent).slice(0, 300)}: ${answer.status} ${answer.text.slice(0, 200)}`);
        return answer.status < 500;
      }),
      { numRuns: 300, seed: 33, endOnFailure: true },
    );
    expect(failures).to.deep.equal([]);
  });
});
