// Per-key query concurrency through the real API routes, runner and store
// gate on embedded ClickHouse. The store port holds one tenant's queries
// until the test lets them go, so that a key's queries stay in flight.
import { expect } from 'chai';
import type { ClickHouseClient } from '@clickhouse/client';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import { createStoreGate } from '../../../src/clickhouse/store-gate.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { decodeConfig } from '../../../src/config/config.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { storeGatePolicy } from '../../../src/target/store-gate-policy.ts';
import { startApiWith } from '../../../api/api.ts';
import { createQueryRunner } from '../../../api/query/query-runner.ts';
import type { QueryTarget } from '../../../api/query/query-runner.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { testProcessContext } from '../../support/process-context.ts';

const keyA = 'query-limits-key-a-0123456789';
const keyB = 'query-limits-key-b-0123456789';

/** The store's client, except that queries about tenant "held" wait until release(); `held` counts them, `firstHeld` resolves at the first. */
function holdingTarget(store: Store): { target: QueryTarget; held: () => number; firstHeld: Promise<void>; release: () => void } {
  const gate = Promise.withResolvers<undefined>();
  const arrived = Promise.withResolvers<undefined>();
  let held = 0;
  const query: ClickHouseClient['query'] = async (params) => {
    if (Object.values(params.query_params ?? {}).includes('held')) {
      held++;
      arrived.resolve(undefined);
      await gate.promise;
    }
    return store.client.query(params);
  };
  return {
    target: { client: { query, command: (params) => store.client.command(params) } },
    held: () => held,
    firstHeld: arrived.promise.then(() => undefined),
    release: () => {
      gate.resolve(undefined);
    },
  };
}

describe('per-key query concurrency (TENANTRY_MAX_CONCURRENT_QUERIES)', function () {
  this.timeout(30_000);
  let store: Store;
  before(async () => {
    store = await migratedStore('query_limits');
  });
  after(async () => {
    await store.close();
  });

  async function start(
    mode: Store['mode'],
    target: QueryTarget,
  ): Promise<{ query: (key: string, tenant: string) => Promise<Response>; stop: () => Promise<void> }> {
    const decoded = decodeConfig('all', { TENANTRY_MAX_CONCURRENT_QUERIES: '1', TENANTRY_QUERY_TIMEOUT_SECONDS: '20' });
    if (!decoded.ok || decoded.value.target !== 'all') throw new Error('config');
    const { api, queries, gateway } = decoded.value;
    const keys = parseKeys(
      JSON.stringify([
        { key: keyA, name: 'a', scopes: ['read'], tenants: ['held'] },
        { key: keyB, name: 'b', scopes: ['read'], tenants: ['free'] },
      ]),
      'test',
    );
    if (!keys.ok) throw new Error(keys.error);
    const gate = createStoreGate(storeGatePolicy(mode, queries, gateway.writer.maxBatchDelayMs));
    const runner = createQueryRunner(target, api.queryTimeoutMs, silentLogger, gate);
    const proc = await testProcessContext(store, { keys: keys.value });
    const running = await startApiWith({ ...proc.ctx, storeGate: gate }, { ...api, port: 0 }, runner);
    const url = `http://127.0.0.1:${running.ports['api'] ?? 0}`;
    return {
      query: (key, tenant) =>
        fetch(`${url}/v1/tenants/${tenant}/logs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ startTime: 1 }),
        }),
      stop: async () => {
        await running.stop();
        proc.stop();
      },
    };
  }

  for (const mode of ['server', 'embedded'] as const) {
    it(`${mode} mode: a key's second query waits, then gets 429 with a message naming the limit; another key's query succeeds`, async () => {
      const holding = holdingTarget(store);
      const api = await start(mode, holding.target);
      try {
        const first = api.query(keyA, 'held');
        await holding.firstHeld;
        const started = Date.now();
        const second = await api.query(keyA, 'held');
        expect(Date.now() - started, "it waited for the key's running query first").to.be.at.least(1900);
        expect(second.status).to.equal(429);
        const body = (await second.json()) as { error: { code: string; message: string } };
        expect(body.error.code).to.equal('rate_limited');
        expect(body.error.message).to.contain('TENANTRY_MAX_CONCURRENT_QUERIES').and.contain('1 queries running');
        // Server: each API replica counts per key. Embedded: B's statement takes the store's other query slot
        // (src/clickhouse/store-gate.ts). Either way B does not wait for A, and A is not stopped for B.
        const other = api.query(keyB, 'free');
        expect((await other).status).to.equal(200);
        expect(holding.held()).to.equal(1);
        holding.release();
        expect((await first).status).to.equal(200);
        expect((await api.query(keyA, 'held')).status, "the key's place is free again").to.equal(200);
      } finally {
        holding.release();
        await api.stop();
      }
    });
  }
});
