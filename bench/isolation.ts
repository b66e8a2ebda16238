// npm run bench:isolation — fault isolation of the `all` process (issue 12),
// from one run of `node src/cli.ts all` on a temporary data dir:
//   1. ingest spans/s and acknowledgement p99, alone and then with 8 loops of
//      wide API queries (8 read keys of another tenant), twice in turn, as
//      ratios of the alone phases of the same run (targets: ≥ 0.7 of alone,
//      p99 < 500 ms);
//   2. the process's RSS growth for one request with a 1 MB resource
//      attribute and 1,000 spans (target < 256 MiB);
//   3. the time until the process closes a slowloris connection (headers,
//      or a chunked body, that never end; support/slowloris.ts);
//   4. heavy neighbour (issue 33): tenant B's query p99 and ingest p99 alone,
//      then while tenant A runs heavy timeseries queries (group-bys over
//      20,000 series, a month at fine intervals) in a loop, as ratios
//      (targets: query ≤ 2x, ingest ≤ 1.5x), and the process's peak RSS
//      against TENANTRY_MEMORY_LIMIT_BYTES (target: under it).
// Bounded: about 4-5 minutes (BENCH_PHASES=neighbour: phase 4 alone, about 3).
// Not a test: it prints figures (README "Fault isolation", docs/benchmarks.md).
//   BENCH_SECONDS=30 BENCH_PRELOAD_SPANS=2000000 BENCH_PRELOAD_POINTS=1000000 BENCH_MEMORY_LIMIT=2GiB BENCH_PHASES=all npm run bench:isolation
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../src/clickhouse/schema/migrator.ts';
import { openStore } from '../src/clickhouse/store.ts';
import { silentLogger } from '../src/log/logger.ts';
import { ExportTraceServiceRequest } from '../gateway/wire/otlp-messages.ts';
import { tracesRequest } from './ingest-payloads.ts';
import { slowlorisCloseMs } from '../support/slowloris.ts';
import { phaseMetrics, readMetrics, watchLog } from './isolation-metrics.ts';
import type { LogSummary } from './isolation-metrics.ts';
import { nodeFlags } from '../src/target/node-flags.ts';

const phaseSeconds = Number(process.env['BENCH_SECONDS'] ?? 30);
const preloadSpans = Number(process.env['BENCH_PRELOAD_SPANS'] ?? 2_000_000);
const preloadPoints = Number(process.env['BENCH_PRELOAD_POINTS'] ?? 1_000_000);
const gaugeSeries = 20_000;
const memoryLimit = process.env['BENCH_MEMORY_LIMIT'] ?? '2GiB';
/** `all`, or `neighbour` for the heavy-neighbour phase alone. */
const phases = process.env['BENCH_PHASES'] ?? 'all';
if (phases !== 'all' && phases !== 'neighbour') throw new Error(`BENCH_PHASES=${phases}: expected all or neighbour`);
const readerBKey = 'bench-isolation-read-b-0123456789';
const ingestClients = 4;
const queryLoops = 8;
const spansPerRequest = 1000;
const database = 'tenantry';
const ingestKey = 'bench-isolation-ingest-0123456789';
const readKeys = Array.from({ length: queryLoops }, (_, i) => `bench-isolation-read-${i}-0123456789`);
const day = 86_400;

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
const round2 = (x: number): number => Math.round(x * 100) / 100;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** An answer; `error`: the start of the body of a 4xx/5xx. */
interface Answer {
  readonly status: number;
  readonly ms: number;
  readonly error?: string;
}

function send(url: string, method: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status: number, error?: string): void => {
      resolve({ status, ms: performance.now() - started, ...(error === undefined ? {} : { error }) });
    };
    const req = request(url, { method, agent, timeout: 120_000, headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      const status = res.statusCode ?? 0;
      let text = '';
      if (status >= 400)
        res.setEncoding('utf8').on('data', (chunk: string) => {
          text = (text + chunk).slice(0, 400);
        });
      else res.resume();
      res.on('end', () => {
        done(status, status >= 400 ? text.slice(0, 200) : undefined);
      });
      res.on('error', () => {
        done(0);
      });
    });
    req.on('timeout', () => {
      req.destroy();
    });
    req.on('error', () => {
      done(0);
    });
    req.end(body);
  });
}

