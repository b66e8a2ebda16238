// Noisy neighbour against the real `all` process: tenant A floods at 10× its
// ingest limit while tenant B sends a steady trickle. B is always answered
// 200 (its latency beside A is a figure of `npm run bench:noisy`, not
// asserted here: a ratio of p99s on a shared machine measures the machine's
// other load as much as A); A's accepted decoded bytes are
// its limit × time plus its burst (±10 %), and A is answered 429 with
// Retry-After, RESOURCE_EXHAUSTED with RetryInfo over gRPC, partial success
// in a request it shares with B, and 429 before its body is read when its key
// is bound to A alone. Rejected units appear in A's usage, and the per-tenant
// metrics count A's throttled requests.
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { RetryInfo, RpcStatus } from '../../../gateway/wire/otlp-messages.ts';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';
import type { FloodJob, FloodReport } from '../../../support/flood-worker.ts';
import { grpcExport, tracePath } from './support/grpc-client.ts';
import { post, protobufHeaders, tracePartialSuccess, tracesJson, tracesProtobuf } from './support/payloads.ts';

/** A's limit: 64 KiB/s of decoded OTLP, burst 64 KiB (small, so that the test's flood is cheap). */
const limit = 64 * 1024;
const burst = 64 * 1024;
const keys = { admin: 'noisy-admin-key-0123456789', a: 'noisy-a-key-0123456789', b: 'noisy-b-key-0123456789', both: 'noisy-ab-key-0123456789' };

/** A request of `spans` spans for `tenant`, about 110 decoded bytes per span. */
const spansFor = (tenant: string, spans: number, tag: string): Buffer =>
  tracesProtobuf(
    tracesJson(
      { 'tenant.id': tenant, 'service.name': 'noisy' },
      Array.from({ length: spans }, (_, i) => ({ name: `${tag}-${i}-${'x'.repeat(60)}` })),
    ),
  );

/** One request's answer time and status. */
async function timed(url: string, body: Buffer, key: string): Promise<{ ms: number; status: number }> {
  const started = performance.now();
  const reply = await post(url, body, protobufHeaders(key));
  return { ms: performance.now() - started, status: reply.status };
}

const quantile = (values: readonly number[], q: number): number => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
};

/** B's trickle: `count` requests of 5 spans, one every 50 ms (about 11 KB/s, a sixth of the limit); resolves with their timings. */
async function trickle(url: string, count: number): Promise<{ ms: number; status: number }[]> {
  const out: { ms: number; status: number }[] = [];
  const body = spansFor('B', 5, 'b');
  const start = performance.now();
  for (let i = 0; i < count; i++) {
    const due = start + i * 50;
    const wait = due - performance.now();
    // Pacing of the load itself (one request every 50 ms), not a wait for a state: no assertion follows it.
    if (wait > 0)
      await new Promise((resolve) => {
        setTimeout(resolve, wait);
      });
    out.push(await timed(url, body, keys.b));
  }
  return out;
}

interface FloodTotals {
  acceptedBytes: number;
  expectedBytes: number;
  seconds: number;
  statuses: Map<number, number>;
  retryAfters: Set<string>;
}

/** A's flood: 10× its limit offered by 4 paced clients of 16 KB requests, in a worker thread; stop() ends it and resolves with its report. */
function flood(url: string): { stop: () => Promise<FloodReport> } {
  const body = spansFor('A', 145, 'a'); // ~16 KB decoded
  const clients = 4;
  const job: FloodJob = { url, key: keys.a, body, clients, intervalMs: (body.length * clients * 1000) / (10 * limit) };
  const worker = new Worker(new URL('../../../support/flood-worker.ts', import.meta.url), { workerData: job });
  const report = new Promise<FloodReport>((resolve, reject) => {
    worker.once('message', (r: FloodReport) => {
      resolve(r);
    });
    worker.once('error', reject);
  });
  return {
    stop: async () => {
      worker.postMessage('stop');
      const r = await report;
      await worker.terminate();
      return r;
    },
  };
}

