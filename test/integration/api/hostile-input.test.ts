// The API inputs of issue 12, sent by tenant acme's key: each is a 400 naming
// the problem (never a 5xx), no prototype is polluted, and tenant globex's
// queries keep succeeding after every one; the same inputs aimed at globex
// with acme's key are 404 with no byte of globex's data.
import { expect } from 'chai';
import { keys, startHarness } from './support/api-harness.ts';
import type { Harness } from './support/api-harness.ts';
import { insertRows, logRow, secondsNs, spanRow } from './support/telemetry-rows.ts';

const T = 1_795_000_000;
const window = { startTime: T - 60, endTime: T + 3600 };
const secret = 'GLOBEX-SECRET-7';
const manyPatterns = Object.fromEntries(Array.from({ length: 50 }, (_, k) => [`k${k}`, Array.from({ length: 1000 }, (_, i) => `%a${i}%b%`)]));

/** [what, route under /v1/tenants/<t>/, raw JSON body, what the 400 must say]. */
const hostile: [string, string, string, RegExp][] = [
  ['a span-name pattern ending in a lone backslash', 'traces', JSON.stringify({ ...window, spanName: ['abc%\\'] }), /spanName\[0\] .* ends in a lone "\\"/],
  ['a body pattern ending in a lone backslash', 'logs', JSON.stringify({ ...window, body: '%x\\' }), /body\[0\] .* ends in a lone "\\"/],
  ['an attribute pattern with an unknown escape', 'logs', JSON.stringify({ ...window, attributes: { k: '%\\d%' } }), /attributes\.k\[0\] .* has "\\d"/],
  ['50 keys x 1,000 LIKE patterns', 'logs', JSON.stringify({ ...window, attributes: manyPatterns }), /hold 50000 patterns.*at most 100/],
  [
    'a pattern of 100,000 characters',
    'traces',
    JSON.stringify({ ...window, spanName: `%${'a'.repeat(100_000)}` }),
    /pattern of 100001 characters: at most 1024/,
  ],
  [
    '20 timeseries queries of 50 patterns each',
    'timeseries',
    JSON.stringify({
      ...window,
      queries: Array.from({ length: 20 }, () => ({ metrics: ['m'], attributes: { k: Array.from({ length: 50 }, (_, i) => `%${i}%`) } })),
    }),
    /hold 1000 patterns/,
  ],
  [
    'JSON nested 100,000 levels',
    'logs',
    `{"startTime":1,"body":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
    /nests arrays and objects deeper than 32 levels/,
  ],
  [
    'objects nested 100,000 levels under __proto__',
    'logs',
    `{"startTime":1,"__proto__":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`,
    /must not use the key "__proto__"|deeper than 32/,
  ],
  ['a __proto__ key', 'logs', '{"startTime":1,"attributes":{"__proto__":{"polluted":"yes"}}}', /must not use the key "__proto__"/],
  ['constructor.prototype', 'traces', '{"startTime":1,"constructor":{"prototype":{"polluted":"yes"}}}', /unknown field "constructor"/],
];

describe('api/hostile input', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('hostile');
    await insertRows(h.store, 'logs', [
      logRow({ tenant: 'globex', ns: secondsNs(T), logId: 'g1', body: secret }),
      logRow({ tenant: 'acme', ns: secondsNs(T), logId: 'a1', body: 'acme log' }),
    ]);
    await insertRows(h.store, 'spans', [spanRow({ tenant: 'globex', ns: secondsNs(T), traceId: 'g', spanId: 'g1', name: secret })]);
  });
  after(async () => {
    await h.close();
  });

  const raw = (tenant: string, route: string, body: string, key: string): ReturnType<Harness['call']> =>
    h.call('POST', `/v1/tenants/${tenant}/${route}`, { key, raw: body, headers: { 'content-type': 'application/json' } });

  async function globexStillAnswers(): Promise<void> {
    const logs = await h.post('/v1/tenants/globex/logs', window, keys.readGlobex);
    expect(logs.status).to.equal(200);
    expect(logs.text).to.contain(secret);
    const spans = await h.post('/v1/tenants/globex/traces', { ...window, spanName: '%SECRET%' }, keys.readGlobex);
    expect(spans.text).to.contain(secret);
  }

  for (const [what, route, body, says] of hostile) {
    it(`answers ${what} with a 400 naming the problem; globex keeps succeeding`, async () => {
      const reply = await raw('acme', route, body, keys.readAcme);
      expect(reply.status, reply.text.slice(0, 300)).to.equal(400);
      expect((reply.body as { error: { code: string; message: string } }).error.message).to.match(says);
      expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
      expect(Object.prototype).not.to.have.property('polluted');
      await globexStillAnswers();
    });
  }

  it("answers the same inputs aimed at globex with acme's key as 404, with no byte of globex", async () => {
    for (const [what, route, body] of hostile) {
      const reply = await raw('globex', route, body, keys.readAcme);
      // A body refused while reading (before the route's scope check) is 400 on any path, and says nothing of the tenant.
      expect(reply.status, what).to.be.oneOf([400, 404]);
      expect(reply.text, what).not.to.contain(secret);
      if (reply.status === 400) expect(reply.text, what).not.to.contain('globex');
    }
  });

  it('takes an attribute filter named "constructor" or "toString" as a plain key', async () => {
    const reply = await h.post('/v1/tenants/acme/logs', { ...window, attributes: { constructor: 'x', toString: ['%'] } }, keys.readAcme);
    expect(reply.status).to.equal(200);
    expect((reply.body as { data: unknown[] }).data).to.deep.equal([]);
  });

  it('still finds exact values with a backslash (a literal there) and escaped patterns', async () => {
    await insertRows(h.store, 'spans', [spanRow({ tenant: 'acme', ns: secondsNs(T + 1), traceId: 'a', spanId: 'a1', name: 'C:\\temp 100%' })]);
    const exact = await h.post('/v1/tenants/acme/traces', { ...window, spanName: 'x\\' }, keys.readAcme);
    expect(exact.status).to.equal(200);
    const escaped = await h.post('/v1/tenants/acme/traces', { ...window, spanName: 'C:\\\\temp 100\\%' }, keys.readAcme);
    expect((escaped.body as { data: { spanId: string }[] }).data.map((s) => s.spanId)).to.deep.equal(['a1']);
  });
});
