// POST /v1/tenants/:tenant_id/logs: every filter, time bounds, records, pages.
import { expect } from 'chai';
import { field, keys, startHarness } from './support/api-harness.ts';
import type { Harness, Reply } from './support/api-harness.ts';
import { insertRows, logRow, secondsNs } from './support/telemetry-rows.ts';

const T = 1_795_000_000;
const ns = (offsetMs: number): bigint => secondsNs(T) + BigInt(offsetMs) * 1_000_000n;

const ids = (reply: Reply): string[] => {
  expect(reply.status, reply.text).to.equal(200);
  return (field(reply.body, 'data') as { logId: string }[]).map((r) => r.logId);
};

describe('api/logs', () => {
  let h: Harness;
  const q = (body: Record<string, unknown>, key?: string): Promise<Reply> => h.post('/v1/tenants/acme/logs', { startTime: T, endTime: T + 60, ...body }, key);

  before(async () => {
    h = await startHarness('logs');
    await insertRows(h.store, 'logs', [
      logRow({
        tenant: 'acme',
        ns: ns(1000),
        logId: 'L1',
        body: 'Payment ERROR: card declined',
        traceId: 'tr1',
        spanId: 'sp1',
        severity: 17,
        service: 'pay',
        resource: { 'service.name': 'pay', region: 'eu' },
        scope: { lib: 'otel' },
        attrs: { user: 'alice', region: 'eu-west' },
      }),
      logRow({
        tenant: 'acme',
        ns: ns(2000),
        logId: 'L2',
        body: 'user logged in',
        traceId: 'tr2',
        spanId: 'sp2',
        severity: 9,
        service: 'auth',
        resource: { region: 'us' },
        attrs: { user: 'bob' },
      }),
      logRow({
        tenant: 'acme',
        ns: ns(3000),
        logId: 'L3',
        body: 'disk 100% full',
        traceId: 'tr2',
        spanId: 'sp3',
        severity: 13,
        service: 'auth',
        attrs: { user: 'carol' },
      }),
      logRow({ tenant: 'acme', ns: ns(4000), logId: 'L4', body: 'trace msg', severity: 1 }),
      logRow({ tenant: 'acme', ns: ns(5000), logId: 'L5', body: 'no severity', severity: 0 }),
      logRow({ tenant: 'acme', ns: ns(6000), logId: 'L6', body: 'fatal crash', severity: 24, scope: { lib: 'custom' } }),
      logRow({ tenant: 'acme', ns: ns(7000) + 123_456n, logId: 'L7', body: 'debugging under_score', severity: 5 }),
      logRow({ tenant: 'acme', ns: ns(120_000), logId: 'LATE', body: 'outside the window' }),
      logRow({ tenant: 'globex', ns: ns(1500), logId: 'G1', body: 'Payment ERROR: globex secret' }),
    ]);
  });
  after(async () => {
    await h.close();
  });

  it('returns records newest first in the documented shape', async () => {
    const reply = await q({});
    expect(ids(reply)).to.deep.equal(['L7', 'L6', 'L5', 'L4', 'L3', 'L2', 'L1']);
    expect(field(reply.body, 'data', 6)).to.deep.equal({
      timestamp: (T + 1) * 1000,
      traceId: 'tr1',
      spanId: 'sp1',
      severity: 'ERROR',
      serviceName: 'pay',
      body: 'Payment ERROR: card declined',
      logId: 'L1',
    });
    expect(field(reply.body, 'data', 0, 'timestamp')).to.equal((T + 7) * 1000);
    expect(field(reply.body, 'nextPage')).to.equal(null);
    expect(field(reply.body, 'next_page')).to.equal(null);
  });

  it('merges resource, scope and log attributes on request (item wins)', async () => {
    const reply = await q({ logId: 'L1', includeAttributes: true });
    expect(field(reply.body, 'data', 0, 'attributes')).to.deep.equal({ 'service.name': 'pay', region: 'eu-west', lib: 'otel', user: 'alice' });
    expect(field((await q({ logId: 'L1', includeAttributes: false })).body, 'data', 0)).not.to.have.property('attributes');
  });

  it('filters body by pattern or exact text, case-insensitively', async () => {
    expect(ids(await q({ body: '%error%' }))).to.deep.equal(['L1']);
    expect(ids(await q({ body: '%ERROR%' }))).to.deep.equal(['L1']);
    expect(ids(await q({ body: 'USER LOGGED IN' }))).to.deep.equal(['L2']);
    expect(ids(await q({ body: 'user logged' }))).to.deep.equal([]);
    expect(ids(await q({ body: ['%crash', 'user%'] }))).to.deep.equal(['L6', 'L2']);
    expect(ids(await q({ body: '%under\\_score' }))).to.deep.equal(['L7']);
    expect(ids(await q({ body: '%100\\%%' }))).to.deep.equal(['L3']);
    expect(ids(await q({ body: 'disk 1_0% full' }))).to.deep.equal(['L3']);
    expect(ids(await q({ body: 'disk 1_0\\% full' }))).to.deep.equal(['L3']);
    expect(ids(await q({ body: 'disk 1\\_0\\% full' }))).to.deep.equal([]);
  });

  it('filters by trace, span and log ids (string or array)', async () => {
    expect(ids(await q({ traceId: 'tr2' }))).to.deep.equal(['L3', 'L2']);
    expect(ids(await q({ traceId: ['tr1', 'tr2'], spanId: ['sp1', 'sp3'] }))).to.deep.equal(['L3', 'L1']);
    expect(ids(await q({ logId: ['L4', 'L5', 'G1'] }))).to.deep.equal(['L5', 'L4']);
    expect(ids(await q({ traceId: 'TR2' }))).to.deep.equal([]);
    expect(ids(await q({ spanId: 'sp%' }))).to.deep.equal(['L3', 'L2', 'L1']);
  });

  it('filters severity by OTLP number ranges', async () => {
    expect(ids(await q({ severity: 'ERROR' }))).to.deep.equal(['L1']);
    expect(ids(await q({ severity: ['TRACE', 'DEBUG', 'FATAL'] }))).to.deep.equal(['L7', 'L6', 'L4']);
    expect(ids(await q({ severity: 'UNSPECIFIED' }))).to.deep.equal(['L5']);
    expect(ids(await q({ severity: ['WARN', 'INFO'] }))).to.deep.equal(['L3', 'L2']);
    expect(field((await q({ logId: 'L7' })).body, 'data', 0, 'severity')).to.equal('DEBUG');
    const bad = await q({ severity: 'LOUD' });
    expect(bad.status).to.equal(400);
    expect(field(bad.body, 'error', 'message')).to.contain('severity');
  });

  it('filters attributes over resource, scope and log attributes; every key must match', async () => {
    expect(ids(await q({ attributes: { user: 'bob' } }))).to.deep.equal(['L2']);
    expect(ids(await q({ attributes: { region: 'us' } }))).to.deep.equal(['L2']);
    // L1's merged region is its log attribute "eu-west", which outranks the resource's "eu".
    expect(ids(await q({ attributes: { region: ['eu', 'us'] } }))).to.deep.equal(['L2']);
    expect(ids(await q({ attributes: { region: 'eu' } }))).to.deep.equal([]);
    expect(ids(await q({ attributes: { region: 'eu-west', 'service.name': 'pay' } }))).to.deep.equal(['L1']);
    expect(ids(await q({ attributes: { lib: 'otel' } }))).to.deep.equal(['L1']);
    expect(ids(await q({ attributes: { region: 'eu%', user: 'alice' } }))).to.deep.equal(['L1']);
    expect(ids(await q({ attributes: { region: 'eu%', user: 'bob' } }))).to.deep.equal([]);
    expect(ids(await q({ attributes: { user: '' } }))).to.deep.equal([]);
    expect((await q({ attributes: { user: 5 } })).status).to.equal(400);
    expect((await q({ attributes: ['user'] })).status).to.equal(400);
  });

  it('reads time bounds in s, ms, µs and ns; [start, end)', async () => {
    const win = { startTime: T + 2, endTime: T + 3 };
    expect(ids(await q(win))).to.deep.equal(['L2']);
    expect(ids(await q({ startTime: (T + 2) * 1e3, endTime: (T + 3) * 1e3 }))).to.deep.equal(['L2']);
    expect(ids(await q({ startTime: (T + 2) * 1e6, endTime: (T + 3) * 1e6 }))).to.deep.equal(['L2']);
    expect(ids(await q({ startTime: (T + 2) * 1e9, endTime: (T + 3) * 1e9 }))).to.deep.equal(['L2']);
    expect(ids(await q({ startTime: T + 2.5, endTime: T + 7.0001 }))).to.deep.equal(['L6', 'L5', 'L4', 'L3']);
    expect(ids(await q({ startTime: T + 7.000123, endTime: T + 7.000124 }))).to.deep.equal(['L7']);
  });

  it('defaults endTime to now', async () => {
    expect(ids(await h.post('/v1/tenants/acme/logs', { startTime: T + 100 }))).to.deep.equal(['LATE']);
  });

  it('answers 400 to bad bounds, types and limits', async () => {
    for (const body of [
      { startTime: T + 10, endTime: T },
      { endTime: T },
      { startTime: 'yesterday' },
      { startTime: -1 },
      { startTime: T, endTime: 1e30 },
      { startTime: T, includeAttributes: 'yes' },
      { startTime: T, traceId: [] },
      { startTime: T, traceId: 7 },
      { startTime: T, pagination: { limit: 0 } },
      { startTime: T, pagination: { limit: 1001 } },
      { startTime: T, pagination: { limit: 1.5 } },
      { startTime: T, pagination: { page: 'nope' } },
      { startTime: T, pagination: { size: 3 } },
    ]) {
      const reply = await h.post('/v1/tenants/acme/logs', body);
      expect(reply.status, JSON.stringify(body)).to.equal(400);
      expect(field(reply.body, 'error', 'code')).to.equal('invalid_request');
    }
    expect((await q({ pagination: { limit: 1000 } })).status).to.equal(200);
  });

  it('pages with limit and refuses a cursor replayed with other filters', async () => {
    const first = await q({ pagination: { limit: 3 } });
    expect(ids(first)).to.deep.equal(['L7', 'L6', 'L5']);
    const page = field(first.body, 'nextPage') as string;
    expect(field(first.body, 'next_page')).to.equal(page);
    const second = await q({ pagination: { limit: 3, page } });
    expect(ids(second)).to.deep.equal(['L4', 'L3', 'L2']);
    const third = await q({ pagination: { limit: 3, page: field(second.body, 'nextPage') } });
    expect(ids(third)).to.deep.equal(['L1']);
    expect(field(third.body, 'nextPage')).to.equal(null);
    const replay = await q({ body: '%', pagination: { limit: 3, page } });
    expect(replay.status).to.equal(400);
    expect(field(replay.body, 'error', 'message')).to.contain('different query');
    const otherTenant = await h.post('/v1/tenants/globex/logs', { startTime: T, endTime: T + 60, pagination: { limit: 3, page } });
    expect(otherTenant.status).to.equal(400);
  });

  it("never shows another tenant's rows to this tenant's key", async () => {
    const reply = await q({ body: '%secret%' }, keys.readAcme);
    expect(ids(reply)).to.deep.equal([]);
    const all = await q({}, keys.readAcme);
    expect(all.text).not.to.contain('globex');
  });
});
