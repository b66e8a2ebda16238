// Store failures through the real routes: a query past the time limit is
// cancelled by ClickHouse and answered 503, an unreachable store is 503, an
// unexpected failure is a 500 that reveals nothing; stop() lets an in-flight
// request finish.
import { expect } from 'chai';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { startApiWith } from '../../../api/api.ts';
import type { QueryRunner } from '../../../api/query/query-runner.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { testProcessContext } from '../../support/process-context.ts';
import { failingRunner, slowRunner } from './support/store-faults.ts';
import { apiConfig } from '../../../support/default-config.ts';

const key = 'timeout-test-key-0123456789';
const queryTimeoutMs = 1000;

describe('api/query timeout and graceful stop', () => {
  let store: Store;
  before(async () => {
    store = await migratedStore('timeout');
  });
  after(async () => {
    await store.close();
  });

  async function start(runner: QueryRunner): Promise<{ url: string; stop: () => Promise<void> }> {
    const keys = parseKeys(JSON.stringify([{ key, scopes: ['read'], tenants: ['*'] }]), 'test');
    if (!keys.ok) throw new Error(keys.error);
    const proc = await testProcessContext(store, { keys: keys.value });
    const api = await startApiWith(proc.ctx, apiConfig({ queryTimeoutMs, pageMaxBytes: 8 * 1_048_576 }), runner);
    return {
      url: `http://127.0.0.1:${api.ports['api'] ?? 0}`,
      stop: async () => {
        await api.stop();
        proc.stop();
      },
    };
  }

  const logs = (url: string): Promise<Response> =>
    fetch(`${url}/v1/tenants/acme/logs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ startTime: 1 }),
    });

  it('answers 503 with a clear message when the query runs past the limit', async () => {
    const api = await start(slowRunner(store, queryTimeoutMs).runner);
    try {
      const started = Date.now();
      const res = await logs(api.url);
      expect(Date.now() - started).to.be.within(900, 5000);
      expect(res.status).to.equal(503);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).to.equal('unavailable');
      expect(body.error.message).to.match(/longer than 1 s and was cancelled/);
    } finally {
      await api.stop();
    }
  });

  it('answers 503 when the store is unreachable', async () => {
    const api = await start(failingRunner(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:8123'), { code: 'ECONNREFUSED' }), queryTimeoutMs));
    try {
      const res = await logs(api.url);
      expect(res.status).to.equal(503);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).to.equal('unavailable');
      expect(body.error.message).not.to.contain('10.0.0.1');
    } finally {
      await api.stop();
    }
  });

  it('answers 500 without details when something unexpected fails', async () => {
    const api = await start(failingRunner(new Error('secret detail at /srv/app/store.ts:12:3'), queryTimeoutMs));
    try {
      const res = await logs(api.url);
      expect(res.status).to.equal(500);
      const text = await res.text();
      expect(text).not.to.contain('secret');
      expect(text).not.to.contain('store.ts');
      const body = JSON.parse(text) as { error: { code: string; requestId: string } };
      expect(body.error.code).to.equal('internal');
      expect(body.error.requestId).to.equal(res.headers.get('x-request-id'));
    } finally {
      await api.stop();
    }
  });

  it('finishes an in-flight request on stop and then refuses connections', async () => {
    const slow = slowRunner(store, queryTimeoutMs);
    const api = await start(slow.runner);
    const inFlight = logs(api.url);
    await slow.started;
    const stopped = api.stop();
    const res = await inFlight;
    expect(res.status).to.equal(503);
    await stopped;
    let refused = false;
    try {
      await logs(api.url);
    } catch {
      refused = true;
    }
    expect(refused).to.equal(true);
  });
});
