// npm run bench:noisy — per-tenant ingest limits in the `all` process (issue
// 13), from one run of `node src/cli.ts all` on a temporary data dir:
//   1. tenant B's 100-span requests (10 per second) alone and while tenant A
//      floods at 10× its limit (limits.ingestBytesPerSecond 1 MiB/s, burst
//      1 MiB, set through PUT /v1/tenants/A), in turns: B's p50/p99 in both
//      phases, their ratio (target p99 ≤ 2×) and B's failures (target 0);
//   2. A's accepted decoded bytes per second during its flood, against its
//      limit (the burst adds limit × burst / time);
//   3. the process's CPU per request refused with 429 (a key bound to A, its
//      bucket deep in debt: refused before the body is read) against CPU per
//      accepted request of the same size (tenant C, under its limit; CPU
//      counted until the process is idle again, ClickHouse's INSERTs
//      included), as a ratio (target < 5 %).
//   4. a compressible flood at its limit (issue 35): tenant D, under the
//      default limits (8 MiB/s, burst 32 MiB), sends 16.6 MB bodies of
//      identical spans (~60 KB gzipped) from 3 clients paced at its rate,
//      while tenant B sends its trickle and runs a light query in a closed
//      loop, in turns alone / beside D: B's ingest and query p50/p99 in
//      both, and their ratios (targets: ingest p99 <= 1.5x, query p99 <= 2x).
// Bounded: about 2.5 minutes. Not a test: it prints figures (README "Per-tenant limits").
//   BENCH_SECONDS=5 BENCH_LIMIT_BYTES=1048576 npm run bench:noisy   (seconds per phase turn, 3 turns of each; A's limit and burst)
//   BENCH_ONLY=compressible BENCH_FLOOD_BYTES=16600000 npm run bench:noisy   (phase 4 alone; D's body size)
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';
import { startTenantry, testEnvironment } from '../support/tenantry-process.ts';
import type { FloodJob, FloodReport } from '../support/flood-worker.ts';
import { cpuSeconds, waitIdle } from './peers/process-cpu.ts';
import { tracesRequest } from './ingest-payloads.ts';

const turnSeconds = Number(process.env['BENCH_SECONDS'] ?? 5);
const turns = 3;
/** A's limits.ingestBytesPerSecond and ingestBurstBytes (BENCH_LIMIT_BYTES). */
const limit = Number(process.env['BENCH_LIMIT_BYTES'] ?? 1024 * 1024);
const burst = limit;
const keys = {
  admin: 'bench-noisy-admin-0123456789',
  a: 'bench-noisy-a-0123456789',
  b: 'bench-noisy-b-0123456789',
  c: 'bench-noisy-c-0123456789',
  d: 'bench-noisy-d-0123456789',
  bRead: 'bench-noisy-b-read-0123456789',
};
/** D's body size in phase 4 (BENCH_FLOOD_BYTES): issue 35's 16.6 MB by default. */
const floodBytes = Number(process.env['BENCH_FLOOD_BYTES'] ?? 16_600_000);
/** The default per-tenant rate D is paced at (src/config/variables.ts). */
const defaultRate = 8 * 1024 * 1024;

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const round1 = (x: number): number => Math.round(x * 10) / 10;

function send(
  url: string,
  key: string,
  body: Buffer,
  headers: Record<string, string> = { 'content-type': 'application/x-protobuf' },
): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status: number): void => {
      resolve({ status, ms: performance.now() - started });
    };
    const req = request(
      url,
      { method: 'POST', agent, headers: { ...headers, authorization: `Bearer ${key}`, 'content-length': String(body.length) } },
      (res) => {
        res.resume();
        res.on('end', () => {
          done(res.statusCode ?? 0);
        });
        res.on('error', () => {
          done(0);
        });
      },
    );
    req.on('error', () => {
      done(0);
    });
    req.end(body);
  });
}

/** Requests that waited more than 10 ms to enter the write-ahead log (the writer's admission pacing), from /metrics. */
async function admissionWaits(metricsUrl: string): Promise<{ total: number; over10ms: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const value = (prefix: string): number =>
    text
      .split('\n')
      .filter((l) => l.startsWith(prefix))
      .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
  const total = value('tenantry_gateway_admission_wait_seconds_count');
  return { total, over10ms: total - value('tenantry_gateway_admission_wait_seconds_bucket{le="0.01"') };
}

const quantile = (values: readonly number[], q: number): number => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
};

/** B: one 100-span request every 100 ms for `seconds`. */
async function trickle(url: string, body: Buffer, seconds: number): Promise<{ status: number; ms: number }[]> {
  const out: { status: number; ms: number }[] = [];
  const start = performance.now();
  for (let i = 0; i < seconds * 10; i++) {
    const wait = start + i * 100 - performance.now();
    if (wait > 0) await sleep(wait);
    out.push(await send(url, keys.b, body));
  }
  return out;
}