const quantile = (sorted: readonly number[], q: number): number => Math.round(sorted[Math.floor(q * (sorted.length - 1))] ?? 0);

interface IngestResult {
  spansPerSecond: number;
  p50ms: number;
  p99ms: number;
  statuses: Record<string, number>;
}

/** Closed-loop OTLP/HTTP clients for `seconds`; p50/p99 over every answer (a 429 counts with its latency). */
async function ingest(otlpUrl: string, bodies: readonly Buffer[], seconds: number): Promise<IngestResult> {
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  let acknowledged = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: ingestClients }, async (_, c) => {
      for (let i = c; performance.now() < until; i += ingestClients) {
        const answer = await send(
          `${otlpUrl}/v1/traces`,
          'POST',
          { 'content-type': 'application/x-protobuf', authorization: `Bearer ${ingestKey}` },
          bodies[i % bodies.length] ?? Buffer.alloc(0),
        );
        latencies.push(answer.ms);
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        if (answer.status === 200) acknowledged++;
        else await sleep(50);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    spansPerSecond: Math.round((acknowledged * spansPerRequest) / elapsed),
    p50ms: quantile(latencies, 0.5),
    p99ms: quantile(latencies, 0.99),
    statuses,
  };
}

/** A wide query: a week of the reader tenant's spans, with attributes, a name pattern and an attribute filter that match few rows. */
function wideQuery(i: number): Buffer {
  const now = Math.floor(Date.now() / 1000);
  return Buffer.from(
    JSON.stringify({
      startTime: now - 7 * day,
      endTime: now + 60,
      includeAttributes: true,
      spanName: [`%checkout ${i % 10}%`, '%confirm%'],
      attributes: { 'http.method': ['PUT'] },
      pagination: { limit: 1000 },
    }),
  );
}

interface QueryLoadResult {
  queries: number;
  p50ms: number;
  statuses: Record<string, number>;
}

