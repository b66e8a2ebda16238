// A store that refuses writes (disk full, read-only table) while reads still
// work: PUT /v1/tenants/:id is 503 with Retry-After and a generic message,
// never the server's path or ClickHouse's text; an unclassified storage
// failure is a 500 that reveals nothing either. Tenant globex's reads keep
// succeeding meanwhile.
import { expect } from 'chai';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { startApiWith } from '../../../api/api.ts';
import { createQueryRunner } from '../../../api/query/query-runner.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { testProcessContext } from '../../support/process-context.ts';
import { insertRows, logRow, secondsNs } from './support/telemetry-rows.ts';
import { apiConfig } from '../../../support/default-config.ts';

const T = 1_795_000_000;
const adminKey = 'refusal-admin-key-0123456789';
const globexKey = 'refusal-globex-key-0123456789';
const serverPath = '/var/lib/tenantry/store/data/t_x/tenants/tmp_insert_all_1_1_0';

/** An error as chDB raises it: ClickHouse's numeric code and name, and a message naming a server path. */
const clickHouseError = (code: number, type: string): Error =>
  Object.assign(new Error(`Code: ${code}. DB::Exception: Cannot write to ${serverPath}: ${type}. (${type})`), { code: String(code), type });

describe('api/storage that refuses writes', () => {
  let store: Store;
  before(async () => {
    store = await migratedStore('refusals');
    await insertRows(store, 'logs', [logRow({ tenant: 'globex', ns: secondsNs(T), logId: 'g1', body: 'globex reads fine' })]);
  });
  after(async () => {
    await store.close();
  });

  /** The API over the real store, whose writes (commands) fail with `error`. */
  async function start(error: Error): Promise<{ url: string; stop: () => Promise<void> }> {
    const keys = parseKeys(
      JSON.stringify([
        { key: adminKey, scopes: ['read', 'admin'], tenants: ['*'] },
        { key: globexKey, scopes: ['read'], tenants: ['globex'] },
      ]),
      'test',
    );
    if (!keys.ok) throw new Error(keys.error);
    const real = createQueryRunner(store, 5000, silentLogger);
    const refusing = createQueryRunner({ client: { query: (...a) => store.client.query(...a), command: () => Promise.reject(error) } }, 5000, silentLogger);
    const proc = await testProcessContext(store, { keys: keys.value });
    const api = await startApiWith(proc.ctx, apiConfig({ queryTimeoutMs: 5000, pageMaxBytes: 1_048_576 }), {
      rows: (st) => real.rows(st),
      manyRows: (st) => real.manyRows(st),
      command: (st) => refusing.command(st),
    });
    return {
      url: `http://127.0.0.1:${api.ports['api'] ?? 0}`,
      stop: async () => {
        await api.stop();
        proc.stop();
      },
    };
  }

  const rename = (url: string): Promise<Response> =>
    fetch(`${url}/v1/tenants/acme`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Acme' }),
    });

  async function globexReads(url: string): Promise<void> {
    const res = await fetch(`${url}/v1/tenants/globex/logs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${globexKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ startTime: T - 60, endTime: T + 60 }),
    });
    expect(res.status).to.equal(200);
    expect(await res.text()).to.contain('globex reads fine');
  }

  for (const [code, type] of [
    [243, 'NOT_ENOUGH_SPACE'],
    [242, 'TABLE_IS_READ_ONLY'],
  ] as const) {
    it(`answers a write refused with ${type} as 503 with Retry-After and nothing of the server in the body`, async () => {
      const api = await start(clickHouseError(code, type));
      try {
        const res = await rename(api.url);
        expect(res.status).to.equal(503);
        expect(res.headers.get('retry-after')).to.equal('5');
        const text = await res.text();
        expect(text).not.to.contain('/var/lib');
        expect(text).not.to.contain('DB::Exception');
        expect(text).not.to.contain(type);
        expect((JSON.parse(text) as { error: { code: string } }).error.code).to.equal('unavailable');
        await globexReads(api.url);
      } finally {
        await api.stop();
      }
    });
  }

  for (const error of [
    clickHouseError(1001, 'STD_EXCEPTION'),
    Object.assign(new Error(`EROFS: read-only file system, open '${serverPath}'`), { code: 'EROFS' }),
  ]) {
    it(`answers an unclassified write failure (${(error as { code?: string }).code ?? ''}) as a 5xx without path, stack or ClickHouse text`, async () => {
      const api = await start(error);
      try {
        const res = await rename(api.url);
        expect(res.status).to.be.oneOf([500, 503]);
        const text = await res.text();
        for (const leak of ['/var/lib', 'DB::Exception', 'EROFS', 'at ', '.ts:']) expect(text).not.to.contain(leak);
        const body = JSON.parse(text) as { error: Record<string, unknown> };
        expect(Object.keys(body.error).sort()).to.deep.equal(['code', 'message', 'requestId']);
        await globexReads(api.url);
      } finally {
        await api.stop();
      }
    });
  }
});
