// Issue 17's proof for traces, checked against the documentation (issue
// 32): spans made by the OTel JS SDK and sent with the official
// http/protobuf exporter go to a Tenantry `all` process; every request of
// the conformance table (TraceQL over every intrinsic, scope, operator and
// type, && / || in and between spansets, select, limit, the legacy tag
// search, tag names and values v1/v2) and every trace by id (v1 and v2,
// JSON and protobuf) must get the answer the public Tempo API and TraceQL
// documentation give for the corpus (support/conformance-table.ts, each row
// naming its rule). Deliberate differences (docs/tempo.md) are asserted as
// such. Also: isolation on every endpoint, bad TraceQL with its position,
// unsupported constructs named, and the limits (limit, spss, maxQueryDays).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';
import { conformanceTable, unparsableQueries, unsupportedQueries } from './support/conformance-table.ts';
import { corpusModel } from './support/corpus-model.ts';
import type { ModelTrace } from './support/corpus-model.ts';
import { checkRow, expectedTrace, searchId, selected } from './support/expected-answers.ts';
import { ask, canonicalScopes, canonicalSearch, canonicalTrace, decodeTraceV1, decodeTraceV2 } from './support/tempo-client.ts';
import type { TempoEndpoint } from './support/tempo-client.ts';
import { exportSpans, traceCorpus } from './support/trace-corpus.ts';

const tenants = { a: 'acme', b: 'globex' };
const keys = { ingest: 'tempo-conf-ingest-0123456789abcdef', a: 'tempo-conf-read-a-0123456789abcdef', both: 'tempo-conf-read-ab-0123456789abcdef' };
/** The marker in every value of tenant B's spans: no answer for A may contain it. */
const secret = 'secret';

