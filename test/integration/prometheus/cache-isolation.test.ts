// Tenant isolation through the API's caches (the series index and the
// sample cache) over HTTP, against a real `all` process fed by remote write:
// tenants A and B hold the same series (same name and labels, so the same
// stored series id) with different values. B's queries warm the caches;
// then A's key, with and without `X-Scope-OrgID: B`, and a key of both
// tenants asking for A, see only A's values on query, query_range, series,
// labels and label values (404 for B where the key does not reach it), and
// B's answers stay B's. New samples for B reach B's cached answers within
// the acknowledged-to-queryable bound, never A's; and a cached answer is as
// fresh as a direct read (a read longer than a day, which the cache does not
// hold, sees nothing the cached one misses).
import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { basicAuth, encodeWriteRequest, pushRemoteWrite, remoteWriteHeaders, snappyBlock } from '../../../support/remote-write-request.ts';
import type { SeriesSpec } from '../../../support/remote-write-request.ts';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const tenantA = 'cache-iso-a';
const tenantB = 'cache-iso-b';
const keyBoth = 'cache-iso-both-key-0123456789abcdef';
const keyA = 'cache-iso-a-only-key-0123456789abcdef';
/** How long acknowledged rows may wait for their INSERT (the process is started with it). */
const batchMaxDelayMs = 1000;
/** Scheduling slack on top of it on a shared 2-core machine (the INSERT itself, the poll's own request). */
const slackMs = 2000;

const nowS = Math.floor(Date.now() / 15_000) * 15 - 15;
/** Samples every 15 s over the last 10 minutes. */
const times = Array.from({ length: 40 }, (_, i) => (nowS - 39 * 15 + i * 15) * 1000);
/** A's values are 100-139, B's 200-239, B's late ones 900+: a value names its tenant. */
const aValue = (i: number): number => 100 + i;
const bValue = (i: number): number => 200 + i;
const shared = { __name__: 'iso_gauge', job: 'node', instance: 'i-1' };

/** The shared series with `value(i)` at each time, and B's own series with a label only B has. */
function seriesOf(value: (i: number) => number, withSecret: boolean): SeriesSpec[] {
  const own: SeriesSpec[] = withSecret
    ? [{ labels: { __name__: 'iso_secret', job: 'node', b_only: 'bsecret' }, samples: times.map((t, i) => ({ timestampMs: t, value: bValue(i) })) }]
    : [];
  return [{ labels: shared, samples: times.map((t, i) => ({ timestampMs: t, value: value(i) })) }, ...own];
}

interface Reply {
  readonly status: number;
  readonly text: string;
  readonly body: { status?: string; data?: unknown; errorType?: string };
}

/** The numbers of every sample value in a query answer's matrix or vector. */
function valuesIn(body: Reply['body']): number[] {
  const data = body.data as { result?: { value?: [number, string]; values?: [number, string][] }[] } | undefined;
  return (data?.result ?? []).flatMap((s) => [...(s.values ?? []), ...(s.value === undefined ? [] : [s.value])].map(([, v]) => Number(v)));
}