describe('gateway: noisy neighbour (all process, per-tenant ingest limits)', function () {
  this.timeout(120_000);
  let dataDir: string;
  let tenantry: TenantryProcess;
  let otlp: string;
  let api: string;
  let grpcUrl: string;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tenantry-noisy-'));
    tenantry = startTenantry(
      ['all'],
      testEnvironment(dataDir, {
        // The per-tenant series checked below name the tenants.
        TENANTRY_METRICS_TENANT_LABELS: 'on',
        TENANTRY_API_KEYS: JSON.stringify([
          { key: keys.admin, scopes: ['ingest', 'read', 'admin'], tenants: ['*'] },
          { key: keys.a, scopes: ['ingest'], tenants: ['A'] },
          { key: keys.b, scopes: ['ingest'], tenants: ['B'] },
          { key: keys.both, scopes: ['ingest'], tenants: ['A', 'B'] },
        ]),
      }),
    );
    const ports = await tenantry.started();
    otlp = `http://127.0.0.1:${ports['otlpHttp'] ?? 0}`;
    grpcUrl = `http://127.0.0.1:${ports['otlpGrpc'] ?? 0}`;
    api = `http://127.0.0.1:${ports['api'] ?? 0}`;
    // A's own limit through the API; B keeps the process default (8 MiB/s). The process's settings cache refreshes on the write.
    const put = await fetch(`${api}/v1/tenants/A`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ limits: { ingestBytesPerSecond: limit, ingestBurstBytes: burst } }),
    });
    expect(put.status, await put.text()).to.equal(200);
  });
  after(async () => {
    await tenantry.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** B alone and during A's flood in turns (5 × 2 s each), so that the machine's other load falls on both alike. */
  async function measure(url: string): Promise<{ alone: { ms: number; status: number }[]; during: { ms: number; status: number }[]; a: FloodTotals }> {
    const alone: { ms: number; status: number }[] = [];
    const during: { ms: number; status: number }[] = [];
    const a: FloodTotals = { acceptedBytes: 0, expectedBytes: 0, seconds: 0, statuses: new Map(), retryAfters: new Set() };
    for (let round = 0; round < 5; round++) {
      // 2 s alone: A's bucket (one 16 KB request in debt at most) is full again when its flood starts.
      alone.push(...(await trickle(url, 40)));
      const flooding = flood(url);
      during.push(...(await trickle(url, 40)));
      const r = await flooding.stop();
      a.acceptedBytes += r.acceptedBytes;
      a.expectedBytes += limit * r.seconds + burst;
      a.seconds += r.seconds;
      for (const [status, n] of Object.entries(r.statuses)) a.statuses.set(Number(status), (a.statuses.get(Number(status)) ?? 0) + n);
      for (const v of r.retryAfters) a.retryAfters.add(v);
    }
    return { alone, during, a };
  }

  /**
   * Drives A's bucket deep into debt: once a 300 KB request of A is accepted, A is refused for about 3.6 s at
   * 64 KiB/s (a burst of 64 KiB was all it had). While A is refused, waits the Retry-After it is given.
   */
  async function exhaustA(): Promise<void> {
    const big = spansFor('A', 2700, 'big');
    for (let i = 0; i < 10; i++) {
      const reply = await post(`${otlp}/v1/traces`, big, protobufHeaders(keys.a));
      if (reply.status === 200) return;
      expect(reply.status).to.equal(429);
      await new Promise((resolve) => {
        setTimeout(resolve, Number(reply.headers.get('retry-after')) * 1000);
      });
    }
    throw new Error('A was never accepted');
  }

  it('keeps B at 200 while A floods at 10× its limit; A gets its limit × time + burst (±10 %) and 429 + Retry-After', async () => {
    const url = `${otlp}/v1/traces`;
    await trickle(url, 20); // warm-up: connections, JIT, first parts
    const { alone, during, a } = await measure(url);

    expect(
      alone.every((r) => r.status === 200),
      'B alone always 200',
    ).to.equal(true);
    const p99 = (phase: readonly { ms: number }[]): string =>
      quantile(
        phase.map((r) => r.ms),
        0.99,
      ).toFixed(1);
    expect(
      during.every((r) => r.status === 200),
      `B during the flood always 200 (p99 alone ${p99(alone)} ms, during ${p99(during)} ms)`,
    ).to.equal(true);

    const expected = a.expectedBytes;
    expect(a.acceptedBytes, `A accepted ${a.acceptedBytes} B in ${a.seconds.toFixed(2)} s (statuses ${JSON.stringify([...a.statuses])})`).to.be.within(
      0.9 * expected,
      1.1 * expected,
    );
    expect(a.statuses.get(429) ?? 0).to.be.greaterThan(0);
    expect([...a.statuses.keys()].every((s) => s === 200 || s === 429)).to.equal(true);
    expect([...a.retryAfters].every((v) => Number(v) >= 1)).to.equal(true);
    expect(a.retryAfters.size).to.be.greaterThan(0);
  });

  it('refuses a key bound to A before its body is read: a body that never finishes gets its 429 at once', async () => {
    await exhaustA();
    const reply = await new Promise<{ status: number; retryAfter: string | undefined; ms: number }>((resolve, reject) => {
      const started = performance.now();
      const req = request(`${otlp}/v1/traces`, { method: 'POST', headers: { ...protobufHeaders(keys.a), 'content-length': '1000000' } }, (res) => {
        resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], ms: performance.now() - started });
        res.resume();
        req.destroy();
      });
      req.on('error', (error) => {
        if (!req.destroyed) reject(error);
      });
      req.write(Buffer.alloc(100)); // 100 of the 1,000,000 bytes announced; the rest never comes
    });
    expect(reply.status).to.equal(429);
    expect(Number(reply.retryAfter)).to.be.at.least(1);
    expect(reply.ms).to.be.below(1000);
  });

  it('answers RESOURCE_EXHAUSTED with RetryInfo over gRPC', async () => {
    await exhaustA();
    const reply = await grpcExport(grpcUrl, tracePath, spansFor('A', 5, 'grpc'), keys.a);
    expect(reply.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
    expect(reply.details).to.contain('ingest limit');
    const [details] = reply.trailers?.get('grpc-status-details-bin') ?? [];
    const status = RpcStatus.decode(details as Buffer);
    expect(status.details[0]?.type_url).to.equal('type.googleapis.com/google.rpc.RetryInfo');
    expect(Number(RetryInfo.decode(status.details[0]?.value ?? new Uint8Array()).retryDelay?.seconds)).to.be.at.least(1);
  });

  it("rejects A's items through partial success in a request shared with B, accepting B's; a request of A alone by a two-tenant key is answered 429", async () => {
    const mixed = {
      resourceSpans: [
        ...(tracesJson({ 'tenant.id': 'A' }, [{ name: 'a1' }, { name: 'a2' }, { name: 'a3' }]) as { resourceSpans: unknown[] }).resourceSpans,
        ...(tracesJson({ 'tenant.id': 'B' }, [{ name: 'mixed-b' }]) as { resourceSpans: unknown[] }).resourceSpans,
      ],
    };
    let partial: { rejected: number; message: string } | undefined;
    for (let attempt = 0; attempt < 5 && partial?.rejected !== 3; attempt++) {
      await exhaustA();
      const reply = await post(`${otlp}/v1/traces`, tracesProtobuf(mixed), protobufHeaders(keys.both));
      expect(reply.status).to.equal(200);
      partial = tracePartialSuccess(reply.body);
    }
    expect(partial?.rejected).to.equal(3);
    expect(partial?.message).to.contain('ingest limit');

    await exhaustA();
    const onlyA = await post(`${otlp}/v1/traces`, spansFor('A', 3, 'two-tenant-key'), protobufHeaders(keys.both));
    expect(onlyA.status).to.equal(429);
    expect(Number(onlyA.headers.get('retry-after'))).to.be.at.least(1);
  });

  it("reports A's rate-limited units in its usage, and counts throttled requests per tenant in the metrics", async () => {
    // The gateway writes rejected sums every 5 s and reports no event when it does: poll for them (bounded).
    let rejected = 0;
    for (const deadline = Date.now() + 20_000; rejected === 0 && Date.now() < deadline;) {
      const reply = await fetch(`${api}/v1/tenants/A/usage`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ startTime: Date.now() / 1000 - 3600 }),
      });
      expect(reply.status).to.equal(200);
      const body = (await reply.json()) as { rejected: { traces: { units: number; reasons: Record<string, number> } } };
      rejected = body.rejected.traces.reasons['rate_limited'] ?? 0;
      if (rejected === 0)
        await new Promise((resolve) => {
          setTimeout(resolve, 500);
        });
    }
    expect(rejected).to.be.greaterThan(0);
    const metrics = await (await fetch(`${otlp}/metrics`)).text();
    expect(metrics).to.match(/tenantry_gateway_throttled_requests_total\{tenant="A",protocol="http",signal="traces",stage="before_body"\} [1-9]/);
    expect(metrics).to.match(/tenantry_gateway_tenant_accepted_bytes_total\{tenant="B",signal="traces"\} [1-9]/);
    expect(metrics).to.match(/tenantry_gateway_tenant_rejected_items_total\{tenant="A",signal="traces",reason="rate_limited"\} [1-9]/);
  });
});
