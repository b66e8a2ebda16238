// The request id an error names is findable in the server log: a store fault
// at the runner port makes a 500 (and an unreachable store a 503) on the /v1
// routes, the tenants directory and a compatibility API, and the log lines
// the process wrote are searched for the id the answer carries: the cause's
// line names it, and every 5xx has one line of its own under it.
import { expect } from 'chai';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { startApiWith } from '../../../api/api.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { testProcessContext } from '../../support/process-context.ts';
import { failingRunner } from './support/store-faults.ts';
import { apiConfig } from '../../../support/default-config.ts';

const key = 'request-id-log-key-0123456789';
const queryTimeoutMs = 1000;

/** The log lines written while `run` ran, parsed. */
interface Captured {
  readonly lines: Record<string, unknown>[];
}

describe('api request ids in the log', () => {
  let store: Store;
  before(async () => {
    store = await migratedStore('reqidlog');
  });
  after(async () => {
    await store.close();
  });

  async function withApi(error: Error, run: (url: string, captured: Captured) => Promise<void>): Promise<void> {
    const keys = parseKeys(JSON.stringify([{ key, scopes: ['read', 'admin'], tenants: ['*'] }]), 'test');
    if (!keys.ok) throw new Error(keys.error);
    const lines: Record<string, unknown>[] = [];
    const log = createLogger('debug', {}, (line) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    });
    const proc = await testProcessContext(store, { keys: keys.value, log });
    const api = await startApiWith(proc.ctx, apiConfig({ queryTimeoutMs, pageMaxBytes: 8 * 1_048_576 }), failingRunner(error, queryTimeoutMs, log));
    try {
      await run(`http://127.0.0.1:${api.ports['api'] ?? 0}`, { lines });
    } finally {
      await api.stop();
      proc.stop();
    }
  }

  const get = (url: string, path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-scope-orgid': 'acme' } });

  /** The lines that name `requestId`. */
  const about = (captured: Captured, requestId: string): Record<string, unknown>[] => captured.lines.filter((l) => l['requestId'] === requestId);

  it('logs the cause of a 500 under the id its body names, on /v1 routes and the tenants directory', async () => {
    await withApi(new Error('disk on fire'), async (url, captured) => {
      const requests: [string, RequestInit][] = [
        ['/v1/tenants/acme/logs', { method: 'POST', body: JSON.stringify({ startTime: 1 }) }],
        ['/v1/tenants', {}],
      ];
      for (const [path, init] of requests) {
        const res = await get(url, path, init);
        expect(res.status, path).to.equal(500);
        const body = (await res.json()) as { error: { requestId: string } };
        expect(body.error.requestId).to.equal(res.headers.get('x-request-id'));
        const lines = about(captured, body.error.requestId);
        expect(lines, `${path}: ${JSON.stringify(captured.lines)}`).to.have.length.greaterThan(0);
        expect(
          lines.some((l) => l['level'] === 'error' && String(l['error']).includes('disk on fire')),
          path,
        ).to.equal(true);
        expect(
          lines.some((l) => l['msg'] === 'answered a server error' && l['path'] === path.split('?')[0]),
          path,
        ).to.equal(true);
      }
    });
  });

  for (const path of [
    `/loki/api/v1/query_range?${new URLSearchParams({ query: '{service_name="checkout"}' }).toString()}`,
    '/tempo/api/search/tags',
    '/prometheus/api/v1/query?query=up',
  ]) {
    it(`logs a compatibility API's 500 under the id of its x-request-id header: ${path.slice(0, path.indexOf('/', 1))}`, async () => {
      await withApi(new Error('disk on fire'), async (url, captured) => {
        const res = await get(url, path);
        expect(res.status).to.equal(500);
        const id = res.headers.get('x-request-id') ?? '';
        expect(id).to.match(/^[0-9a-f-]{36}$/);
        const lines = about(captured, id);
        expect(
          lines.some((l) => l['msg'] === 'answered a server error' && l['status'] === 500),
          JSON.stringify(captured.lines),
        ).to.equal(true);
        // Prometheus reads its series index in a load shared by requests: its cause line cannot name one request.
        if (!path.startsWith('/prometheus/'))
          expect(
            lines.some((l) => String(l['error']).includes('disk on fire')),
            JSON.stringify(captured.lines),
          ).to.equal(true);
      });
    });
  }

  it("logs an unreachable store's 503 under its request id", async () => {
    await withApi(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:8123'), { code: 'ECONNREFUSED' }), async (url, captured) => {
      const res = await get(url, '/v1/tenants/acme/logs', { method: 'POST', body: JSON.stringify({ startTime: 1 }) });
      expect(res.status).to.equal(503);
      const body = (await res.json()) as { error: { requestId: string } };
      expect(about(captured, body.error.requestId).map((l) => l['msg'])).to.include('store unavailable');
    });
  });
});