/** `queryLoops` closed loops, one read key each, until `stop` resolves. */
async function queryLoad(apiUrl: string, stop: Promise<void>): Promise<QueryLoadResult> {
  let stopped = false;
  void stop.then(() => {
    stopped = true;
  });
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  await Promise.all(
    readKeys.map(async (key, loop) => {
      for (let i = loop; !stopped; i += queryLoops) {
        const answer = await send(
          `${apiUrl}/v1/tenants/reader/traces`,
          'POST',
          { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          wideQuery(i),
        );
        latencies.push(answer.ms);
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        if (answer.status !== 200) await sleep(100);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { queries: latencies.length, p50ms: quantile(latencies, 0.5), statuses };
}

/** One request of 1,000 minimal spans whose resource carries a 1 MB attribute. */
function hugeResourceRequest(): Buffer {
  const now = BigInt(Date.now()) * 1_000_000n;
  const spans = Array.from({ length: 1000 }, (_, i) => ({
    traceId: Buffer.alloc(16, (i % 251) + 1),
    spanId: Buffer.alloc(8, (i % 251) + 1),
    name: 's',
    kind: 1,
    startTimeUnixNano: (now - BigInt(i) * 1000n).toString(),
    endTimeUnixNano: (now - BigInt(i) * 1000n + 1000n).toString(),
  }));
  const resource = {
    attributes: [
      { key: 'tenant.id', value: { stringValue: 'writer' } },
      { key: 'blob', value: { stringValue: 'x'.repeat(1_000_000) } },
    ],
  };
  return Buffer.from(
    ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject({ resourceSpans: [{ resource, scopeSpans: [{ spans }] }] })).finish(),
  );
}

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? 0) * 1024;
}

/** Peak RSS growth of `pid` while `work` runs and for 3 s after (the rows' INSERT follows the acknowledgement). */
async function rssGrowth(pid: number, work: () => Promise<number>): Promise<{ growthMiB: number; status: number; ms: number }> {
  const before = rssBytes(pid);
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, 10);
  const started = performance.now();
  const status = await work();
  const ms = Math.round(performance.now() - started);
  await sleep(3000);
  clearInterval(timer);
  peak = Math.max(peak, rssBytes(pid));
  return { growthMiB: Math.round((peak - before) / 2 ** 20), status, ms };
}

/** Spans of the reader tenant over the last 6 days, written before the process starts (it owns the data dir once running). */
async function preload(dataDir: string): Promise<number> {
  const opened = await openStore({ kind: 'embedded', dataDir, database });
  if (!opened.ok) throw new Error(opened.error);
  const store = opened.value;
  try {
    const migrated = await migrate(store, { logsDays: 30, tracesDays: 30, metricsDays: 90 }, silentLogger);
    if (!migrated.ok) throw new Error(migrated.error.message);
    const started = performance.now();
    const from = Math.floor(Date.now() / 1000) - 6 * day;
    const service = "['cart', 'web', 'auth', 'pay'][number % 4 + 1]";
    await store.client.command({
      query: `INSERT INTO ${database}.spans (tenant_id, timestamp, trace_id, span_id, parent_span_id, span_name, span_kind, service_name, duration_ns, status_code, status_message, resource_attributes, span_attributes)
        SELECT 'reader', fromUnixTimestamp64Nano((toInt64(${from}) * 1000000000) + toInt64(number) * ${Math.floor((6 * day * 1e9) / preloadSpans)}),
          hex(cityHash64(intDiv(number, 5))), hex(cityHash64(number)), if(number % 5 = 0, '', hex(cityHash64(number - 1))),
          concat(['GET /checkout ', 'SELECT cart ', 'POST /payment ', 'render '][number % 4 + 1], toString(number % 97)),
          ['SERVER', 'CLIENT', 'INTERNAL'][number % 3 + 1], ${service}, cityHash64(number) % 1000000000, ['OK', 'ERROR', 'UNSET'][number % 3 + 1], '',
          map('service.name', ${service}, 'host.name', concat('host-', toString(number % 50))), map('http.method', ['GET', 'POST'][number % 2 + 1], 'url.path', concat('/api/', toString(number % 1000)))
        FROM numbers(${preloadSpans})`,
    });
    await store.client.command({ query: `OPTIMIZE TABLE ${database}.spans FINAL` });
    // The heavy neighbour's gauge: 20,000 series (user_id) over the last 30 days.
    const gaugeFrom = Math.floor(Date.now() / 1000) - 30 * day + 3600;
    await store.client.command({
      query: `INSERT INTO ${database}.metrics (tenant_id, metric_name, metric_type, service_name, resource_attributes, attributes, timestamp, value)
        SELECT 'reader', 'load', 'gauge', 'svc', map('service.name', 'svc'), map('user_id', concat('user-', toString(number % ${gaugeSeries}))),
          fromUnixTimestamp64Nano(toInt64(${gaugeFrom}) * 1000000000 + toInt64(number) * ${Math.floor((29 * day * 1e9) / preloadPoints)}), toFloat64(cityHash64(number) % 1000)
        FROM numbers(${preloadPoints})`,
    });
    return Math.round(performance.now() - started);
  } finally {
    await store.close();
  }
}

interface Running {
  readonly child: ChildProcess;
  readonly otlpUrl: string;
  readonly apiUrl: string;
  readonly otlpPort: number;
  stop(): Promise<void>;
}

async function startAll(dataDir: string): Promise<Running> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TENANTRY_')) env[k] = v;
  Object.assign(env, {
    TENANTRY_HOST: '127.0.0.1',
    TENANTRY_DATA_DIR: dataDir,
    TENANTRY_OTLP_HTTP_PORT: '0',
    TENANTRY_OTLP_GRPC_PORT: '0',
    TENANTRY_API_PORT: '0',
    TENANTRY_MEMORY_LIMIT_BYTES: memoryLimit,
    // B's four closed-loop clients send more than the default per-tenant rate (8 MiB/s) on an idle machine; that limit is
    // bench:noisy's subject, not this bench's: without this every request of B's was a quick 429.
    TENANTRY_TENANT_INGEST_BYTES_PER_SECOND: String(256 * 1_048_576),
    TENANTRY_TENANT_INGEST_BURST_BYTES: String(1024 * 1_048_576),
    TENANTRY_API_KEYS: JSON.stringify([
      { key: ingestKey, name: 'ingest', scopes: ['ingest'], tenants: ['*'] },
      { key: readerBKey, name: 'reader B', scopes: ['read'], tenants: ['writer'] },
      ...readKeys.map((key, i) => ({ key, name: `reader ${i}`, scopes: ['read'], tenants: ['reader'] })),
    ]),
  });
  const child = spawn(process.execPath, [...nodeFlags, join(import.meta.dirname, '..', 'src', 'cli.ts'), 'all'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const kill = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', kill);
  let output = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output = (output + chunk).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  const ports = await new Promise<Record<string, number>>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`tenantry did not start within 120 s: ${output}`));
    }, 120_000);
    let buffered = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        output = (output + line + '\n').slice(-4000);
        if (line.includes('"tenantry started"')) {
          clearTimeout(timer);
          resolve((JSON.parse(line) as { ports: Record<string, number> }).ports);
        }
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`tenantry exited before it started: ${output}`));
    });
  }).catch((error: unknown) => {
    kill();
    throw error;
  });
  const otlpPort = ports['otlpHttp'] ?? 0;
  return {
    child,
    otlpPort,
    otlpUrl: `http://127.0.0.1:${otlpPort}`,
    apiUrl: `http://127.0.0.1:${ports['api'] ?? 0}`,
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The heavy neighbour's queries: group-bys over the gauge's 20,000 series and a month at fine intervals. */
function heavyQuery(i: number): Buffer {
  const now = Math.floor(Date.now() / 1000);
  const month = { startTime: now - 30 * day, endTime: now };
  const bodies = [
    { ...month, interval: 300, queries: { metrics: ['load'], groupBy: ['user_id'], operator: 'p99' } },
    { ...month, interval: 300, queries: { metrics: ['load'], groupBy: ['user_id'], operator: 'avg' } },
    { ...month, queries: { metrics: ['load'], groupBy: ['user_id'], operator: 'rate' } },
    { ...month, interval: 240, queries: { metrics: ['load'], operator: 'p99' } },
  ];
  return Buffer.from(JSON.stringify(bodies[i % bodies.length]));
}

/** Tenant B's own query: its last minute of spans, one page of 20. */
function lightQuery(): Buffer {
  const now = Math.floor(Date.now() / 1000);
  return Buffer.from(JSON.stringify({ startTime: now - 60, endTime: now + 60, pagination: { limit: 20 } }));
}

interface LightResult {
  queries: number;
  p50ms: number;
  p99ms: number;
  statuses: Record<string, number>;
}

/** One closed loop of tenant B's light query until `stop` resolves. */
async function lightLoad(apiUrl: string, stop: Promise<void>): Promise<LightResult> {
  const state = { stopped: false };
  void stop.then(() => {
    state.stopped = true;
  });
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  while (!state.stopped) {
    const answer = await send(
      `${apiUrl}/v1/tenants/writer/traces`,
      'POST',
      { 'content-type': 'application/json', authorization: `Bearer ${readerBKey}` },
      lightQuery(),
    );
    latencies.push(answer.ms);
    statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    await sleep(100);
  }
  latencies.sort((a, b) => a - b);
  return { queries: latencies.length, p50ms: quantile(latencies, 0.5), p99ms: quantile(latencies, 0.99), statuses };
}

type HeavyResult = QueryLoadResult & { maxMs: number; errors: Record<string, number> };

/** Tenant A's heavy queries in one closed loop until `stop` resolves: statuses, latencies and each refusal's message. */
async function heavyLoad(apiUrl: string, stop: Promise<void>): Promise<HeavyResult> {
  const state = { stopped: false };
  void stop.then(() => {
    state.stopped = true;
  });
  const statuses: Record<string, number> = {};
  const errors: Record<string, number> = {};
  const latencies: number[] = [];
  for (let i = 0; !state.stopped; i++) {
    const answer = await send(
      `${apiUrl}/v1/tenants/reader/timeseries`,
      'POST',
      { 'content-type': 'application/json', authorization: `Bearer ${readKeys[0] ?? ''}` },
      heavyQuery(i),
    );
    latencies.push(answer.ms);
    statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
    if (answer.error !== undefined) {
      const message = /"message":"([^"]*)"/.exec(answer.error)?.[1] ?? answer.error;
      errors[`${answer.status} ${message.slice(0, 120)}`] = (errors[`${answer.status} ${message.slice(0, 120)}`] ?? 0) + 1;
    }
  }
  latencies.sort((a, b) => a - b);
  return { queries: latencies.length, p50ms: quantile(latencies, 0.5), maxMs: Math.round(latencies.at(-1) ?? 0), statuses, errors };
}

