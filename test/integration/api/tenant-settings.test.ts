// Per-tenant settings through the real API on embedded ClickHouse: every
// source and the precedence, codecs and bounds, who may read and write,
// retention hiding on every query route, and the query limits.
import { expect } from 'chai';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import { createStoreGate } from '../../../src/clickhouse/store-gate.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { storeGatePolicy } from '../../../src/target/store-gate-policy.ts';
import { builtInDefaults } from '../../../src/tenant/settings/tenant-settings.ts';
import { startApiWith } from '../../../api/api.ts';
import { createQueryRunner } from '../../../api/query/query-runner.ts';
import type { QueryTarget } from '../../../api/query/query-runner.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { testProcessContext } from '../../support/process-context.ts';
import { field, keys, startHarness } from './support/api-harness.ts';
import type { Harness } from './support/api-harness.ts';
import { trappingTarget } from './support/store-faults.ts';
import { insertRows, logRow, metricRow, spanRow } from './support/telemetry-rows.ts';
import { apiConfig } from '../../../support/default-config.ts';

const dayNs = 86_400n * 1_000_000_000n;
const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;
const nowS = (): number => Math.floor(Date.now() / 1000);

describe('api/tenant settings', function () {
  this.timeout(60_000);
  let h: Harness;
  before(async () => {
    h = await startHarness('tenant_settings');
  });
  after(async () => {
    await h.close();
  });

  const put = (id: string, body: unknown, options: { key?: string; query?: string } = {}): ReturnType<Harness['call']> =>
    h.call('PUT', `/v1/tenants/${id}${options.query ?? ''}`, { body, ...(options.key === undefined ? {} : { key: options.key }) });
  const limitOf = async (id: string, name: string): Promise<[unknown, unknown]> => {
    const reply = await h.call('GET', `/v1/tenants/${id}`);
    expect(reply.status, reply.text).to.equal(200);
    return [field(reply.body, 'limits', name), field(reply.body, 'sources', 'limits', name)];
  };

  it('shows the process defaults, from source "default", for a tenant nobody configured', async () => {
    await put('plain', { name: 'Plain' });
    const reply = await h.call('GET', '/v1/tenants/plain');
    expect(reply.body).to.deep.equal({
      id: 'plain',
      name: 'Plain',
      limits: builtInDefaults.limits,
      retention: builtInDefaults.retention,
      sources: {
        limits: {
          ingestBytesPerSecond: 'default',
          ingestBurstBytes: 'default',
          maxConcurrentQueries: 'default',
          maxQueryDays: 'default',
          queryTimeoutSeconds: 'default',
        },
        retention: { logsDays: 'default', tracesDays: 'default', metricsDays: 'default' },
      },
    });
  });

  it('resolves every source in order: tenant, then api, then stack, then default; null unsets', async () => {
    expect((await h.call('PUT', '/v1/settings/tenant-defaults', { body: { limits: { maxQueryDays: 50 }, retention: { logsDays: 20 } } })).status).to.equal(200);
    expect((await h.call('GET', '/v1/settings/tenant-defaults')).body).to.deep.equal({ limits: { maxQueryDays: 50 }, retention: { logsDays: 20 } });
    expect(await limitOf('prec', 'maxQueryDays').catch(() => undefined)).to.equal(undefined, 'no record yet');
    expect((await put('prec', { limits: { maxQueryDays: 40 } })).status).to.equal(200);
    expect(await limitOf('prec', 'maxQueryDays')).to.deep.equal([40, 'api']);
    const declared = await put('prec', { limits: { maxQueryDays: 30 } }, { query: '?source=tenant' });
    expect(field(declared.body, 'limits', 'maxQueryDays')).to.equal(30);
    expect(await limitOf('prec', 'maxQueryDays')).to.deep.equal([30, 'tenant']);
    await put('prec', { limits: { maxQueryDays: 20 } });
    expect(await limitOf('prec', 'maxQueryDays'), 'the Tenant resource wins over the API').to.deep.equal([30, 'tenant']);
    await put('prec', {}, { query: '?source=tenant' });
    expect(await limitOf('prec', 'maxQueryDays'), 'the declared set replaced by an empty one').to.deep.equal([20, 'api']);
    await put('prec', { limits: { maxQueryDays: null } });
    expect(await limitOf('prec', 'maxQueryDays'), 'null unsets the API value').to.deep.equal([50, 'stack']);
    expect(field((await h.call('GET', '/v1/tenants/prec')).body, 'sources', 'retention', 'logsDays')).to.equal('stack');
    await h.call('PUT', '/v1/settings/tenant-defaults', { body: {} });
    expect((await h.call('GET', '/v1/settings/tenant-defaults')).body).to.deep.equal({ limits: {}, retention: {} });
    expect(await limitOf('prec', 'maxQueryDays')).to.deep.equal([400, 'default']);
  });

  it('keeps the name when a PUT sets only settings, and lists effective values', async () => {
    await put('named', { name: 'Named' });
    const reply = await put('named', { retention: { tracesDays: 3 } });
    expect(field(reply.body, 'name')).to.equal('Named');
    const list = await h.call('GET', '/v1/tenants?search=named');
    expect(field(list.body, 'data', 0, 'retention', 'tracesDays')).to.equal(3);
    expect(field(list.body, 'data', 0, 'sources', 'retention', 'tracesDays')).to.equal('api');
  });

  it('refuses unknown fields and values out of bounds with a 400 naming the field and the bound', async () => {
    const cases: [unknown, string[]][] = [
      [{ limits: { maxQueryDay: 3 } }, ['unknown field "limits.maxQueryDay"']],
      [{ limitz: {} }, ['unknown field "limitz"']],
      [{ retention: { logsDays: 0 } }, ['retention.logsDays', 'at least 1']],
      [{ retention: { metricsDays: 36_501 } }, ['retention.metricsDays', 'at most 36500']],
      [{ limits: { ingestBytesPerSecond: 10 * 1024 ** 3 + 1 } }, ['limits.ingestBytesPerSecond', `at most ${10 * 1024 ** 3}`]],
      [{ limits: { ingestBurstBytes: 1023 } }, ['limits.ingestBurstBytes', 'at least 1024']],
      [{ limits: { maxConcurrentQueries: 1.5 } }, ['limits.maxConcurrentQueries', 'integer from 1 to 1000']],
      [{ limits: { queryTimeoutSeconds: '30' } }, ['limits.queryTimeoutSeconds', 'integer from 1 to 3600']],
      [{ limits: [] }, ['limits must be a JSON object']],
    ];
    for (const [body, words] of cases) {
      const reply = await put('acme', body);
      expect(reply.status, JSON.stringify(body)).to.equal(400);
      for (const w of words) expect(field(reply.body, 'error', 'message'), JSON.stringify(body)).to.contain(w);
    }
    expect(
      (await put('acme', { limits: { maxConcurrentQueries: 1000, maxQueryDays: 36_500 }, retention: { logsDays: 1 } })).status,
      'the bounds themselves',
    ).to.equal(200);
    const badSource = await put('acme', {}, { query: '?source=stack' });
    expect(badSource.status).to.equal(400);
    expect((await h.call('PUT', '/v1/settings/tenant-defaults', { body: { retention: { tracesDays: -1 } } })).status).to.equal(400);
    await put('acme', { limits: { maxConcurrentQueries: null, maxQueryDays: null }, retention: { logsDays: null } });
  });

  it('lets a read key read its own tenant, never write, and hides other tenants as 404', async () => {
    const own = await h.call('GET', '/v1/tenants/acme', { key: keys.readAcme });
    expect(own.status).to.equal(200);
    expect(field(own.body, 'limits', 'maxQueryDays')).to.be.a('number');
    expect((await put('acme', { limits: { maxQueryDays: 5 } }, { key: keys.readAcme })).status).to.equal(403);
    expect((await h.call('GET', '/v1/tenants/globex', { key: keys.readAcme })).status).to.equal(404);
    expect((await put('globex', { limits: { maxQueryDays: 5 } }, { key: keys.readAcme })).status).to.equal(404);
    expect((await put('globex', { limits: { maxQueryDays: 5 } }, { key: keys.adminAcme })).status, 'admin of acme only').to.equal(404);
    expect(await limitOf('globex', 'maxQueryDays').catch(() => [undefined, undefined])).not.to.deep.equal([5, 'api']);
    expect((await h.call('GET', '/v1/settings/tenant-defaults', { key: keys.readAcme })).status).to.equal(403);
    expect((await h.call('GET', '/v1/settings/tenant-defaults', { key: keys.adminAcme })).status, 'defaults reach every tenant').to.equal(403);
    expect((await h.call('PUT', '/v1/settings/tenant-defaults', { key: keys.adminAcme, body: { limits: { maxQueryDays: 1 } } })).status).to.equal(403);
  });

  it("hides rows older than the tenant's retention on every query route, at once, and shows them again when it grows", async () => {
    const old = nowNs() - 10n * dayNs;
    const recent = nowNs() - dayNs;
    await insertRows(h.store, 'logs', [logRow({ tenant: 'ret', ns: old, logId: 'old' }), logRow({ tenant: 'ret', ns: recent, logId: 'new' })]);
    await insertRows(h.store, 'spans', [
      spanRow({ tenant: 'ret', ns: old, traceId: 'a'.repeat(32), spanId: 'old0000000000000' }),
      spanRow({ tenant: 'ret', ns: recent, traceId: 'b'.repeat(32), spanId: 'new0000000000000' }),
    ]);
    await insertRows(h.store, 'metrics', [
      metricRow({ tenant: 'ret', name: 'm', ns: old, value: 1 }),
      metricRow({ tenant: 'ret', name: 'm', ns: recent, value: 2 }),
    ]);
    await put('ret', {});
    const startTime = nowS() - 20 * 86_400;
    const seen = async (): Promise<{ logs: unknown; traces: unknown; points: unknown }> => {
      const logs = await h.post('/v1/tenants/ret/logs', { startTime });
      const traces = await h.post('/v1/tenants/ret/traces', { startTime });
      const byId = await h.post('/v1/tenants/ret/traces', { startTime: 0, traceId: 'a'.repeat(32) });
      const series = await h.post('/v1/tenants/ret/timeseries', { startTime, interval: 86_400, queries: { metrics: ['m'], operator: 'count' } });
      for (const r of [logs, traces, byId, series]) expect(r.status, r.text).to.equal(200);
      const counts = (field(series.body, 'series', 0, 'values') as number[] | undefined) ?? [];
      return {
        logs: (field(logs.body, 'data') as { logId: string }[]).map((l) => l.logId),
        traces: [
          ...(field(traces.body, 'data') as { spanId: string }[]).map((s) => s.spanId),
          ...(field(byId.body, 'data') as { spanId: string }[]).map((s) => `byId:${s.spanId}`),
        ],
        points: counts.reduce((a, b) => a + b, 0),
      };
    };
    expect(await seen()).to.deep.equal({ logs: ['new', 'old'], traces: ['new0000000000000', 'old0000000000000', 'byId:old0000000000000'], points: 2 });
    await put('ret', { retention: { logsDays: 5, tracesDays: 5, metricsDays: 5 } });
    expect(await seen()).to.deep.equal({ logs: ['new'], traces: ['new0000000000000'], points: 1 });
    await put('ret', { retention: { logsDays: null, tracesDays: null, metricsDays: null } });
    expect(await seen(), 'rows are hidden, not deleted').to.deep.equal({
      logs: ['new', 'old'],
      traces: ['new0000000000000', 'old0000000000000', 'byId:old0000000000000'],
      points: 2,
    });
  });

  it('refuses a range longer than limits.maxQueryDays with a 400 naming it, measured after the start moves up to the retention', async () => {
    await put('range', { limits: { maxQueryDays: 2 } });
    for (const route of ['logs', 'traces']) {
      const long = await h.post(`/v1/tenants/range/${route}`, { startTime: nowS() - 3 * 86_400 });
      expect(long.status, route).to.equal(400);
      expect(field(long.body, 'error', 'message')).to.contain('limits.maxQueryDays (2)');
      expect((await h.post(`/v1/tenants/range/${route}`, { startTime: nowS() - 86_400 })).status, route).to.equal(200);
    }
    const series = await h.post('/v1/tenants/range/timeseries', { startTime: nowS() - 3 * 86_400, queries: { metrics: ['m'] } });
    expect(series.status).to.equal(400);
    expect(field(series.body, 'error', 'message')).to.contain('limits.maxQueryDays');
    await put('range', { retention: { logsDays: 1 } });
    expect((await h.post('/v1/tenants/range/logs', { startTime: 0 })).status, 'startTime=0 stays valid: the range starts at the retention').to.equal(200);
    expect((await h.post('/v1/tenants/range/traces', { startTime: 0 })).status, 'traces keep 30 days, over the 2-day limit').to.equal(400);
  });
});