/** A's flood at 10× its limit from a worker thread, until stopped. */
function flood(url: string, body: Buffer): { stop: () => Promise<FloodReport> } {
  const clients = 8;
  const job: FloodJob = { url, key: keys.a, body, clients, intervalMs: (body.length * clients * 1000) / (10 * limit) };
  const worker = new Worker(new URL('../support/flood-worker.ts', import.meta.url), { workerData: job });
  const report = new Promise<FloodReport>((resolve, reject) => {
    worker.once('message', resolve);
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

/** CPU seconds of `pid` per request for `count` requests of `key` sent by 8 clients, counted until the process is idle again, less its idle rate. */
async function cpuPerRequest(
  pid: number,
  url: string,
  key: string,
  body: Buffer,
  count: number,
  idleRate: number,
): Promise<{ cpuMs: number; statuses: Record<number, number> }> {
  await waitIdle([pid], { threshold: 0.05, quietSeconds: 1, maxMs: 20_000 });
  const before = cpuSeconds(pid);
  const started = performance.now();
  const statuses: Record<number, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < count) {
        next++;
        const r = await send(url, key, body);
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      }
    }),
  );
  await waitIdle([pid], { threshold: 0.05, quietSeconds: 1, maxMs: 20_000 });
  const seconds = (performance.now() - started) / 1000;
  return { cpuMs: (1000 * Math.max(0, cpuSeconds(pid) - before - idleRate * seconds)) / count, statuses };
}

/** About `bytes` of identical spans of `tenant`: one request repeated (protobuf concatenation appends its resourceSpans). */
function identicalSpans(tenant: string, bytes: number): Buffer {
  const one = tracesRequest(1, tenant, 1);
  return Buffer.concat(Array.from({ length: Math.floor(bytes / one.length) }, () => one));
}

