// The compatibility APIs under a tenant's query limits, each in its own
// error shape: a query over limits.maxConcurrentQueries is 429 with
// Retry-After (Prometheus: too_many_requests, as Mimir answers; Loki and
// Tempo: text),
// other tenants go on; a query past queryTimeoutSeconds is cancelled in
// ClickHouse and answered 503.
import { expect } from 'chai';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import { createStoreGate } from '../../../src/clickhouse/store-gate.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { storeGatePolicy } from '../../../src/target/store-gate-policy.ts';
import { startApiWith } from '../../../api/api.ts';
import { createQueryRunner } from '../../../api/query/query-runner.ts';
import type { QueryTarget } from '../../../api/query/query-runner.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { testProcessContext } from '../../support/process-context.ts';
import { trappingTarget } from './support/store-faults.ts';
import { apiConfig } from '../../../support/default-config.ts';

/** One API: the table its query reads, a query and a second call, and what its refusals look like. */
interface LimitedApi {
  readonly name: string;
  readonly table: string;
  readonly query: string;
  readonly other: string;
  readonly tooMany: (reply: Response) => Promise<void>;
  readonly timedOut: (reply: Response) => Promise<void>;
}

const apis: readonly LimitedApi[] = [
  {
    name: 'prometheus',
    // The engine's first statement for a tenant reads its series index.
    table: 'metric_series',
    query: '/prometheus/api/v1/query?query=up',
    // Not the series browser: it would share the held index load instead of asking for a slot of its own.
    other: '/prometheus/api/v1/metadata',
    tooMany: async (reply) => {
      const body = (await reply.json()) as Record<string, unknown>;
      expect(body).to.include({ status: 'error', errorType: 'too_many_requests' });
      expect(body['error']).to.contain('limits.maxConcurrentQueries');
    },
    timedOut: async (reply) => {
      expect(await reply.json()).to.include({ status: 'error', errorType: 'unavailable' });
    },
  },
  {
    name: 'loki',
    table: 'logs',
    query: `/loki/api/v1/query_range?${new URLSearchParams({ query: '{service_name="checkout"} |= "x"' }).toString()}`,
    other: '/loki/api/v1/labels',
    tooMany: async (reply) => {
      expect(reply.headers.get('content-type')).to.contain('text/plain');
      expect(await reply.text()).to.contain('limits.maxConcurrentQueries');
    },
    timedOut: async (reply) => {
      expect(await reply.text()).to.contain('cancelled');
    },
  },
  {
    name: 'tempo',
    table: 'spans',
    query: `/tempo/api/search?${new URLSearchParams({ q: '{ resource.service.name = "checkout" }' }).toString()}`,
    other: '/tempo/api/search/tags',
    tooMany: async (reply) => {
      expect(await reply.text()).to.contain('limits.maxConcurrentQueries');
    },
    timedOut: async (reply) => {
      expect(await reply.text()).to.contain('cancelled');
    },
  },
];

describe('api/compat query limits', function () {
  this.timeout(60_000);
  const key = 'compat-limits-key-0123456789';
  const admin = 'compat-limits-admin-0123456789';
  let store: Store;
  before(async () => {
    store = await migratedStore('compat_limits');
  });
  after(async () => {
    await store.close();
  });

  async function start(
    target: QueryTarget,
  ): Promise<{ call: (method: string, path: string, tenant: string, body?: unknown) => Promise<Response>; stop: () => Promise<void> }> {
    const parsed = parseKeys(
      JSON.stringify([
        { key, name: 'reader', scopes: ['read'], tenants: ['held', 'free', 'slow'] },
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
      call: (method, path, tenant, body) =>
        fetch(url + path, {
          method,
          headers: { authorization: `Bearer ${body === undefined ? key : admin}`, 'x-scope-orgid': tenant, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      stop: async () => {
        await running.stop();
        proc.stop();
      },
    };
  }

  for (const a of apis) {
    it(`${a.name}: answers 429 with Retry-After when the tenant has its most queries running; other tenants go on`, async () => {
      const trap = trappingTarget(store, new RegExp(`\\.${a.table}\\b`));
      const api = await start(trap.target);
      try {
        expect((await api.call('PUT', '/v1/tenants/held', 'held', { limits: { maxConcurrentQueries: 1 } })).status).to.equal(200);
        const first = api.call('GET', a.query, 'held');
        await trap.firstHeld;
        const second = await api.call('GET', a.other, 'held');
        expect(second.status).to.equal(429);
        expect(second.headers.get('retry-after')).to.equal('1');
        await a.tooMany(second);
        expect((await api.call('GET', a.query, 'free')).status, 'another tenant').to.equal(200);
        trap.release();
        expect((await first).status).to.equal(200);
      } finally {
        trap.release();
        await api.stop();
      }
    });

    it(`${a.name}: cancels a query after the tenant's limits.queryTimeoutSeconds and answers 503`, async () => {
      const trap = trappingTarget(store, new RegExp(`\\.${a.table}\\b`));
      const api = await start(trap.target);
      try {
        // The tenant record may remain from the other API's run: the PUT sets the limit either way.
        expect((await api.call('PUT', '/v1/tenants/slow', 'slow', { limits: { queryTimeoutSeconds: 1 } })).status).to.equal(200);
        const started = performance.now();
        const reply = await api.call('GET', a.query, 'slow');
        expect(reply.status).to.equal(503);
        await a.timedOut(reply);
        expect(performance.now() - started).to.be.below(10_000);
      } finally {
        trap.release();
        await api.stop();
      }
    });
  }
});
