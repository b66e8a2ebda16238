// Property: random and mutated API requests (methods, paths, query strings,
// headers, JSON and non-JSON bodies) never get a 5xx from the API on embedded
// ClickHouse, and never a byte of another tenant's data; tenant globex's own
// query keeps succeeding afterwards. Seeded and bounded in runs.
import { expect } from 'chai';
import fc from 'fast-check';
import { keys, startHarness } from './support/api-harness.ts';
import type { Harness } from './support/api-harness.ts';
import { insertRows, logRow, metricRow, secondsNs, spanRow } from './support/telemetry-rows.ts';

const T = 1_795_000_000;
const secret = 'GLOBEX-FUZZ-SECRET';

const valid: Record<string, unknown> = {
  logs: {
    startTime: T - 60,
    endTime: T + 60,
    body: ['%log%'],
    severity: 'INFO',
    attributes: { k: ['v', '%'] },
    includeAttributes: true,
    pagination: { limit: 10 },
  },
  traces: { startTime: T - 60, spanName: '%op%', spanKind: ['SERVER'], durationMin: 0, durationMax: 1e9, parentSpanId: '', pagination: { limit: 5 } },
  timeseries: { startTime: T - 3600, endTime: T, queries: [{ metrics: ['m'], groupBy: ['k'], operator: 'p99', attributes: { k: 'v' } }] },
  usage: { startTime: T - 86_400, interval: 'month' },
};

const text = fc.string({
  unit: fc.constantFrom('a', '%', '_', '\\', '/', '.', '?', '#', '&', '=', '[', ']', '"', '{', 'é', '\u0000', '\ud800', ' ', '9'),
  maxLength: 12,
});
const jsonValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), text, fc.constantFrom(1e308, -1, 0, 1e17, 1.5, Number.MAX_SAFE_INTEGER, '', null, [], {}));

/** A valid body with some fields replaced, removed or added. */
const mutatedBody = fc
  .tuple(
    fc.constantFrom(...Object.keys(valid)),
    fc.array(
      fc.tuple(
        fc.constantFrom(
          'startTime',
          'endTime',
          'body',
          'attributes',
          'spanName',
          'queries',
          'pagination',
          'interval',
          'limit',
          '__proto__',
          'constructor',
          'x',
        ),
        fc.option(jsonValue),
      ),
      { maxLength: 3 },
    ),
  )
  .map(([route, edits]) => {
    const body: Record<string, unknown> = { ...(valid[route] as Record<string, unknown>) };
    for (const [k, v] of edits) {
      if (v === null) Reflect.deleteProperty(body, k);
      else Object.defineProperty(body, k, { value: v, enumerable: true, configurable: true, writable: true });
    }
    return { route, raw: JSON.stringify(body) };
  });

const request = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
  tenant: fc.oneof(
    fc.constantFrom('acme', 'globex', '..', '%2e%2e', '%00', 'a%2Fb', '%E0%A4%A'),
    text.map((s) => encodeURIComponent(s.toWellFormed())),
  ),
  route: fc.oneof(
    mutatedBody,
    fc.record({
      route: fc.constantFrom('', 'logs', 'traces', 'timeseries', 'usage', 'x'),
      raw: fc.oneof(fc.json(), text, fc.constant('{"a":'), fc.constant('')),
    }),
  ),
  query: fc.oneof(
    fc.constant(''),
    fc.constantFrom('?limit=0', '?limit=1001', '?limit=5', '?page=%ZZ', '?search=%25', '?limit=1&limit=2', '?x=1'),
    text.map((s) => `?${s.toWellFormed()}`),
  ),
  contentType: fc.constantFrom(
    'application/json',
    'application/json; charset=latin1',
    'application/x-www-form-urlencoded',
    'text/plain',
    '',
    'application/json; charset=utf-16',
  ),
  contentEncoding: fc.constantFrom(undefined, 'gzip', 'br', 'identity'),
  key: fc.constantFrom(keys.readAcme, keys.adminAcme, keys.admin, 'nope', ''),
});

describe('api/fuzz: no request gets a 5xx', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('fuzz');
    await insertRows(h.store, 'logs', [
      logRow({ tenant: 'globex', ns: secondsNs(T), logId: 'g1', body: secret }),
      logRow({ tenant: 'acme', ns: secondsNs(T), logId: 'a1', body: 'log' }),
    ]);
    await insertRows(h.store, 'spans', [spanRow({ tenant: 'globex', ns: secondsNs(T), traceId: 'g', spanId: 'g1', name: secret })]);
    await insertRows(h.store, 'metrics', [metricRow({ tenant: 'acme', name: 'm', ns: secondsNs(T - 60), value: 1, attrs: { k: 'v' } })]);
  });
  after(async () => {
    await h.close();
  });

  it('answers 1,000 random and mutated requests below 500, with no byte of globex to acme keys', async function () {
    this.timeout(120_000);
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const path = `/v1/tenants${r.tenant === '' && r.route.route === '' ? '' : `/${r.tenant}`}${r.route.route === '' ? '' : `/${r.route.route}`}${r.query}`;
        const headers: Record<string, string> = {};
        if (r.contentType !== '') headers['content-type'] = r.contentType;
        if (r.contentEncoding !== undefined) headers['content-encoding'] = r.contentEncoding;
        const hasBody = r.method !== 'GET' && r.method !== 'OPTIONS';
        const reply = await h.call(r.method, path, { key: r.key === '' ? null : r.key, headers, ...(hasBody ? { raw: r.route.raw } : {}) });
        expect(reply.status, `${r.method} ${path} ${r.route.raw.slice(0, 200)} → ${reply.text.slice(0, 300)}`).to.be.below(500);
        if (r.key !== keys.admin) expect(reply.text).not.to.contain(secret);
      }),
      { seed: 20_261_123, numRuns: 1000 },
    );
    const globex = await h.post('/v1/tenants/globex/logs', { startTime: T - 60, endTime: T + 60 }, keys.readGlobex);
    expect(globex.status).to.equal(200);
    expect(globex.text).to.contain(secret);
  });
});