/** D's compressible flood: 3 clients each sending `gz` every 3 × size / rate seconds, until stopped. */
function compressibleFlood(url: string, gz: Buffer, decodedBytes: number): { stop: () => Promise<Record<number, number>> } {
  const clients = 3;
  const intervalMs = (decodedBytes * clients * 1000) / defaultRate;
  const statuses: Record<number, number> = {};
  const state = { stopped: false };
  /** Read through a call: the flag changes while a loop awaits. */
  const stopped = (): boolean => state.stopped;
  const loops = Array.from({ length: clients }, async (_, c) => {
    const start = performance.now() + (c * intervalMs) / clients;
    for (let i = 0; !stopped(); i++) {
      // Paced in steps of at most 200 ms, so that stop() does not wait a whole interval.
      while (!stopped() && performance.now() < start + i * intervalMs) await sleep(Math.max(1, Math.min(200, start + i * intervalMs - performance.now())));
      if (stopped()) break;
      const r = await send(url, keys.d, gz, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
      statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    }
  });
  return {
    stop: async () => {
      state.stopped = true;
      await Promise.all(loops);
      return statuses;
    },
  };
}

/** B's light query (its last minute of spans, one page of 20) in a closed loop for `seconds`. */
async function queryLoop(api: string, seconds: number): Promise<{ status: number; ms: number }[]> {
  const out: { status: number; ms: number }[] = [];
  const until = performance.now() + seconds * 1000;
  while (performance.now() < until) {
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from(JSON.stringify({ startTime: now - 60, endTime: now + 60, pagination: { limit: 20 } }));
    out.push(await send(`${api}/v1/tenants/B/traces`, keys.bRead, body, { 'content-type': 'application/json' }));
  }
  return out;
}

/** Phase 4: B's ingest and queries alone and beside D's compressible flood at its limit, in turns. */
async function compressiblePhase(url: string, api: string, bBody: Buffer, metricsUrl: string): Promise<void> {
  const decoded = identicalSpans('D', floodBytes);
  const gz = gzipSync(decoded);
  console.log(
    `compressible flood: tenant D at the default limits, ${decoded.length} B bodies of identical spans (${gz.length} B gzipped) from 3 clients at ${defaultRate} B/s decoded; tenant B: its trickle and a closed loop of light queries; load average at the start ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  const phase = {
    alone: { ingest: [] as { status: number; ms: number }[], query: [] as { status: number; ms: number }[] },
    during: { ingest: [] as { status: number; ms: number }[], query: [] as { status: number; ms: number }[] },
  };
  const statuses: Record<number, number> = {};
  const waits = { alone: 0, during: 0 };
  for (let turn = 0; turn < turns; turn++) {
    const w0 = await admissionWaits(metricsUrl);
    const [ai, aq] = await Promise.all([trickle(url, bBody, turnSeconds), queryLoop(api, turnSeconds)]);
    const w1 = await admissionWaits(metricsUrl);
    waits.alone += w1.over10ms - w0.over10ms;
    phase.alone.ingest.push(...ai);
    phase.alone.query.push(...aq);
    const f = compressibleFlood(url, gz, decoded.length);
    const [di, dq] = await Promise.all([trickle(url, bBody, turnSeconds), queryLoop(api, turnSeconds)]);
    phase.during.ingest.push(...di);
    phase.during.query.push(...dq);
    for (const [st, n] of Object.entries(await f.stop())) statuses[Number(st)] = (statuses[Number(st)] ?? 0) + n;
    waits.during += (await admissionWaits(metricsUrl)).over10ms - w1.over10ms;
    await sleep(4000); // D's bucket refills (32 MiB at 8 MiB/s) between turns
  }
  const p = (xs: { ms: number }[], q: number): number =>
    round1(
      quantile(
        xs.map((r) => r.ms),
        q,
      ),
    );
  const fails = (xs: { status: number }[]): number => xs.filter((r) => r.status !== 200).length;
  for (const [name, xs] of [
    ['B ingest alone', phase.alone.ingest],
    ['B ingest beside D', phase.during.ingest],
    ['B query alone', phase.alone.query],
    ['B query beside D', phase.during.query],
  ] as const) {
    console.log(`${name}: p50 ${p(xs, 0.5)} ms  p99 ${p(xs, 0.99)} ms  failures ${fails(xs)} of ${xs.length}`);
  }
  // A p99 of 150 requests is the second slowest: the slowest few show how far apart they are.
  const slowest = (xs: { ms: number }[]): string =>
    xs
      .map((r) => r.ms)
      .sort((a, b) => b - a)
      .slice(0, 4)
      .map((ms) => ms.toFixed(0))
      .join(', ');
  console.log(`B ingest's slowest: alone ${slowest(phase.alone.ingest)} ms; beside D ${slowest(phase.during.ingest)} ms`);
  const ratio = (during: { ms: number }[], alone: { ms: number }[], q: number): string =>
    (
      quantile(
        during.map((r) => r.ms),
        q,
      ) /
      quantile(
        alone.map((r) => r.ms),
        q,
      )
    ).toFixed(2);
  console.log(
    `B ingest p99 beside D / alone: ${ratio(phase.during.ingest, phase.alone.ingest, 0.99)} (target <= 1.5); p50 ${ratio(phase.during.ingest, phase.alone.ingest, 0.5)}`,
  );
  console.log(
    `B query p99 beside D / alone: ${ratio(phase.during.query, phase.alone.query, 0.99)} (target <= 2); p50 ${ratio(phase.during.query, phase.alone.query, 0.5)}`,
  );
  console.log(`requests waiting > 10 ms to enter the write-ahead log (all tenants): alone ${waits.alone}, beside D ${waits.during}`);
  console.log(
    `D's answers: ${JSON.stringify(statuses)}; load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tenantry-bench-noisy-'));
  const tenantry = startTenantry(
    ['all'],
    testEnvironment(dataDir, {
      TENANTRY_API_KEYS: JSON.stringify([
        { key: keys.admin, scopes: ['ingest', 'read', 'admin'], tenants: ['*'] },
        { key: keys.a, scopes: ['ingest'], tenants: ['A'] },
        { key: keys.b, scopes: ['ingest'], tenants: ['B'] },
        { key: keys.c, scopes: ['ingest'], tenants: ['C'] },
        { key: keys.d, scopes: ['ingest'], tenants: ['D'] },
        { key: keys.bRead, scopes: ['read'], tenants: ['B'] },
      ]),
    }),
  );
  try {
    const ports = await tenantry.started(60_000);
    const pid = tenantry.child.pid ?? 0;
    const url = `http://127.0.0.1:${ports['otlpHttp'] ?? 0}/v1/traces`;
    const api = `http://127.0.0.1:${ports['api'] ?? 0}`;
    const put = (limits: Record<string, number>): Promise<Response> =>
      fetch(`${api}/v1/tenants/A`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ limits }),
      });
    const set = await put({ ingestBytesPerSecond: limit, ingestBurstBytes: burst });
    if (set.status !== 200) throw new Error(`PUT /v1/tenants/A answered ${set.status}: ${await set.text()}`);

    const bBody = tracesRequest(100, 'B', 1);
    const aBody = tracesRequest(200, 'A', 2);
    console.log(
      `tenant A: limit ${limit} B/s, burst ${burst} B, flood at 10x from 8 clients of ${aBody.length} B requests; tenant B: 100-span requests (${bBody.length} B) every 100 ms`,
    );
    await trickle(url, bBody, 2); // warm-up
    if (process.env['BENCH_ONLY'] === 'compressible') {
      await compressiblePhase(url, api, bBody, `http://127.0.0.1:${ports['otlpHttp'] ?? 0}/metrics`);
      return;
    }
    const alone: { status: number; ms: number }[] = [];
    const during: { status: number; ms: number }[] = [];
    let acceptedBytes = 0;
    let floodSeconds = 0;
    const statuses: Record<number, number> = {};
    const metricsUrl = `http://127.0.0.1:${ports['otlpHttp'] ?? 0}/metrics`;
    const waits = { alone: { total: 0, over10ms: 0 }, during: { total: 0, over10ms: 0 } };
    const addWaits = (into: { total: number; over10ms: number }, from: { total: number; over10ms: number }, to: { total: number; over10ms: number }): void => {
      into.total += to.total - from.total;
      into.over10ms += to.over10ms - from.over10ms;
    };
    for (let turn = 0; turn < turns; turn++) {
      const w0 = await admissionWaits(metricsUrl);
      alone.push(...(await trickle(url, bBody, turnSeconds)));
      const w1 = await admissionWaits(metricsUrl);
      const f = flood(url, aBody);
      during.push(...(await trickle(url, bBody, turnSeconds)));
      const r = await f.stop();
      addWaits(waits.alone, w0, w1);
      addWaits(waits.during, w1, await admissionWaits(metricsUrl));
      acceptedBytes += r.acceptedBytes;
      floodSeconds += r.seconds;
      for (const [s, n] of Object.entries(r.statuses)) statuses[Number(s)] = (statuses[Number(s)] ?? 0) + n;
      await sleep(1500); // A's bucket refills between turns, as the burst term assumes
    }
    const failures = (phase: { status: number }[]): number => phase.filter((r) => r.status !== 200).length;
    const p = (phase: { ms: number }[], q: number): number =>
      round1(
        quantile(
          phase.map((r) => r.ms),
          q,
        ),
      );
    console.log(`B alone:        p50 ${p(alone, 0.5)} ms  p99 ${p(alone, 0.99)} ms  failures ${failures(alone)} of ${alone.length}`);
    console.log(`B during flood: p50 ${p(during, 0.5)} ms  p99 ${p(during, 0.99)} ms  failures ${failures(during)} of ${during.length}`);
    console.log(
      `B p99 ratio (during / alone): ${(
        quantile(
          during.map((r) => r.ms),
          0.99,
        ) /
        quantile(
          alone.map((r) => r.ms),
          0.99,
        )
      ).toFixed(2)}  (target <= 2)`,
    );
    console.log(
      `requests waiting > 10 ms to enter the write-ahead log (writer admission pacing): alone ${waits.alone.over10ms} of ${waits.alone.total}, during the flood ${waits.during.over10ms} of ${waits.during.total}`,
    );
    const acceptedRate = acceptedBytes / floodSeconds;
    const expectedRate = limit + (turns * burst) / floodSeconds;
    console.log(
      `A accepted ${Math.round(acceptedRate)} B/s over ${floodSeconds.toFixed(1)} s: ${(acceptedRate / limit).toFixed(3)}x its limit; limit + burst per turn predicts ${(expectedRate / limit).toFixed(3)}x (${(acceptedRate / expectedRate).toFixed(3)} of it); answers ${JSON.stringify(statuses)}`,
    );

    // CPU: the process's idle rate, then refused requests (A deep in debt) and accepted ones (C) of the same size.
    await waitIdle([pid], { threshold: 0.05, quietSeconds: 1, maxMs: 20_000 });
    const idleFrom = cpuSeconds(pid);
    await sleep(3000);
    const idleRate = (cpuSeconds(pid) - idleFrom) / 3;
    await put({ ingestBytesPerSecond: 1024, ingestBurstBytes: 1024 });
    await send(url, keys.a, aBody); // admitted once, then about 100 s of debt at 1 KiB/s
    const refused = await cpuPerRequest(pid, url, keys.a, aBody, 3000, idleRate);
    const accepted = await cpuPerRequest(pid, url, keys.c, tracesRequest(200, 'C', 2), 300, idleRate);
    await compressiblePhase(url, api, bBody, metricsUrl);
    console.log(
      `CPU per refused request ${refused.cpuMs.toFixed(3)} ms ${JSON.stringify(refused.statuses)}, per accepted request ${accepted.cpuMs.toFixed(3)} ms ${JSON.stringify(accepted.statuses)}: ratio ${((100 * refused.cpuMs) / accepted.cpuMs).toFixed(1)} % (target < 5 %; idle ${(idleRate * 1000).toFixed(0)} ms/s subtracted)`,
    );
  } finally {
    await tenantry.stop();
    agent.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
