// Issue 33, in the real `all` process on embedded ClickHouse: a tenant's
// heavy queries (a month at 1 s, group-bys over 20,000 series) each answer
// within the tenant's time limit with 200 or a 400 naming the bound it hit;
// the process's peak RSS (VmHWM, from /proc) stays under
// TENANTRY_MEMORY_LIMIT_BYTES; another tenant's trivial query right after
// answers in under a second; and SIGTERM with a heavy query in flight exits
// well within Kubernetes' 30 s grace without losing an acknowledged span.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';
import { tracesJson, tracesProtobuf } from '../gateway/support/payloads.ts';
import { preloadGauge } from './support/preload-metrics.ts';

const memoryLimit = 1024 ** 3;
const tenantTimeoutSeconds = 10;
const keys = {
  read: 'heavy-read-key-0123456789abcdef',
  ingest: 'heavy-ingest-key-0123456789abcde',
};

/** Peak resident set of `pid` so far, in bytes (VmHWM: the kernel's own high-water mark). */
function peakRss(pid: number): number {
  const line =
    readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmHWM:')) ?? '';
  return Number(/(\d+) kB/.exec(line)?.[1] ?? 0) * 1024;
}

interface Answer {
  readonly status: number;
  readonly ms: number;
  readonly message: string;
}

async function post(api: number, tenant: string, route: string, body: unknown, key = keys.read): Promise<Answer> {
  const started = Date.now();
  const res = await fetch(`http://127.0.0.1:${api}/v1/tenants/${tenant}/${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const parsed = (await res.json()) as { error?: { message?: string } };
  return { status: res.status, ms: Date.now() - started, message: parsed.error?.message ?? '' };
}

const now = (): number => Math.floor(Date.now() / 1000);
const month = (): { startTime: number; endTime: number } => ({ startTime: now() - 30 * 86_400, endTime: now() });

/** [what, body]: each over the gauge "load" of 20,000 series. */
const heavyQueries: [string, () => unknown][] = [
  ['a month at 1 s intervals', () => ({ ...month(), interval: 1, queries: { metrics: ['load'] } })],
  ['p99 by user_id over a month at 300 s', () => ({ ...month(), interval: 300, queries: { metrics: ['load'], groupBy: ['user_id'], operator: 'p99' } })],
  ['avg by user_id over a month at 300 s', () => ({ ...month(), interval: 300, queries: { metrics: ['load'], groupBy: ['user_id'], operator: 'avg' } })],
  ['rate by user_id over a month', () => ({ ...month(), queries: { metrics: ['load'], groupBy: ['user_id'], operator: 'rate' } })],
  ['p99 of everything over a month at 60 s', () => ({ ...month(), interval: 60, queries: { metrics: ['load'], operator: 'p99' } })],
];

/** A bound a 400 may name: the statement's memory or result size, or the request's own point limit. */
const namesABound = /max_memory_usage|max_result_rows|max_result_bytes|at most \d+ are allowed/;

describe('the all process: heavy queries are bounded inside the engine', function () {
  this.timeout(300_000);
  let dataDir: string;
  let running: TenantryProcess | undefined;

  const start = (): TenantryProcess =>
    startTenantry(
      ['all'],
      testEnvironment(dataDir, {
        TENANTRY_MEMORY_LIMIT_BYTES: String(memoryLimit),
        TENANTRY_TENANT_QUERY_TIMEOUT_SECONDS: String(tenantTimeoutSeconds),
        TENANTRY_API_KEYS: JSON.stringify([
          { key: keys.read, scopes: ['read'], tenants: ['alpha', 'beta'] },
          { key: keys.ingest, scopes: ['ingest'], tenants: ['beta'] },
        ]),
      }),
    );

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tenantry-heavy-queries-'));
    await preloadGauge(dataDir, 'alpha', 'load', 20_000, 1_000_000);
  });
  after(async () => {
    await running?.stop('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it("answers each heavy query within the tenant's time limit with 200 or a 400 naming the bound; peak RSS stays under the bound; another tenant answers in under 1 s right after", async () => {
    running = start();
    const api = (await running.started(120_000))['api'] ?? 0;
    const pid = running.child.pid ?? 0;
    const answers: Record<string, string> = {};
    for (const [what, body] of heavyQueries) {
      const heavy = await post(api, 'alpha', 'timeseries', body());
      answers[what] = `${heavy.status} in ${heavy.ms} ms ${heavy.message.slice(0, 80)}`;
      expect([200, 400], `${what}: ${heavy.message}`).to.include(heavy.status);
      if (heavy.status === 400) expect(heavy.message, what).to.match(namesABound);
      expect(heavy.ms, `${what} answered within the tenant's ${tenantTimeoutSeconds} s`).to.be.below(tenantTimeoutSeconds * 1000 + 1000);
      const trivial = await post(api, 'beta', 'timeseries', { startTime: now() - 60, endTime: now(), queries: { metrics: ['none'] } });
      expect(trivial.status).to.equal(200);
      expect(trivial.ms, `beta's trivial query right after ${what}`).to.be.below(1000);
    }
    const peak = peakRss(pid);
    expect(peak, `peak RSS ${Math.round(peak / 2 ** 20)} MiB; answers: ${JSON.stringify(answers)}`).to.be.below(memoryLimit);
    expect(
      Object.values(answers).some((a) => a.startsWith('400') && /max_memory_usage|max_result/.test(a)),
      `a statement bound was hit: ${JSON.stringify(answers)}`,
    ).to.equal(true);
    expect(await running.stop('SIGTERM')).to.equal(0);
    running = undefined;
  });

  it('exits well within 30 s of SIGTERM with a heavy query in flight, and keeps every span it acknowledged', async () => {
    running = start();
    const ports = await running.started(120_000);
    const api = ports['api'] ?? 0;
    const spans = tracesProtobuf(
      tracesJson(
        { 'tenant.id': 'beta', 'service.name': 'checkout' },
        Array.from({ length: 1000 }, (_, i) => ({ name: `acknowledged ${i}` })),
      ),
    );
    const heavy = post(api, 'alpha', 'timeseries', heavyQueries[1]?.[1]()).catch((error: unknown) => ({ status: 0, ms: 0, message: String(error) }));
    const ack = await fetch(`http://127.0.0.1:${ports['otlpHttp'] ?? 0}/v1/traces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.ingest}`, 'content-type': 'application/x-protobuf' },
      body: spans,
    });
    await ack.arrayBuffer();
    expect(ack.status, 'the spans are acknowledged before the stop').to.equal(200);
    // Load, not a wait for an event: the heavy statement runs for seconds before its memory bound stops it, so 300 ms on it is under way.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const stopping = Date.now();
    const code = await running.stop('SIGTERM');
    const tookMs = Date.now() - stopping;
    expect(code).to.equal(0);
    expect(tookMs, 'exit within the grace period').to.be.below(15_000);
    expect((await heavy).status, 'the heavy query got an answer or its connection closed').to.be.oneOf([0, 200, 400, 503]);

    running = start();
    const again = (await running.started(120_000))['api'] ?? 0;
    const found = await fetch(`http://127.0.0.1:${again}/v1/tenants/beta/traces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.read}`, 'content-type': 'application/json' },
      body: JSON.stringify({ startTime: now() - 3600, endTime: now() + 3600, spanName: 'acknowledged %', pagination: { limit: 1000 } }),
    });
    expect(((await found.json()) as { data: unknown[] }).data, 'every acknowledged span is stored').to.have.length(1000);
    expect(await running.stop('SIGTERM')).to.equal(0);
    running = undefined;
  });
});
