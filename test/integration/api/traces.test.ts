// POST /v1/tenants/:tenant_id/traces: every filter, records, pages.
import { expect } from 'chai';
import { field, keys, startHarness } from './support/api-harness.ts';
import type { Harness, Reply } from './support/api-harness.ts';
import { insertRows, secondsNs, spanRow } from './support/telemetry-rows.ts';

const T = 1_795_000_000;
const at = (s: number): bigint => secondsNs(T + s);

const ids = (reply: Reply): string[] => {
  expect(reply.status, reply.text).to.equal(200);
  return (field(reply.body, 'data') as { spanId: string }[]).map((r) => r.spanId);
};

describe('api/traces', () => {
  let h: Harness;
  const q = (body: Record<string, unknown>, key?: string): Promise<Reply> => h.post('/v1/tenants/acme/traces', { startTime: T, endTime: T + 60, ...body }, key);

  before(async () => {
    h = await startHarness('traces');
    await insertRows(h.store, 'spans', [
      spanRow({
        tenant: 'acme',
        ns: at(1),
        traceId: 'T1',
        spanId: 'root',
        name: 'GET /checkout',
        kind: 'SERVER',
        service: 'web',
        durationNs: 5_000_000,
        status: 'OK',
        resource: { 'service.name': 'web', region: 'eu' },
        attrs: { 'http.method': 'GET' },
      }),
      spanRow({
        tenant: 'acme',
        ns: at(2),
        traceId: 'T1',
        spanId: 'child1',
        parent: 'root',
        name: 'SELECT cart',
        kind: 'CLIENT',
        service: 'web',
        durationNs: 1_000_000,
        status: 'ERROR',
        message: 'timeout',
        scope: { lib: 'pg' },
      }),
      spanRow({ tenant: 'acme', ns: at(3), traceId: 'T1', spanId: 'child2', parent: 'root', name: 'publish', kind: 'PRODUCER', durationNs: 2_000_000 }),
      spanRow({
        tenant: 'acme',
        ns: at(4),
        traceId: 'T2',
        spanId: 'other',
        name: 'consume',
        kind: 'CONSUMER',
        durationNs: 3_000_000,
        attrs: { 'http.method': 'POST' },
      }),
      spanRow({ tenant: 'acme', ns: at(5), traceId: 'T2', spanId: 'inner', parent: 'other', name: 'work', kind: 'UNSPECIFIED', durationNs: 3_000_001 }),
      spanRow({ tenant: 'globex', ns: at(1), traceId: 'T1', spanId: 'globex-root', name: 'GET /checkout' }),
    ]);
  });
  after(async () => {
    await h.close();
  });

  it('returns spans newest first in the documented shape', async () => {
    const reply = await q({});
    expect(ids(reply)).to.deep.equal(['inner', 'other', 'child2', 'child1', 'root']);
    expect(field(reply.body, 'data', 4)).to.deep.equal({
      timestamp: (T + 1) * 1000,
      traceId: 'T1',
      spanId: 'root',
      parentSpanId: '',
      spanName: 'GET /checkout',
      spanKind: 'SERVER',
      serviceName: 'web',
      duration: 5_000_000,
      statusCode: 'OK',
      statusMessage: null,
    });
    expect(field(reply.body, 'data', 3, 'statusMessage')).to.equal('timeout');
    expect(field(reply.body, 'data', 0, 'spanKind')).to.equal('INTERNAL');
  });

  it('returns attributes on request', async () => {
    const reply = await q({ spanId: 'root', includeAttributes: true });
    expect(field(reply.body, 'data', 0, 'attributes')).to.deep.equal({ 'service.name': 'web', region: 'eu', 'http.method': 'GET' });
  });

  it('filters ids, parents ("" for roots), names, kinds and status', async () => {
    expect(ids(await q({ traceId: 'T2' }))).to.deep.equal(['inner', 'other']);
    expect(ids(await q({ spanId: ['root', 'inner'] }))).to.deep.equal(['inner', 'root']);
    expect(ids(await q({ parentSpanId: '' }))).to.deep.equal(['other', 'root']);
    expect(ids(await q({ parentSpanId: 'root' }))).to.deep.equal(['child2', 'child1']);
    expect(ids(await q({ spanName: '%checkout%' }))).to.deep.equal(['root']);
    expect(ids(await q({ spanName: '%CHECKOUT%' }))).to.deep.equal([]);
    expect(ids(await q({ spanName: ['publish', 'consume'] }))).to.deep.equal(['other', 'child2']);
    expect(ids(await q({ spanKind: 'CLIENT' }))).to.deep.equal(['child1']);
    expect(ids(await q({ spanKind: ['INTERNAL', 'SERVER'] }))).to.deep.equal(['inner', 'root']);
    expect(ids(await q({ statusCode: 'ERROR' }))).to.deep.equal(['child1']);
    expect(ids(await q({ statusCode: ['OK', 'ERROR'] }))).to.deep.equal(['child1', 'root']);
    expect(ids(await q({ statusCode: 'UNSET', traceId: 'T1' }))).to.deep.equal(['child2']);
    expect((await q({ spanKind: 'SIDEWAYS' })).status).to.equal(400);
    expect((await q({ statusCode: 'FINE' })).status).to.equal(400);
  });

  it('bounds durations inclusively', async () => {
    expect(ids(await q({ durationMin: 3_000_000 }))).to.deep.equal(['inner', 'other', 'root']);
    expect(ids(await q({ durationMax: 2_000_000 }))).to.deep.equal(['child2', 'child1']);
    expect(ids(await q({ durationMin: 2_000_000, durationMax: 3_000_000 }))).to.deep.equal(['other', 'child2']);
    expect(ids(await q({ durationMin: 3_000_001, durationMax: 3_000_001 }))).to.deep.equal(['inner']);
    expect((await q({ durationMin: 5, durationMax: 4 })).status).to.equal(400);
    expect((await q({ durationMin: -1 })).status).to.equal(400);
  });

  it('filters attributes over resource, scope and span attributes', async () => {
    expect(ids(await q({ attributes: { 'http.method': 'GET' } }))).to.deep.equal(['root']);
    expect(ids(await q({ attributes: { 'http.method': ['GET', 'POST'] } }))).to.deep.equal(['other', 'root']);
    expect(ids(await q({ attributes: { region: 'eu', 'http.method': 'GET' } }))).to.deep.equal(['root']);
    expect(ids(await q({ attributes: { lib: 'pg' } }))).to.deep.equal(['child1']);
  });

  it('pages with limit, stops with null, and refuses foreign cursors', async () => {
    const first = await q({ pagination: { limit: 2 } });
    expect(ids(first)).to.deep.equal(['inner', 'other']);
    const second = await q({ pagination: { limit: 2, page: field(first.body, 'nextPage') } });
    expect(ids(second)).to.deep.equal(['child2', 'child1']);
    const third = await q({ pagination: { limit: 2, page: field(second.body, 'next_page') } });
    expect(ids(third)).to.deep.equal(['root']);
    expect(field(third.body, 'nextPage')).to.equal(null);
    expect((await q({ traceId: 'T1', pagination: { limit: 2, page: field(first.body, 'nextPage') } })).status).to.equal(400);
    expect((await q({ pagination: { limit: 1001 } })).status).to.equal(400);
  });

  it('keeps other tenants out', async () => {
    const reply = await q({ traceId: 'T1' }, keys.readAcme);
    expect(ids(reply)).to.deep.equal(['child2', 'child1', 'root']);
    expect(reply.text).not.to.contain('globex');
  });
});