type PhaseMetrics = ReturnType<typeof phaseMetrics>;

/**
 * Tenant B's ingest and light queries for `seconds`, optionally beside A's
 * heavy loop; the process's peak RSS meanwhile (sampled every 20 ms), and
 * where B's ingest time went (the gateway's histograms, isolation-metrics.ts).
 */
async function neighbourPhase(
  running: Running,
  bodies: readonly Buffer[],
  seconds: number,
  heavy: boolean,
): Promise<{
  ingest: IngestResult;
  queries: LightResult;
  heavy?: HeavyResult;
  peakRssMiB: number;
  ingestTime: PhaseMetrics;
  loadAverage: number;
  logged: LogSummary;
}> {
  const pid = running.child.pid ?? 0;
  const before = await readMetrics(`${running.otlpUrl}/metrics`);
  const logged = running.child.stdout === null ? () => ({ stopped: {}, warnings: {} }) : watchLog(running.child.stdout);
  let peak = rssBytes(pid);
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, 20);
  let end = (): void => undefined;
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  const neighbour = heavy ? heavyLoad(running.apiUrl, ended) : undefined;
  if (heavy) await sleep(1000);
  const queries = lightLoad(running.apiUrl, ended);
  const ingested = await ingest(running.otlpUrl, bodies, seconds);
  end();
  const result = { ingest: ingested, queries: await queries, ...(neighbour === undefined ? {} : { heavy: await neighbour }) };
  clearInterval(sampler);
  const ingestTime = phaseMetrics(before, await readMetrics(`${running.otlpUrl}/metrics`));
  return { ...result, peakRssMiB: Math.round(Math.max(peak, rssBytes(pid)) / 2 ** 20), ingestTime, loadAverage: round2(loadavg()[0] ?? 0), logged: logged() };
}

