// Issue 17's main proof for traces: the same spans, made by the OTel JS SDK
// and sent with the official http/protobuf exporter, go to the real Tempo
// (single binary, multi-tenant) and to a Tenantry `all` process; then the
// table of differential-queries.ts (TraceQL over every intrinsic, scope,
// operator and type, && / || in and between spansets, select, limit, the
// legacy tag search, tag names and values v1/v2) and every trace by id (v1
// and v2, JSON and protobuf) are asked of both and must agree. Deliberate
// differences (docs/tempo.md) are asserted as such. Also: isolation on every
// endpoint, bad TraceQL with its position, unsupported constructs named,
// and the limits (limit, spss, maxQueryDays).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { findPeerBinaries } from '../../peers/peer-binaries.ts';
import { startTempo } from '../../peers/tempo-server.ts';
import type { Tempo } from '../../peers/tempo-server.ts';
import { skipUnlessFound } from '../../support/skip-unless-found.ts';
import { startTenantry, testEnvironment } from '../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../support/tenantry-process.ts';
import { differentialQueries, unsupportedQueries } from './support/differential-queries.ts';
import type { DifferentialQuery } from './support/differential-queries.ts';
import { ask, canonicalScopes, canonicalSearch, canonicalTrace, canonicalValues, decodeTraceV1, decodeTraceV2 } from './support/tempo-client.ts';
import type { TempoEndpoint } from './support/tempo-client.ts';
import { exportSpans, traceCorpus, traceIds } from './support/trace-corpus.ts';

const tenants = { a: 'acme', b: 'globex' };
const keys = { ingest: 'tempo-diff-ingest-0123456789abcdef', a: 'tempo-diff-read-a-0123456789abcdef', both: 'tempo-diff-read-ab-0123456789abcdef' };
/** The marker in every value of tenant B's spans: no answer for A may contain it. */
const secret = 'secret';