describe('api/tenant query limits (maxConcurrentQueries, queryTimeoutSeconds)', function () {
  this.timeout(60_000);
  const keyA = 'tenant-limits-key-a-0123456789';
  const keyB = 'tenant-limits-key-b-0123456789';
  const admin = 'tenant-limits-admin-0123456789';
  let store: Store;
  before(async () => {
    store = await migratedStore('tenant_query_limits');
  });
  after(async () => {
    await store.close();
  });

  async function start(
    target: QueryTarget,
  ): Promise<{ call: (key: string, method: string, path: string, body: unknown) => Promise<Response>; stop: () => Promise<void> }> {
    const parsed = parseKeys(
      JSON.stringify([
        { key: keyA, name: 'a', scopes: ['read'], tenants: ['held', 'free', 'slow'] },
        { key: keyB, name: 'b', scopes: ['read'], tenants: ['held', 'free', 'slow'] },
        { key: admin, name: 'admin', scopes: ['read', 'admin'], tenants: ['*'] },
      ]),
      'test',
    );
    if (!parsed.ok) throw new Error(parsed.error);
    const gate = createStoreGate(storeGatePolicy('server', { maxConcurrentQueries: 8, embeddedTimeoutMs: 10_000, memoryLimitBytes: 2 * 1024 ** 3 }, undefined));
    const proc = await testProcessContext(store, { keys: parsed.value });
    const runner = createQueryRunner(target, 20_000, silentLogger, gate);
    // The runner's gate is one of the server's, whatever the store's mode.
    const running = await startApiWith({ ...proc.ctx, storeGate: gate }, apiConfig({ queryTimeoutMs: 20_000, pageMaxBytes: 1_048_576 }), runner);
    const url = `http://127.0.0.1:${running.ports['api'] ?? 0}`;
    return {
      call: (key, method, path, body) =>
        fetch(url + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      stop: async () => {
        await running.stop();
        proc.stop();
      },
    };
  }

  it('answers 429 with Retry-After naming limits.maxConcurrentQueries when a tenant has its most queries running, whatever the key; other tenants go on', async () => {
    const trap = trappingTarget(store, /\.(logs|spans)\b/);
    const api = await start(trap.target);
    try {
      expect((await api.call(admin, 'PUT', '/v1/tenants/held', { limits: { maxConcurrentQueries: 1 } })).status).to.equal(200);
      const first = api.call(keyA, 'POST', '/v1/tenants/held/logs', { startTime: 0 });
      await trap.firstHeld;
      const second = await api.call(keyB, 'POST', '/v1/tenants/held/traces', { startTime: 0 });
      expect(second.status, 'another key, the same tenant').to.equal(429);
      expect(second.headers.get('retry-after')).to.equal('1');
      const body = (await second.json()) as { error: { code: string; message: string } };
      expect(body.error.code).to.equal('rate_limited');
      expect(body.error.message).to.contain('limits.maxConcurrentQueries').and.contain('1 queries running');
      expect(
        (await api.call(keyB, 'POST', '/v1/tenants/held/usage', { startTime: Math.floor(Date.now() / 1000) - 86_400, interval: 'day' })).status,
        'usage counts too',
      ).to.equal(429);
      expect((await api.call(keyB, 'POST', '/v1/tenants/free/logs', { startTime: 0 })).status, 'another tenant').to.equal(200);
      trap.release();
      expect((await first).status).to.equal(200);
      expect((await api.call(keyB, 'POST', '/v1/tenants/held/logs', { startTime: 0 })).status, "the tenant's place is free again").to.equal(200);
    } finally {
      trap.release();
      await api.stop();
    }
  });

  it("cancels a query in ClickHouse after the tenant's limits.queryTimeoutSeconds and answers 503", async () => {
    const trap = trappingTarget(store, /\.(logs|spans)\b/);
    const api = await start(trap.target);
    try {
      expect((await api.call(admin, 'PUT', '/v1/tenants/slow', { limits: { queryTimeoutSeconds: 1 } })).status).to.equal(200);
      const started = Date.now();
      const reply = await api.call(keyA, 'POST', '/v1/tenants/slow/logs', { startTime: 0 });
      const tookMs = Date.now() - started;
      expect(reply.status).to.equal(503);
      expect(reply.headers.get('retry-after')).to.equal('5');
      expect(tookMs, 'well before the process limit of 20 s').to.be.below(10_000);
      const body = (await reply.json()) as { error: { code: string } };
      expect(body.error.code).to.equal('unavailable');
    } finally {
      await api.stop();
    }
  });
});
