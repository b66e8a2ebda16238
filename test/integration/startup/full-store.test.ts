// A data dir whose disk fills under a running `all` process (issue 12,
// "storage faults are honest"): writes to ClickHouse are refused with 503
// and no server path, /readyz turns false, ingest keeps being acknowledged
// into the write-ahead log (on another disk), and when the disk takes writes
// again readiness returns by itself and every acknowledged item is stored
// exactly once. Needs root, to mount a small tmpfs. (A read-only remount is
// refused while chDB holds files open for writing, so the fault injected is
// ENOSPC: a file that takes all the space left.)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const key = 'read-only-store-key-0123456789';

/** One span of `tenant` named `name`, as OTLP/JSON. */
function spanJson(tenant: string, name: string): string {
  const now = BigInt(Date.now()) * 1_000_000n;
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'tenant.id', value: { stringValue: tenant } }] },
        scopeSpans: [
          {
            spans: [
              {
                traceId: Buffer.from(name).toString('hex').padEnd(32, '0'),
                spanId: Buffer.from(name).toString('hex').padEnd(16, '0').slice(0, 16),
                name,
                kind: 1,
                startTimeUnixNano: String(now),
                endTimeUnixNano: String(now + 1000n),
              },
            ],
          },
        ],
      },
    ],
  });
}

/** Polls until `check` holds, bounded: a row becoming queryable is no event the child process reports (readiness changes are: their log lines). */
async function eventually(what: string, check: () => Promise<boolean>, limitMs = 30_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not within ${limitMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('the all process on a data dir whose disk fills', function () {
  this.timeout(120_000);
  let mountPoint: string | undefined;
  let walDir: string | undefined;
  let running: TenantryProcess | undefined;

  before(function () {
    if (process.getuid?.() !== 0) {
      console.log('      (skipped: mounting a small tmpfs for the data dir needs root)');
      this.skip();
    }
  });
  after(async () => {
    await running?.stop('SIGKILL');
    if (mountPoint !== undefined) {
      execFileSync('umount', ['-l', mountPoint]);
      rmSync(mountPoint, { recursive: true, force: true });
    }
    if (walDir !== undefined) rmSync(walDir, { recursive: true, force: true });
  });

  it('refuses writes with 503 and no path, turns unready, keeps acknowledging into the log, and recovers by itself with nothing lost or doubled', async () => {
    mountPoint = mkdtempSync(join(tmpdir(), 'tenantry-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512m', 'tmpfs', mountPoint]);
    walDir = mkdtempSync(join(tmpdir(), 'tenantry-ro-wal-'));
    running = startTenantry(
      ['all'],
      testEnvironment(join(mountPoint, 'data'), {
        TENANTRY_API_KEYS: JSON.stringify([{ key, scopes: ['ingest', 'read', 'admin'], tenants: ['*'] }]),
        TENANTRY_WAL_DIR: walDir,
      }),
    );
    const ports = await running.started();
    const otlp = `http://127.0.0.1:${String(ports['otlpHttp'])}`;
    const api = `http://127.0.0.1:${String(ports['api'])}`;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const ingest = async (name: string): Promise<number> => (await fetch(`${otlp}/v1/traces`, { method: 'POST', headers, body: spanJson('ro', name) })).status;
    /** Span names of the tenant, one entry per stored row. */
    const spans = async (): Promise<string[]> => {
      const now = Math.floor(Date.now() / 1000);
      const res = await fetch(`${api}/v1/tenants/ro/traces`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ startTime: now - 3600, endTime: now + 60, pagination: { limit: 100 } }),
      });
      if (res.status !== 200) return [];
      return ((await res.json()) as { data: { spanName: string }[] }).data.map((s) => s.spanName).sort();
    };
    const ready = async (port: string): Promise<number> => (await fetch(`${port}/readyz`)).status;

    expect(await ingest('before-1')).to.equal(200);
    await eventually('the first span is queryable', async () => (await spans()).includes('before-1'));

    const filler = join(mountPoint, 'filler');
    // dd stops with "No space left on device" once the disk is full: that is the point.
    spawnSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M'], { stdio: 'ignore' });
    const rename = await fetch(`${api}/v1/tenants/ro`, { method: 'PUT', headers, body: JSON.stringify({ name: 'Read only' }) });
    const text = await rename.text();
    expect(rename.status, text).to.equal(503);
    expect(rename.headers.get('retry-after')).to.not.equal(null);
    expect(text).to.not.contain(mountPoint);
    expect(text).to.not.contain('/');

    expect(await ingest('during-1')).to.equal(200); // the log is on another disk: acknowledged
    await running.waitForLine((l) => l['msg'] === 'writes fail; acknowledged rows stay in the write-ahead log');
    expect(await ready(otlp)).to.equal(503);
    expect(await (await fetch(`${otlp}/readyz`)).text()).to.contain('ClickHouse accepting writes');
    expect(await ingest('during-2')).to.equal(200);

    rmSync(filler);
    await running.waitForLine((l) => l['msg'] === 'writes succeed again');
    expect([await ready(otlp), await ready(api)]).to.deep.equal([200, 200]);
    await eventually('every acknowledged span is stored', async () => (await spans()).length >= 3);
    expect(await spans()).to.deep.equal(['before-1', 'during-1', 'during-2']);
    const renamed = await fetch(`${api}/v1/tenants/ro`, { method: 'PUT', headers, body: JSON.stringify({ name: 'Read only' }) });
    expect(renamed.status, await renamed.text()).to.equal(200);
  });
});
