// Issue 12, "queries stall ingest": in the real `all` process on embedded
// ClickHouse, tenant B's ingest keeps being acknowledged, without 429, and
// its rows become queryable, while tenant A's read key runs wide queries in
// eight loops at the same time.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';
import { tracesJson, tracesProtobuf } from '../gateway/support/payloads.ts';
import { preloadSpans } from './support/preload-spans.ts';

const keys = {
  readA: 'isolation-read-a-0123456789',
  ingestB: 'isolation-ingest-b-0123456789',
  readB: 'isolation-read-b-0123456789',
};

/** One OTLP/protobuf request of 1,000 spans named `<prefix> <i>`. */
function thousandSpans(tenant: string, prefix: string): Buffer {
  return tracesProtobuf(
    tracesJson(
      { 'tenant.id': tenant, 'service.name': 'checkout' },
      Array.from({ length: 1000 }, (_, i) => ({
        name: `${prefix} ${i % 50}`,
        attrs: { 'http.method': i % 2 === 0 ? 'GET' : 'POST', 'url.path': `/cart/${i}` },
      })),
    ),
  );
}

async function exportSpans(otlpPort: number, key: string, body: Buffer): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${otlpPort}/v1/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-protobuf' },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

function searchSpans(apiPort: number, key: string, tenant: string, query: Record<string, unknown>): Promise<Response> {
  const now = Math.floor(Date.now() / 1000);
  return fetch(`http://127.0.0.1:${apiPort}/v1/tenants/${tenant}/traces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ startTime: now - 86_400, endTime: now + 3600, ...query }),
  });
}

describe('the all process: queries do not starve ingest', function () {
  this.timeout(180_000);
  let dataDir: string;
  let running: TenantryProcess | undefined;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tenantry-query-isolation-'));
  });
  after(async () => {
    await running?.stop('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  });

  it("acknowledges every request of tenant B (no 429) and stores it while tenant A's read key runs wide queries in 8 loops", async () => {
    // Rows for A's queries to scan: enough that one wide query takes about a second.
    await preloadSpans(dataDir, 'alpha', 2_000_000);
    running = startTenantry(
      ['all'],
      testEnvironment(dataDir, {
        // B sends as fast as four clients can: above the default per-tenant rate (8 MiB/s), which is not what this test is about.
        TENANTRY_TENANT_INGEST_BYTES_PER_SECOND: String(256 * 1_048_576),
        TENANTRY_TENANT_INGEST_BURST_BYTES: String(1024 * 1_048_576),
        TENANTRY_API_KEYS: JSON.stringify([
          { key: keys.readA, scopes: ['read'], tenants: ['alpha'] },
          { key: keys.ingestB, scopes: ['ingest'], tenants: ['beta'] },
          { key: keys.readB, scopes: ['read'], tenants: ['beta'] },
        ]),
      }),
    );
    const ports = await running.started();
    const otlp = ports['otlpHttp'] ?? 0;
    const api = ports['api'] ?? 0;

    // Eight loops of wide queries by A's read key: a day, attributes, patterns no index can skip that match nothing, a full page.
    let querying = true;
    const answered: number[] = [];
    let firstAnswers: () => void = () => undefined;
    const eightAnswered = new Promise<void>((resolve) => {
      firstAnswers = resolve;
    });
    const loops = Array.from({ length: 8 }, async (_, loop) => {
      while (querying) {
        const res = await searchSpans(api, keys.readA, 'alpha', {
          includeAttributes: true,
          spanName: [`%checkout ${loop}%`],
          attributes: { 'url.path': ['%/99999%', '%/88888%'] },
          pagination: { limit: 1000 },
        });
        await res.arrayBuffer();
        answered.push(res.status);
        if (answered.length >= 8) firstAnswers();
      }
    });
    await eightAnswered;

    // B ingests meanwhile as fast as four clients can, for 15 s (the writer refuses a request after holding it 5 s).
    const statuses: number[] = [];
    const bodies = Array.from({ length: 4 }, (_, client) => thousandSpans('beta', `beta ${client}`));
    const until = Date.now() + 15_000;
    await Promise.all(
      bodies.map(async (body) => {
        while (Date.now() < until) statuses.push(await exportSpans(otlp, keys.ingestB, body));
      }),
    );
    const last = thousandSpans('beta', 'beta last');
    statuses.push(await exportSpans(otlp, keys.ingestB, last));
    querying = false;
    await Promise.all(loops);

    expect(
      statuses.filter((s) => s !== 200),
      "B's requests not acknowledged",
    ).to.deep.equal([]);
    expect(
      answered.filter((s) => ![200, 429, 503].includes(s)),
      'A\'s queries: only answers, limits or "busy"',
    ).to.deep.equal([]);
    expect(answered.filter((s) => s === 200).length, "A's queries are answered too").to.be.greaterThan(0);

    // B's last request is queryable by B's read key (within a few INSERTs).
    for (const deadline = Date.now() + 30_000; ;) {
      const res = await searchSpans(api, keys.readB, 'beta', { spanName: 'beta last %', pagination: { limit: 1000 } });
      const page = (await res.json()) as { data?: unknown[] };
      if (page.data?.length === 1000) break;
      if (Date.now() > deadline) throw new Error(`B's last rows not queryable within 30 s: ${JSON.stringify(page).slice(0, 300)}`);
      await new Promise((r) => setTimeout(r, 200)); // the rows' INSERT has no event the test can see; poll, bounded
    }
    expect(await running.stop('SIGTERM')).to.equal(0);
    running = undefined;
  });
});