/** A byte size as the process reads TENANTRY_MEMORY_LIMIT_BYTES (bench values only: digits with an optional KiB/MiB/GiB). */
function bytesOf(size: string): number {
  const match = /^(\d+)\s*(KiB|MiB|GiB)?$/.exec(size);
  if (match === null) throw new Error(`BENCH_MEMORY_LIMIT=${size}: expected digits with an optional KiB, MiB or GiB`);
  return Number(match[1]) * ({ KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 }[match[2] ?? ''] ?? 1);
}

type Print = (label: string, value: unknown) => void;

/** Phases 1-3 (ingest beside 8 query loops, the 1 MB attribute, slowloris): their targets as printed. */
async function isolationPhases(running: Running, bodies: readonly Buffer[], print: Print): Promise<Record<string, string>> {
  const pid = running.child.pid ?? 0;
  // Slowloris connections trickle their headers, or a body, alongside the rest of the run.
  const slowHeaders = slowlorisCloseMs('127.0.0.1', running.otlpPort, 150_000, 'headers');
  const slowBody = slowlorisCloseMs('127.0.0.1', running.otlpPort, 150_000, 'body', { authorization: `Bearer ${ingestKey}` });
  const single = await send(
    `${running.apiUrl}/v1/tenants/reader/traces`,
    'POST',
    { 'content-type': 'application/json', authorization: `Bearer ${readKeys[0] ?? ''}` },
    wideQuery(0),
  );
  print('one wide query, no other load (ms, status)', { ms: Math.round(single.ms), status: single.status });
  await ingest(running.otlpUrl, bodies, 3);

  // Two rounds of alone, then under query load, so that a burst of other work on the machine does not decide the ratio.
  const alone: IngestResult[] = [];
  const loaded: IngestResult[] = [];
  for (const round of [1, 2]) {
    alone.push(await ingest(running.otlpUrl, bodies, phaseSeconds / 2));
    print(`ingest alone (round ${round})`, alone.at(-1));
    let endQueries = (): void => undefined;
    const queries = queryLoad(
      running.apiUrl,
      new Promise<void>((resolve) => {
        endQueries = resolve;
      }),
    );
    await sleep(1000);
    loaded.push(await ingest(running.otlpUrl, bodies, phaseSeconds / 2));
    endQueries();
    print(`ingest with 8 query loops (round ${round})`, loaded.at(-1));
    print(`queries during that phase (round ${round})`, await queries);
  }
  const mean = (results: readonly IngestResult[], pick: (r: IngestResult) => number): number => results.reduce((sum, r) => sum + pick(r), 0) / results.length;
  const ratio = round2(
    mean(loaded, (r) => r.spansPerSecond) /
      Math.max(
        1,
        mean(alone, (r) => r.spansPerSecond),
      ),
  );
  const p99Loaded = Math.round(mean(loaded, (r) => r.p99ms));
  print('under query load / alone (spans/s)', ratio);
  print(
    'under query load / alone (p99)',
    round2(
      p99Loaded /
        Math.max(
          1,
          mean(alone, (r) => r.p99ms),
        ),
    ),
  );

  await sleep(2000);
  const huge = hugeResourceRequest();
  const growth = await rssGrowth(
    pid,
    async () =>
      (await send(`${running.otlpUrl}/v1/traces`, 'POST', { 'content-type': 'application/x-protobuf', authorization: `Bearer ${ingestKey}` }, huge)).status,
  );
  print('1 MB attribute x 1,000 spans request', { bytes: huge.length, ...growth });

  print('slowloris closed after (ms): headers, body', [await slowHeaders, await slowBody]);
  return { throughputRatio: `${ratio} (≥ 0.7)`, p99UnderLoadMs: `${p99Loaded} (< 500)`, rssGrowthMiB: `${growth.growthMiB} (< 256)` };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tenantry-bench-isolation-'));
  const out: Record<string, unknown> = { phaseSeconds, preloadSpans, ingestClients, queryLoops, phases };
  const print: Print = (label, value) => {
    out[label] = value;
    process.stdout.write(`${label.padEnd(40)} ${JSON.stringify(value)}\n`);
  };
  try {
    print('preload ms', await preload(dataDir));
    const running = await startAll(dataDir);
    try {
      const bodies = Array.from({ length: 8 }, (_, i) => tracesRequest(spansPerRequest, 'writer', i * 1000));
      const targets = phases === 'all' ? await isolationPhases(running, bodies, print) : {};
      if (phases !== 'all') await ingest(running.otlpUrl, bodies, 3);

      // Heavy neighbour: B alone, then with A's heavy loop, twice in turn.
      const quiet: Awaited<ReturnType<typeof neighbourPhase>>[] = [];
      const noisy: Awaited<ReturnType<typeof neighbourPhase>>[] = [];
      for (const round of [1, 2]) {
        quiet.push(await neighbourPhase(running, bodies, phaseSeconds / 2, false));
        print(`tenant B alone (round ${round})`, quiet.at(-1));
        noisy.push(await neighbourPhase(running, bodies, phaseSeconds / 2, true));
        print(`tenant B beside A's heavy queries (round ${round})`, noisy.at(-1));
      }
      const avg = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
      const queryRatio = round2(avg(noisy.map((r) => r.queries.p99ms)) / Math.max(1, avg(quiet.map((r) => r.queries.p99ms))));
      const ingestRatio = round2(avg(noisy.map((r) => r.ingest.p99ms)) / Math.max(1, avg(quiet.map((r) => r.ingest.p99ms))));
      const peakMiB = Math.max(...noisy.map((r) => r.peakRssMiB), ...quiet.map((r) => r.peakRssMiB));
      const boundMiB = Math.round(bytesOf(memoryLimit) / 2 ** 20);
      print('heavy neighbour: B query p99 beside / alone', queryRatio);
      print('heavy neighbour: B ingest p99 beside / alone', ingestRatio);
      print('heavy neighbour: peak RSS MiB / bound MiB', { peakMiB, boundMiB, ratio: round2(peakMiB / boundMiB) });
      print('targets', {
        ...targets,
        heavyNeighbourQueryP99: `${queryRatio}x (≤ 2)`,
        heavyNeighbourIngestP99: `${ingestRatio}x (≤ 1.5)`,
        heavyNeighbourPeakRss: `${peakMiB} MiB (≤ ${boundMiB})`,
      });
    } finally {
      await running.stop();
    }
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