/** Bounded poll for a condition Tenantry reports no event for; returns whether it held in time. */
async function until(what: () => Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await what()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

describe('Tempo API conformance (OTLP traces in, the documented Tempo HTTP API out)', function () {
  this.timeout(300_000);
  let dir = '';
  let tenantry: TenantryProcess | undefined;
  let target: TempoEndpoint;
  let apiUrl = '';
  const spansA = traceCorpus(tenants.a, 12, Date.now());
  const spansB = traceCorpus(tenants.b, 3, Date.now(), secret);
  const modelA: ModelTrace[] = corpusModel(spansA);
  const modelB: ModelTrace[] = corpusModel(spansB);
  const rows: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tenantry-tempo-conf-'));
    tenantry = startTenantry(
      ['all'],
      testEnvironment(join(dir, 'tenantry'), {
        TENANTRY_API_KEYS: JSON.stringify([
          { key: keys.ingest, scopes: ['ingest'], tenants: ['*'] },
          { key: keys.a, scopes: ['read'], tenants: [tenants.a] },
          { key: keys.both, scopes: ['read'], tenants: [tenants.a, tenants.b] },
        ]),
        TENANTRY_TENANT_MAX_QUERY_DAYS: '2',
      }),
    );
    const ports = await tenantry.started(180_000);
    apiUrl = `http://127.0.0.1:${ports['api'] ?? 0}`;
    target = { url: `${apiUrl}/tempo`, headers: { authorization: `Bearer ${keys.both}`, 'x-scope-orgid': tenants.a } };
    await exportSpans(`http://127.0.0.1:${ports['otlpHttp'] ?? 0}/v1/traces`, { authorization: `Bearer ${keys.ingest}` }, [...spansA, ...spansB]);
    // The spans are searchable once their INSERT is done, which reports no event: poll until both tenants' traces are all found.
    const all = async (tenant: string, n: number): Promise<boolean> => {
      const a = await ask({ url: target.url, headers: { ...target.headers, 'x-scope-orgid': tenant } }, '/api/search', { q: '{ }', limit: '100' });
      return a.status === 200 && canonicalSearch(a.body).length === n;
    };
    const ready = await until(async () => (await all(tenants.a, modelA.length)) && (await all(tenants.b, modelB.length)), 60_000, 250);
    expect(ready, `Tenantry holds ${modelA.length} + ${modelB.length} traces:\n${tenantry.stderr()}`).to.equal(true);
  });

  after(async () => {
    if (rows.length > 0) console.log(`\n    ${'request'.padEnd(100)} result  rule\n${rows.map((r) => `    ${r}`).join('\n')}\n`);
    await tenantry?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('holds a corpus in which every TraceQL row but the two documented-empty ones selects something (the table can fail)', () => {
    // A row whose expected answer is empty proves little alone: only the no-conversion and missing-attribute rows may be.
    const empty = conformanceTable.filter((r) => r.expect.kind === 'search' && selected(modelA, r.expect.selects).length === 0).map((r) => r.name);
    expect(empty).to.deep.equal(['{ span.http.status_code = "200" }', '{ span.nope != "x" }']);
    expect(modelA).to.have.length(12);
  });

  it(`answers the ${conformanceTable.length} requests of the conformance table as documented`, async () => {
    const failures: string[] = [];
    for (const row of conformanceTable) {
      const answer = await ask(target, row.path, row.params);
      const problems = checkRow(row, modelA, answer.status, answer.body);
      rows.push(`${row.name.slice(0, 100).padEnd(100)} ${(problems.length === 0 ? 'ok' : 'WRONG').padEnd(7)} ${row.rule.slice(0, 90)}`);
      if (problems.length > 0) failures.push(`${row.name}\n  rule: ${row.rule}\n  ${problems.join('\n  ')}`);
    }
    expect(failures, failures.join('\n')).to.deep.equal([]);
  });

  it('returns every trace by id as the corpus holds it: v1 and v2, JSON and protobuf, by its id with or without leading zeros', async () => {
    for (const t of modelA) {
      const expected = expectedTrace(t);
      const id = t.traceId;
      const json1 = await ask(target, `/api/traces/${id}`);
      const json2 = await ask(target, `/api/v2/traces/${searchId(id)}`);
      const proto1 = await ask(target, `/api/traces/${id}`, {}, { accept: 'application/protobuf' });
      const proto2 = await ask(target, `/api/v2/traces/${id}`, {}, { accept: 'application/protobuf' });
      expect([json1.status, json2.status, proto1.status, proto2.status], id).to.deep.equal([200, 200, 200, 200]);
      expect(canonicalTrace((json1.body as { batches?: unknown } | undefined)?.batches), `v1 JSON ${id}`).to.deep.equal(expected);
      expect(canonicalTrace((json2.body as { trace?: { resourceSpans?: unknown } } | undefined)?.trace?.resourceSpans), `v2 JSON ${id}`).to.deep.equal(
        expected,
      );
      expect(canonicalTrace(decodeTraceV1(proto1.bytes)), `v1 protobuf ${id}`).to.deep.equal(expected);
      expect(canonicalTrace(decodeTraceV2(proto2.bytes)), `v2 protobuf ${id}`).to.deep.equal(expected);
      expect(proto1.type).to.equal('application/protobuf');
      expect(json1.type).to.match(/^application\/json/);
    }
    rows.push(
      `${`trace by id x ${modelA.length}: v1/v2 JSON, v1/v2 protobuf`.padEnd(100)} ${'ok'.padEnd(7)} COMPAT-APIS.md: v1 {"batches"}, v2 {"trace": {"resourceSpans"}}, protobuf on Accept`,
    );
  });

  it('answers an absent trace 404 (v1 and v2, JSON and protobuf) and a malformed id 400', async () => {
    // COMPAT-APIS.md: another tenant's trace is 404; an id that names no trace is as absent (docs/tempo.md).
    for (const path of ['/api/traces/0000000000000000000000000000abcd', '/api/v2/traces/abcd']) {
      for (const accept of ['application/json', 'application/protobuf']) {
        const a = await ask(target, path, {}, { accept });
        expect(a.status, `${path} ${accept}`).to.equal(404);
        expect(a.type).to.match(/^text\/plain/);
      }
    }
    for (const bad of ['zz', '0123456789abcdef0123456789abcdef0']) {
      const a = await ask(target, `/api/traces/${bad}`);
      expect(a.status, bad).to.equal(400);
      expect(a.type).to.match(/^text\/plain/);
      expect(a.text).to.match(/trace ID/i);
    }
  });

  it('answers /api/echo and /api/status/buildinfo as documented', async () => {
    // API docs: echo answers 200 with the body "echo"; buildinfo's fields are version, revision, branch, buildUser, buildDate, goVersion.
    const echo = await ask(target, '/api/echo');
    expect([echo.status, echo.text.trim()]).to.deep.equal([200, 'echo']);
    expect(echo.type).to.match(/^text\/plain/);
    const info = await ask(target, '/api/status/buildinfo');
    expect(info.status).to.equal(200);
    expect(Object.keys(info.body as object).sort()).to.deep.equal(['branch', 'buildDate', 'buildUser', 'goVersion', 'revision', 'version']);
  });

  it('lists tag names by scope: every span and resource attribute, and the documented intrinsics it runs', async () => {
    const scopes = canonicalScopes((await ask(target, '/api/v2/search/tags')).body);
    const names = (pick: (t: ModelTrace) => string[]): string[] => [...new Set(modelA.flatMap(pick))].sort();
    expect(scopes['span']).to.deep.equal(names((t) => t.spans.flatMap((s) => Object.keys(s.attributes))));
    expect(scopes['resource']).to.deep.equal(names((t) => t.spans.flatMap((s) => Object.keys(s.resource))));
    // TraceQL docs' intrinsics; Tenantry lists only those it runs (no event:*, link:*, instrumentation:*: deliberate difference).
    expect(scopes['intrinsic']).to.include.members(['duration', 'kind', 'name', 'rootName', 'rootServiceName', 'status', 'statusMessage', 'traceDuration']);
    expect((scopes['intrinsic'] ?? []).filter((t) => /^(event|link|instrumentation):/.test(t))).to.deep.equal([]);
    const spanOnly = canonicalScopes((await ask(target, '/api/v2/search/tags', { scope: 'span' })).body);
    expect(Object.keys(spanOnly)).to.deep.equal(['span']);
  });

  it('answers unparsable TraceQL 400 with the position of the offending text', async () => {
    for (const { q, at } of unparsableQueries) {
      const a = await ask(target, '/api/search', { q });
      expect(a.status, q).to.equal(400);
      expect(a.type).to.match(/^text\/plain/);
      expect(a.text, q).to.contain(`parse error at line 1, col ${at + 1}`);
    }
  });

  it('refuses the TraceQL it does not run with 400 naming the construct (Tempo runs it: deliberate difference)', async () => {
    for (const u of unsupportedQueries) {
      const a = await ask(target, '/api/search', { q: u.q });
      expect(a.status, u.q).to.equal(400);
      expect(a.text, u.q).to.contain(u.names).and.contain('not supported');
    }
  });

  it("isolates tenants on every endpoint: A's key asking for B is 404, and A's answers never show B", async () => {
    const idB = modelB[0]?.traceId ?? '';
    const aKey = { url: `${apiUrl}/tempo`, headers: { authorization: `Bearer ${keys.a}` } };
    const paths = [
      '/api/echo',
      '/api/search?q=%7B%7D',
      '/api/search?tags=service.name%3Dsecret',
      `/api/traces/${idB}`,
      `/api/v2/traces/${idB}`,
      '/api/search/tags',
      '/api/v2/search/tags',
      '/api/search/tag/service.name/values',
      '/api/v2/search/tag/resource.service.name/values',
      '/api/status/buildinfo',
    ];
    for (const path of paths) {
      const asB = await ask(aKey, path, {}, { 'x-scope-orgid': tenants.b });
      expect(asB.status, path).to.equal(404);
      expect(asB.text, path).to.not.contain(secret);
      const asA = await ask(aKey, path);
      expect(asA.text, path).to.not.contain(secret);
      // B's trace id asked in A's tenant is 404, v1 and v2 (COMPAT-APIS.md: another tenant's trace is 404).
      expect(asA.status, path).to.equal(path.includes('/traces/') ? 404 : 200);
    }
    // The search in A found none of B's traces, and B's own key reaches them (the data is there; A just cannot see it).
    const inA = canonicalSearch((await ask(aKey, '/api/search', { q: '{ }', limit: '100' })).body).map((t) => t['traceID']);
    expect(inA).to.have.length(modelA.length).and.not.include(searchId(idB));
    const viaBoth = await ask({ url: `${apiUrl}/tempo`, headers: { authorization: `Bearer ${keys.both}`, 'x-scope-orgid': tenants.b } }, `/api/traces/${idB}`);
    expect(viaBoth.status).to.equal(200);
    expect(viaBoth.text).to.contain(`${secret}-`);
  });

  it("applies its limits: limit and spss bounds, spss per spanset, and the tenant's maxQueryDays", async () => {
    const over = await ask(target, '/api/search', { q: '{ }', limit: '10001' });
    expect([over.status, over.text]).to.satisfy(([s, t]: [number, string]) => s === 400 && t.includes('limit'));
    const spss = await ask(target, '/api/search', { q: '{ }', spss: '1001' });
    expect(spss.status).to.equal(400);
    // API docs: spss limits the spans per spanset (default 3); matched still counts all.
    const one = await ask(target, '/api/search', { q: '{ }', spss: '1', limit: '100' });
    const sizes = new Map(modelA.map((t) => [searchId(t.traceId), t.spans.length]));
    for (const t of canonicalSearch(one.body)) {
      for (const s of t['spanSets'] as { spans: unknown[]; matched: number }[])
        expect([s.spans.length, s.matched]).to.deep.equal([1, sizes.get(String(t['traceID']))]);
    }
    const byDefault = await ask(target, '/api/search', { q: '{ }', limit: '100' });
    for (const t of canonicalSearch(byDefault.body))
      for (const s of t['spanSets'] as { spans: unknown[] }[]) expect(s.spans.length).to.equal(Math.min(3, sizes.get(String(t['traceID'])) ?? 0));
    // API docs: limit defaults to 20; the corpus has 12 traces, so a search without limit returns them all.
    expect(canonicalSearch((await ask(target, '/api/search', { q: '{ }' })).body)).to.have.length(12);
    const now = Math.floor(Date.now() / 1000);
    const long = await ask(target, '/api/search', { q: '{ }', start: String(now - 5 * 86400), end: String(now) });
    expect(long.status).to.equal(400);
    expect(long.text).to.contain('maxQueryDays');
    const inside = await ask(target, '/api/search', { q: '{ }', start: String(now - 86400), end: String(now), limit: '100' });
    expect(canonicalSearch(inside.body)).to.have.length(12);
  });
});