describe('prometheus: tenant isolation through the caches, over HTTP', function () {
  this.timeout(300_000);
  let dir: string;
  let tenantry: TenantryProcess;
  let api: string;
  let ingest: string;

  const get = async (path: string, params: Record<string, string>, key: string, org?: string): Promise<Reply> => {
    const headers: Record<string, string> = { authorization: basicAuth(key, 'grafana'), ...(org === undefined ? {} : { 'x-scope-orgid': org }) };
    const res = await fetch(`${api}/prometheus${path}?${new URLSearchParams(params).toString()}`, { headers, signal: AbortSignal.timeout(30_000) });
    const text = await res.text();
    let body: Reply['body'] = {};
    try {
      body = JSON.parse(text) as Reply['body'];
    } catch {
      // Not JSON: the status and text say what happened.
    }
    return { status: res.status, text, body };
  };
  const push = async (tenant: string, series: readonly SeriesSpec[]): Promise<void> => {
    const r = await pushRemoteWrite(
      ingest,
      snappyBlock(encodeWriteRequest(series)),
      remoteWriteHeaders({ authorization: basicAuth(keyBoth), 'x-scope-orgid': tenant }),
    );
    expect(r.status, r.text).to.be.oneOf([200, 204]);
  };
  /** Fixed, so that the same request gets the same text twice; it ends after every sample the tests write. */
  const window = (): Record<string, string> => ({ start: String(nowS - 900), end: String(nowS + 120), step: '15' });
  /** Every read path of the API: [name, path, params]. */
  const paths = (): [string, string, Record<string, string>][] => [
    // A range selector: its raw samples, read over a range the range query's entry covers (so it is answered from it).
    ['query', '/api/v1/query', { query: 'iso_gauge[15m]', time: String(nowS) }],
    ['query_range', '/api/v1/query_range', { query: 'iso_gauge', ...window() }],
    ['query_range sum', '/api/v1/query_range', { query: 'sum(iso_gauge) + 0 * count({__name__=~"iso_.*"})', ...window() }],
    ['series', '/api/v1/series', { 'match[]': '{__name__=~"iso_.*"}', start: String(nowS - 900), end: String(nowS + 60) }],
    ['labels', '/api/v1/labels', { start: String(nowS - 900), end: String(nowS + 60) }],
    ['label values', '/api/v1/label/__name__/values', { start: String(nowS - 900), end: String(nowS + 60) }],
    ['b_only values', '/api/v1/label/b_only/values', { start: String(nowS - 900), end: String(nowS + 60) }],
  ];
  /** Every sample of the shared series a tenant's query answers (a range selector: the raw samples; its cache entry once warm). */
  const latestOf = async (key: string, org?: string): Promise<number[]> => {
    const r = await get('/api/v1/query', { query: 'iso_gauge[20m]', time: String(nowS + 120) }, key, org);
    expect(r.status, r.text).to.equal(200);
    return valuesIn(r.body);
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tenantry-cache-iso-'));
    tenantry = startTenantry(
      ['all'],
      testEnvironment(join(dir, 'data'), {
        TENANTRY_BATCH_MAX_DELAY_MS: String(batchMaxDelayMs),
        TENANTRY_API_KEYS: JSON.stringify([
          { key: keyBoth, scopes: ['ingest', 'read'], tenants: [tenantA, tenantB] },
          { key: keyA, scopes: ['read'], tenants: [tenantA] },
        ]),
      }),
    );
    const ports = await tenantry.started(180_000);
    api = `http://127.0.0.1:${ports['api'] ?? 0}`;
    ingest = `http://127.0.0.1:${ports['otlpHttp'] ?? 0}`;
    await push(tenantA, seriesOf(aValue, false));
    await push(tenantB, seriesOf(bValue, true));
    // Both tenants' rows queryable (bounded poll: rows become visible a moment after their acknowledgement).
    const deadline = Date.now() + 60_000;
    for (;;) {
      const a = await get('/api/v1/query', { query: 'count_over_time(iso_gauge[15m])', time: String(nowS) }, keyA);
      const b = await get('/api/v1/query', { query: 'count_over_time({__name__=~"iso_.*"}[15m])', time: String(nowS) }, keyBoth, tenantB);
      if (valuesIn(a.body).join() === '40' && valuesIn(b.body).join() === '40,40') break;
      if (Date.now() > deadline) throw new Error(`rows not visible in time: A ${a.text} B ${b.text}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });
  after(async () => {
    await tenantry.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("answers A only A's values after B's queries warmed the caches, and B still B's", async () => {
    const before = new Map<string, string>();
    // B warms the series index and the sample cache (twice: the second is answered from the entry).
    for (let pass = 0; pass < 2; pass++) {
      for (const [name, path, params] of paths()) {
        const r = await get(path, params, keyBoth, tenantB);
        expect(r.status, `${name}: ${r.text}`).to.equal(200);
        before.set(name, r.text);
      }
    }
    expect(valuesIn(JSON.parse(before.get('query_range') ?? '{}') as Reply['body'])).to.include.members([200, 239]);
    expect(valuesIn(JSON.parse(before.get('query') ?? '{}') as Reply['body'])).to.deep.equal(times.map((_, i) => bValue(i)));
    expect(before.get('b_only values')).to.include('bsecret');

    const bValues = new Set(times.map((_, i) => bValue(i)));
    const askers: [string, string, string | undefined][] = [
      ["A's key", keyA, undefined],
      ["A's key, X-Scope-OrgID: A", keyA, tenantA],
      ["both tenants' key, X-Scope-OrgID: A", keyBoth, tenantA],
    ];
    for (const [who, key, org] of askers) {
      // B's entries are the last filled before each asker's first request.
      for (const [, path, params] of paths()) await get(path, params, keyBoth, tenantB);
      for (const [name, path, params] of paths()) {
        const r = await get(path, params, key, org);
        expect(r.status, `${who} ${name}: ${r.text}`).to.equal(200);
        for (const secret of ['bsecret', 'b_only', 'iso_secret', tenantB]) expect(r.text, `${who} ${name}`).to.not.include(secret);
        const values = valuesIn(r.body);
        expect(
          values.filter((v) => bValues.has(v)),
          `${who} ${name}: B's values`,
        ).to.deep.equal([]);
        // A range query repeats a sample over the steps of its lookback: its distinct values.
        if (name === 'query_range') expect([...new Set(values)]).to.deep.equal(times.map((_, i) => aValue(i)));
        if (name === 'query') expect(values).to.deep.equal(times.map((_, i) => aValue(i)));
      }
    }
    // A's key asking for B: 404 in Prometheus' envelope on every path, nothing of B's.
    for (const [name, path, params] of paths()) {
      const r = await get(path, params, keyA, tenantB);
      expect(r.status, `${name}: ${r.text}`).to.equal(404);
      expect(r.body, name).to.include({ status: 'error', errorType: 'not_found' });
      for (const secret of ['bsecret', 'iso_secret', '"2']) expect(r.text, name).to.not.include(secret);
    }
    // After A's queries (which filled A's own entries for the same series ids), B's answers are unchanged.
    for (const [name, path, params] of paths()) {
      const r = await get(path, params, keyBoth, tenantB);
      expect(r.status, `${name}: ${r.text}`).to.equal(200);
      expect(r.text, name).to.equal(before.get(name));
    }
  });

  it("shows B's new samples in B's cached answers within the queryable bound, and never in A's", async () => {
    // Both entries warm: A's and B's.
    const aBefore = await latestOf(keyA, tenantA);
    expect(aBefore).to.deep.equal(times.map((_, i) => aValue(i)));
    expect(await latestOf(keyBoth, tenantB)).to.deep.equal(times.map((_, i) => bValue(i)));

    // Two new samples for B, after the last: values A never had.
    const late = [1, 2].map((k) => ({ timestampMs: (nowS + k * 15) * 1000, value: 900 + k }));
    await push(tenantB, [{ labels: shared, samples: late }]);
    const acked = Date.now();
    const deadline = acked + batchMaxDelayMs + slackMs;
    let seen = await latestOf(keyBoth, tenantB);
    while (!seen.includes(902) && Date.now() <= deadline) {
      await new Promise((r) => setTimeout(r, 50));
      seen = await latestOf(keyBoth, tenantB);
    }
    const after = Date.now() - acked;
    expect(seen, `B's cached answer ${after} ms after the acknowledgement`).to.deep.equal([...times.map((_, i) => bValue(i)), 901, 902]);
    expect(await latestOf(keyA, tenantA), "A's cached answer").to.deep.equal(aBefore);
    expect(await latestOf(keyA), "A's cached answer, A's key without the header").to.deep.equal(aBefore);
  });

  it('answers from the cache exactly what a direct read answers, at once', async () => {
    // A read longer than a day is read directly (never cached); once it sees a new sample, the cached read must too.
    const direct = async (): Promise<number[]> => {
      const r = await get('/api/v1/query', { query: 'last_over_time(iso_gauge[25h])', time: String(nowS + 120) }, keyBoth, tenantB);
      expect(r.status, r.text).to.equal(200);
      return valuesIn(r.body);
    };
    await latestOf(keyBoth, tenantB);
    await push(tenantB, [{ labels: shared, samples: [{ timestampMs: (nowS + 60) * 1000, value: 904 }] }]);
    const deadline = Date.now() + 30_000;
    while (!(await direct()).includes(904)) {
      if (Date.now() > deadline) throw new Error('the direct read never saw the new sample');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await latestOf(keyBoth, tenantB)).to.include(904);
    expect(await latestOf(keyA, tenantA)).to.not.include(904);
  });
});