/** Bounded poll for a condition neither system reports an event for; returns whether it held in time. */
async function until(what: () => Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await what()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

function canonical(q: DifferentialQuery, body: unknown): unknown {
  switch (q.kind) {
    case 'search': return canonicalSearch(body);
    case 'limit': return canonicalSearch(body).length;
    case 'values': return canonicalValues(body);
    case 'tagNames': return [...new Set([...((body as { tagNames?: string[] } | undefined)?.tagNames ?? [])])].sort();
  }
}

describe('Tempo compatibility against the real Tempo (OTLP traces in, Tempo HTTP API out)', function () {
  this.timeout(600_000);
  let dir = '';
  let tenantry: TenantryProcess | undefined;
  let tempo: Tempo | undefined;
  let reference: TempoEndpoint;
  let target: TempoEndpoint;
  let apiUrl = '';
  const spansA = traceCorpus(tenants.a, 12, Date.now());
  const spansB = traceCorpus(tenants.b, 3, Date.now(), secret);
  const rows: string[] = [];

  before(async function () {
    const peers = findPeerBinaries();
    skipUnlessFound(this, peers);
    if (!peers.ok) return;
    dir = await mkdtemp(join(tmpdir(), 'tenantry-tempo-diff-'));
    tenantry = startTenantry(['all'], testEnvironment(join(dir, 'tenantry'), {
      TENANTRY_API_KEYS: JSON.stringify([
        { key: keys.ingest, scopes: ['ingest'], tenants: ['*'] },
        { key: keys.a, scopes: ['read'], tenants: [tenants.a] },
        { key: keys.both, scopes: ['read'], tenants: [tenants.a, tenants.b] },
      ]),
      TENANTRY_TENANT_MAX_QUERY_DAYS: '2',
    }));
    const [ports, started] = await Promise.all([tenantry.started(180_000), startTempo(peers.binaries.tempo, join(dir, 'tempo'), { traceIdlePeriod: '1s' })]);
    tempo = started;
    apiUrl = `http://127.0.0.1:${ports['api'] ?? 0}`;
    reference = { url: tempo.url, headers: { 'x-scope-orgid': tenants.a } };
    target = { url: `${apiUrl}/tempo`, headers: { authorization: `Bearer ${keys.both}`, 'x-scope-orgid': tenants.a } };
    const otlp = `http://127.0.0.1:${ports['otlpHttp'] ?? 0}/v1/traces`;
    await Promise.all([
      exportSpans(`${tempo.otlpUrl}/v1/traces`, { 'x-scope-orgid': tenants.a }, spansA),
      exportSpans(`${tempo.otlpUrl}/v1/traces`, { 'x-scope-orgid': tenants.b }, spansB),
      exportSpans(otlp, { authorization: `Bearer ${keys.ingest}` }, [...spansA, ...spansB]),
    ]);
    // Tempo's search sees a trace once it has been idle for trace_idle_period,
    // and Tenantry's once its INSERT is done; neither reports an event: poll
    // until both find all of A's traces (and B's), then compare.
    const all = async (e: TempoEndpoint, tenant: string, n: number): Promise<boolean> => {
      const a = await ask({ url: e.url, headers: { ...e.headers, 'x-scope-orgid': tenant } }, '/api/search', { q: '{ }', limit: '100' });
      return a.status === 200 && canonicalSearch(a.body).length === n;
    };
    const ready = await until(async () => (await all(reference, tenants.a, 12)) && (await all(reference, tenants.b, 3))
      && (await all(target, tenants.a, 12)) && (await all(target, tenants.b, 3)), 60_000, 500);
    expect(ready, `both systems hold 12 + 3 traces:\n${tempo.tail()}`).to.equal(true);
  });

  after(async () => {
    if (rows.length > 0) console.log(`\n    ${'query'.padEnd(100)} tempo    tenantry  result\n${rows.map((r) => `    ${r}`).join('\n')}\n`);
    await tempo?.stop();
    await tenantry?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it(`answers the ${differentialQueries.length} queries of the table as Tempo does`, async () => {
    const failures: string[] = [];
    for (const q of differentialQueries) {
      const [expected, actual] = await Promise.all([ask(reference, q.path, q.params), ask(target, q.path, q.params)]);
      const same = expected.status === actual.status && JSON.stringify(canonical(q, expected.body)) === JSON.stringify(canonical(q, actual.body));
      const size = (a: typeof expected): string => `${a.status}/${JSON.stringify(canonical(q, a.body) ?? null).length}B`;
      rows.push(`${q.name.slice(0, 100).padEnd(100)} ${size(expected).padEnd(8)} ${size(actual).padEnd(9)} ${same ? 'same' : 'DIFFERS'}`);
      if (!same) failures.push(`${q.name}:\n  tempo:    ${expected.status} ${JSON.stringify(canonical(q, expected.body))}\n  tenantry: ${actual.status} ${JSON.stringify(canonical(q, actual.body))}`);
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('returns every trace by id as Tempo does: v1 and v2, JSON and protobuf', async () => {
    for (const id of traceIds(spansA)) {
      const json1 = await Promise.all([reference, target].map((e) => ask(e, `/api/traces/${id}`)));
      const json2 = await Promise.all([reference, target].map((e) => ask(e, `/api/v2/traces/${id}`)));
      const proto1 = await Promise.all([reference, target].map((e) => ask(e, `/api/traces/${id}`, {}, { accept: 'application/protobuf' })));
      const proto2 = await Promise.all([reference, target].map((e) => ask(e, `/api/v2/traces/${id}`, {}, { accept: 'application/protobuf' })));
      const [t1, r1] = json1.map((a) => canonicalTrace((a.body as { batches?: unknown } | undefined)?.batches));
      const [t2, r2] = json2.map((a) => canonicalTrace((a.body as { trace?: { resourceSpans?: unknown } } | undefined)?.trace?.resourceSpans));
      const [p1, q1] = proto1.map((a) => canonicalTrace(decodeTraceV1(a.bytes)));
      const [p2, q2] = proto2.map((a) => canonicalTrace(decodeTraceV2(a.bytes)));
      expect(json1.map((a) => a.status), id).to.deep.equal([200, 200]);
      expect(r1, `v1 JSON ${id}`).to.deep.equal(t1);
      expect(r2, `v2 JSON ${id}`).to.deep.equal(t2);
      expect(q1, `v1 protobuf ${id}`).to.deep.equal(p1);
      expect(q2, `v2 protobuf ${id}`).to.deep.equal(p2);
      expect(proto1[1]?.type).to.equal('application/protobuf');
    }
    rows.push(`${`trace by id x ${traceIds(spansA).length}: v1/v2 JSON, v1/v2 protobuf`.padEnd(100)} ${'200'.padEnd(8)} ${'200'.padEnd(9)} same`);
  });

  it('returns the newest traces first, up to limit (Tempo returns as many, of its choosing)', async () => {
    const all = canonicalSearch((await ask(target, '/api/search', { q: '{ }', limit: '100' })).body);
    const newest = all.sort((a, b) => (BigInt(String(b['startTimeUnixNano'])) > BigInt(String(a['startTimeUnixNano'])) ? 1 : -1)).slice(0, 5).map((t) => t['traceID']);
    const five = canonicalSearch((await ask(target, '/api/search', { q: '{ }', limit: '5' })).body, true).map((t) => t['traceID']);
    expect(five).to.deep.equal(newest);
  });

  it('takes tag values exactly from the spans a q= filter matches (Tempo answers a best-effort subset: deliberate difference)', async () => {
    // The corpus: cart traces (t = 1, 4, 7, 10) have redis (odd t) and postgresql (even t) client spans; db.rows = 3t.
    const cases = [
      { q: '{ resource.service.name = "shop-cart" }', exact: ['string:postgresql', 'string:redis'] },
      { q: '{ span.db.rows > 10 }', exact: ['string:postgresql', 'string:redis'] },
      { q: '{ span.db.rows < 4 }', exact: ['string:postgresql', 'string:redis'] },
    ];
    for (const c of cases) {
      const [expected, actual] = await Promise.all([reference, target].map((e) => ask(e, '/api/v2/search/tag/span.db.system/values', { q: c.q })));
      const [e, a] = [canonicalValues(expected?.body), canonicalValues(actual?.body)];
      expect(a, c.q).to.deep.equal(c.exact);
      expect(e.filter((v) => !a.includes(v)), `Tempo's values are among Tenantry's for ${c.q}`).to.deep.equal([]);
      rows.push(`${`v2 span.db.system values q=${c.q} (Tempo: subset)`.padEnd(100)} ${`200/${e.length}`.padEnd(8)} ${`200/${a.length}`.padEnd(9)} asserted`);
    }
  });

  it('answers an unknown trace id as Tempo does (v1 404, v2 an empty trace) and a malformed one 400', async () => {
    const [e1, a1] = await Promise.all([ask(reference, '/api/traces/0000000000000000000000000000abcd'), ask(target, '/api/traces/0000000000000000000000000000abcd')]);
    expect([a1.status, e1.status]).to.deep.equal([404, 404]);
    const [e2, a2] = await Promise.all([ask(reference, '/api/v2/traces/abcd'), ask(target, '/api/v2/traces/abcd')]);
    expect([a2.status, a2.body]).to.deep.equal([e2.status, e2.body]);
    const [e3, a3] = await Promise.all([reference, target].map((e) => ask(e, '/api/v2/traces/abcd', {}, { accept: 'application/protobuf' })));
    expect(a3?.bytes).to.deep.equal(e3?.bytes);
    const [expected, actual] = await Promise.all([ask(reference, '/api/traces/zz'), ask(target, '/api/traces/zz')]);
    expect(actual.status).to.equal(expected.status);
    expect(actual.text.trim()).to.equal(expected.text.trim());
  });

  it('answers /api/echo and /api/status/buildinfo', async () => {
    const [expected, actual] = await Promise.all([ask(reference, '/api/echo'), ask(target, '/api/echo')]);
    expect([actual.status, actual.text, actual.type]).to.deep.equal([expected.status, expected.text, expected.type]);
    const info = await ask(target, '/api/status/buildinfo');
    expect(info.status).to.equal(200);
    expect(Object.keys(info.body as object).sort()).to.deep.equal(Object.keys((await ask(reference, '/api/status/buildinfo')).body as object).sort());
  });

  it('lists tag names by scope as Tempo does, without the intrinsics it does not run (deliberate difference)', async () => {
    const [expected, actual] = await Promise.all([ask(reference, '/api/v2/search/tags'), ask(target, '/api/v2/search/tags')]);
    const [e, a] = [canonicalScopes(expected.body), canonicalScopes(actual.body)];
    expect(a['span']).to.deep.equal(e['span']);
    expect(a['resource']).to.deep.equal(e['resource']);
    // Tenantry lists only the intrinsics it runs; Tempo adds event:*, instrumentation:* (docs/tempo.md).
    const missing = (e['intrinsic'] ?? []).filter((t) => !(a['intrinsic'] ?? []).includes(t));
    expect(missing.every((t) => /^(event|instrumentation|link):/.test(t)), missing.join(', ')).to.equal(true);
    expect((a['intrinsic'] ?? []).filter((t) => !(e['intrinsic'] ?? []).includes(t))).to.deep.equal([]);
  });

  it('answers unparsable TraceQL 400 with the parser position, as Tempo does', async () => {
    for (const q of ['{ span.http.method = }', '{ name = "x" }}', '{ .a = 1 && }']) {
      const [expected, actual] = await Promise.all([ask(reference, '/api/search', { q }), ask(target, '/api/search', { q })]);
      expect([actual.status, expected.status], q).to.deep.equal([400, 400]);
      expect(actual.type).to.match(/^text\/plain/);
      expect(actual.text, q).to.match(/parse error at line 1, col \d+/);
    }
  });

  it('refuses the TraceQL it does not run with 400 naming the construct (Tempo runs it: deliberate difference)', async () => {
    for (const u of unsupportedQueries) {
      const [expected, actual] = await Promise.all([ask(reference, '/api/search', { q: u.q }), ask(target, '/api/search', { q: u.q })]);
      expect(expected.status, `Tempo runs ${u.q}`).to.equal(200);
      expect(actual.status, u.q).to.equal(400);
      expect(actual.text, u.q).to.contain(u.names).and.contain('not supported');
    }
  });

  it('isolates tenants on every endpoint: A\'s key asking for B is 404, and A\'s answers never show B', async () => {
    const idB = traceIds(spansB)[0] ?? '';
    const aKey = { url: `${apiUrl}/tempo`, headers: { authorization: `Bearer ${keys.a}` } };
    const paths = ['/api/echo', '/api/search?q=%7B%7D', '/api/search?tags=service.name%3Dsecret', `/api/traces/${idB}`, `/api/v2/traces/${idB}`, '/api/search/tags',
      '/api/v2/search/tags', '/api/search/tag/service.name/values', '/api/v2/search/tag/resource.service.name/values', '/api/status/buildinfo'];
    for (const path of paths) {
      const asB = await ask(aKey, path, {}, { 'x-scope-orgid': tenants.b });
      expect(asB.status, path).to.equal(404);
      expect(asB.text, path).to.not.contain(secret);
      const asA = await ask(aKey, path);
      expect(asA.text, path).to.not.contain(secret);
      // B's trace id asked in A's tenant: v1 404, v2 an empty trace (as Tempo answers a trace it does not have).
      expect(asA.status, path).to.equal(path.includes('/api/traces/') ? 404 : 200);
      if (path.includes('/v2/traces/')) expect(asA.body).to.deep.equal({ trace: {}, metrics: {} });
    }
    // B's key reaches B's traces (the data is there; A just cannot see it).
    const viaBoth = await ask({ url: `${apiUrl}/tempo`, headers: { authorization: `Bearer ${keys.both}`, 'x-scope-orgid': tenants.b } }, `/api/traces/${idB}`);
    expect(viaBoth.status).to.equal(200);
    expect(viaBoth.text).to.contain(`${secret}-`);
  });

  it('applies its limits: limit and spss bounds, and the tenant\'s maxQueryDays', async () => {
    const over = await ask(target, '/api/search', { q: '{ }', limit: '10001' });
    expect([over.status, over.text]).to.satisfy(([s, t]: [number, string]) => s === 400 && t.includes('limit'));
    const spss = await ask(target, '/api/search', { q: '{ }', spss: '1001' });
    expect(spss.status).to.equal(400);
    const one = await ask(target, '/api/search', { q: '{ }', spss: '1', limit: '100' });
    for (const t of canonicalSearch(one.body)) for (const s of (t['spanSets'] as { spans: unknown[] }[])) expect(s.spans.length).to.equal(1);
    const now = Math.floor(Date.now() / 1000);
    const long = await ask(target, '/api/search', { q: '{ }', start: String(now - 5 * 86400), end: String(now) });
    expect(long.status).to.equal(400);
    expect(long.text).to.contain('maxQueryDays');
    const inside = await ask(target, '/api/search', { q: '{ }', start: String(now - 86400), end: String(now), limit: '100' });
    expect(canonicalSearch(inside.body)).to.have.length(12);
  });
});
