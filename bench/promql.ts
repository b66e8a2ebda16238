// npm run bench:promql — issue 16's benchmark. The same samples (default 10 M
// over 100 tenants, 68 series each every 15 s; BENCH_PROMQL_SAMPLES scales
// them) are written to Tenantry through remote write (POST /api/v1/push on the
// gateway, X-Scope-OrgID per tenant) and to the real Prometheus (Debian's,
// from the test cache) through `promtool tsdb create-blocks-from openmetrics`
// with a `tenant` label. Then five dashboard queries (range queries over the
// last hour, 60 s step) run in turns on both, each on a tenant drawn the same
// way for both, once both processes are idle, and the p50/p95 and the ratios
// are printed, with whether the answers were equal. In the same run:
// remote-write samples/s against OTLP metric points/s into the same Tenantry.
// Then, with Tenantry stopped, the same queries in one process on its data,
// without HTTP, beside one statement that only reads each query's samples:
// where the time goes, and the least any answer would cost here.
//
//   npm run bench:promql                                  # 10 M samples, 100 tenants
//   BENCH_PROMQL_SAMPLES=1000000 npm run bench:promql     # quick run
//   BENCH_PROMQL_RUNS=20                                  # query runs per query and system
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPrometheus } from '../test/prometheus/prometheus-binaries.ts';
import { startPrometheus } from '../test/integration/prometheus/support/prometheus-server.ts';
import { compareAnswers, promQuery } from '../test/integration/prometheus/support/promql-client.ts';
import type { PromAnswer, PromEndpoint } from '../test/integration/prometheus/support/promql-client.ts';
import { parsePromql } from '../api/compat/prometheus/promql-parser.ts';
import { evaluateSteps } from '../api/compat/prometheus/promql-engine.ts';
import { createQueryRunner } from '../api/v1/query/query-runner.ts';
import type { QueryRunner } from '../api/v1/query/query-runner.ts';
import { SqlParams } from '../api/v1/query/sql-params.ts';
import { openStore } from '../src/clickhouse/store.ts';
import { silentLogger } from '../src/log/logger.ts';
import { metricsRequest } from './ingest-payloads.ts';
import { settleOrSay } from './peers/process-cpu.ts';
import { defaultTenantryRoot, startTenantryAll } from './peers/servers.ts';
import { remoteWriteRequest, seriesPerTenant, stepSeconds, tenantName, writeOpenMetrics } from './promql/dataset.ts';

const intOf = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name}=${raw}: expected a positive integer`);
  return n;
};
const totalSamples = intOf('BENCH_PROMQL_SAMPLES', 10_000_000);
const tenants = intOf('BENCH_PROMQL_TENANTS', 100);
const runs = intOf('BENCH_PROMQL_RUNS', 20);
const clients = 8;
const pointsPerRequest = 120;

const queries: ReadonlyArray<{ readonly name: string; readonly promql: string; readonly metric: string }> = [
  { name: 'rate by service', promql: 'sum by (job) (rate(http_requests_total{S}[5m]))', metric: 'http_requests_total' },
  { name: 'p99 histogram_quantile', promql: 'histogram_quantile(0.99, sum by (le, job) (rate(request_duration_seconds_bucket{S}[5m])))', metric: 'request_duration_seconds_bucket' },
  { name: 'topk', promql: 'topk(3, sum by (instance) (rate(http_requests_total{S}[5m])))', metric: 'http_requests_total' },
  { name: 'sum by', promql: 'sum by (code) (http_requests_total{S})', metric: 'http_requests_total' },
  { name: 'avg_over_time', promql: 'avg_over_time(memory_usage_bytes{S}[5m])', metric: 'memory_usage_bytes' },
];

const say = (text: string): void => { console.log(`[bench:promql] ${text}`); };
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;
}

function run(binary: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr = (stderr + c).slice(-4000); });
    child.once('exit', (code) => { if (code === 0) resolve(); else reject(new Error(`${binary} ${args.join(' ')} exited ${code}:\n${stderr}`)); });
  });
}

/** Sends `requests` from `clients` closed-loop clients; resolves with acknowledged items and elapsed ms. */
async function closedLoop(count: number, send: (i: number) => Promise<{ ok: boolean; items: number }>): Promise<{ items: number; failed: number; ms: number }> {
  let next = 0;
  let items = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    for (let i = next++; i < count; i = next++) {
      const r = await send(i);
      if (r.ok) items += r.items; else failed += 1;
    }
  }));
  return { items, failed, ms: performance.now() - started };
}

async function post(url: string, body: Buffer, headers: Record<string, string>): Promise<number> {
  const res = await fetch(url, { method: 'POST', body, headers });
  await res.arrayBuffer();
  return res.status;
}

/**
 * Where a query's time goes, in one process on Tenantry's data once Tenantry
 * has stopped (the embedded store is one process's): each query evaluated
 * as the API evaluates it, without HTTP; beside it the least any answer
 * costs, one statement reading the query's samples and nothing else
 * (`count()` of the tenant's rows of its metric in its window); and
 * `SELECT 1`. Same tenants as the timed runs.
 */
async function inProcess(dataDir: string, lastSecond: number, promP95: ReadonlyMap<string, number>): Promise<string> {
  const opened = await openStore({ kind: 'embedded', dataDir, database: 'tenantry' });
  if (!opened.ok) throw new Error(opened.message);
  const store = opened.store;
  try {
    const runner: QueryRunner = createQueryRunner(store, 30_000, silentLogger);
    const deps = { schema: { database: 'tenantry', cluster: undefined }, runner, now: () => BigInt(lastSecond) * 1_000_000_000n, pageMaxBytes: 8 * 1_048_576 };
    const steps = { startMs: (lastSecond - 3600) * 1000, stepMs: 60_000, count: 61, lookbackMs: 300_000 };
    const timed = async (run: (tenant: string) => Promise<boolean>): Promise<number[]> => {
      const ms: number[] = [];
      for (let r = 0; r < runs; r++) {
        const started = performance.now();
        if (!(await run(tenantName((r * 37 + 11) % tenants)))) throw new Error('an in-process statement failed');
        ms.push(performance.now() - started);
      }
      return ms.sort((x, y) => x - y);
    };
    const cell = (ms: readonly number[]): string => `${percentile(ms, 0.5).toFixed(1).padStart(6)} ${percentile(ms, 0.95).toFixed(1).padStart(6)}`;
    const lines = [`  ${'query'.padEnd(24)} ${'evaluated p50/p95'.padStart(18)} ${'samples read p50/p95'.padStart(21)} ${'2x prom p95'.padStart(12)}`];
    for (const { name, promql, metric } of queries) {
      const parsed = parsePromql(promql.replace('{S}', ''));
      if (!parsed.ok) throw new Error(parsed.error.message);
      const evaluated = await timed(async (tenantId) => (await evaluateSteps(deps, { tenantId, visibleFromMs: 0 }, parsed.value, steps, false)).ok);
      const read = await timed(async (tenantId) => {
        const p = new SqlParams();
        const sql = `SELECT count() AS n FROM tenantry.metrics WHERE tenant_id = ${p.bind(tenantId, 'String')} AND metric_name = ${p.bind(metric, 'String')}
          AND timestamp >= fromUnixTimestamp64Milli(${p.bind(steps.startMs - 300_000, 'Int64')}) AND timestamp <= fromUnixTimestamp64Milli(${p.bind(lastSecond * 1000, 'Int64')})`;
        return (await runner.rows(sql, p)).ok;
      });
      lines.push(`  ${name.padEnd(24)}      ${cell(evaluated)}        ${cell(read)} ${(2 * (promP95.get(name) ?? NaN)).toFixed(1).padStart(12)}`);
    }
    const one = await timed(async () => (await runner.rows('SELECT 1 AS one', new SqlParams())).ok);
    return `In one process, without HTTP (ms; SELECT 1: ${cell(one).trim().replace(/\s+/, ' / ')}):\n${lines.join('\n')}`;
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  const prom = findPrometheus();
  if (!prom.ok) throw new Error(prom.reason);
  const points = Math.max(2, Math.floor(totalSamples / tenants / seriesPerTenant));
  const samples = points * tenants * seriesPerTenant;
  // Data ends a minute ago, on a step boundary, so the last hour is fully covered.
  const lastSecond = Math.floor(Date.now() / 1000 / 60) * 60 - 60;
  const firstSecond = lastSecond - (points - 1) * stepSeconds;
  say(`${samples.toLocaleString('en')} samples: ${tenants} tenants x ${seriesPerTenant} series x ${points} points every ${stepSeconds} s (${((points * stepSeconds) / 3600).toFixed(1)} h)`);
  const dir = join(tmpdir(), `tenantry-bench-promql-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  let stopTenantry = (): Promise<void> => Promise.resolve();
  let stopPrometheus = (): Promise<void> => Promise.resolve();
  try {
    // Prometheus: an OpenMetrics file, turned into TSDB blocks by promtool, then served.
    let t0 = performance.now();
    const omFile = join(dir, 'data.om');
    await writeOpenMetrics(omFile, tenants, points, firstSecond);
    say(`OpenMetrics file: ${(statSync(omFile).size / 2 ** 20).toFixed(0)} MiB in ${seconds(performance.now() - t0)}`);
    t0 = performance.now();
    await run(prom.found.promtool, ['tsdb', 'create-blocks-from', 'openmetrics', omFile, join(dir, 'tsdb')]);
    say(`promtool create-blocks-from openmetrics: ${seconds(performance.now() - t0)} (${Math.round(samples / ((performance.now() - t0) / 1000)).toLocaleString('en')} samples/s)`);
    rmSync(omFile);
    const prometheus = await startPrometheus({ binary: prom.found.prometheus, dir, targets: [] });
    stopPrometheus = () => prometheus.stop();

    // Tenantry: remote write, 8 closed-loop clients, one tenant's 68 series x 120 points per request.
    const tenantry = await startTenantryAll(defaultTenantryRoot, join(dir, 'tenantry'));
    stopTenantry = () => tenantry.stop();
    const chunks = Math.ceil(points / pointsPerRequest);
    const rwHeaders = (t: number): Record<string, string> => ({
      authorization: `Bearer ${tenantry.key}`, 'x-scope-orgid': tenantName(t), 'content-type': 'application/x-protobuf',
      'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0',
    });
    const rw = await closedLoop(tenants * chunks, async (i) => {
      const t = i % tenants;
      const from = Math.floor(i / tenants) * pointsPerRequest;
      const to = Math.min(points, from + pointsPerRequest);
      const status = await post(`${tenantry.otlpUrl}/api/v1/push`, remoteWriteRequest(t, from, to, firstSecond), rwHeaders(t));
      return { ok: status === 200 || status === 204, items: (to - from) * seriesPerTenant };
    });
    const rwRate = rw.items / (rw.ms / 1000);
    say(`remote write: ${rw.items.toLocaleString('en')} samples acknowledged in ${seconds(rw.ms)} = ${Math.round(rwRate).toLocaleString('en')} samples/s (${rw.failed} requests refused)`);
    // OTLP metric points into the same process, same clients, 1,000 points per request.
    const otlpRequests = Math.max(20, Math.round(samples / 10 / 1000));
    const otlpBodies = Array.from({ length: 16 }, (_, i) => metricsRequest(1000, `otlp-bench-${i % 4}`, i));
    const ot = await closedLoop(otlpRequests, async (i) => {
      const status = await post(`${tenantry.otlpUrl}/v1/metrics`, otlpBodies[i % otlpBodies.length] ?? Buffer.alloc(0), { authorization: `Bearer ${tenantry.key}`, 'content-type': 'application/x-protobuf' });
      return { ok: status === 200, items: 1000 };
    });
    const otRate = ot.items / (ot.ms / 1000);
    say(`OTLP metrics: ${ot.items.toLocaleString('en')} points acknowledged in ${seconds(ot.ms)} = ${Math.round(otRate).toLocaleString('en')} points/s (${ot.failed} refused); remote write / OTLP = ${(rwRate / otRate).toFixed(2)}`);

    const promEndpoint: PromEndpoint = { url: prometheus.url, headers: {} };
    const tenantryEndpoint = (t: number): PromEndpoint => ({ url: `${tenantry.apiUrl}/prometheus`, headers: { authorization: `Bearer ${tenantry.key}`, 'x-scope-orgid': tenantName(t) } });
    const range = { kind: 'range' as const, start: lastSecond - 3600, end: lastSecond, step: 60 };
    // Rows become visible a moment after their acknowledgement (no event to wait on): bounded poll
    // until the last tenant's request counter has as many samples in Tenantry as in Prometheus.
    const last = tenants - 1;
    const countQuery = (selector: string): string => `sum(count_over_time(http_requests_total${selector}[${points * stepSeconds}s]))`;
    const want = await promQuery(promEndpoint, countQuery(`{tenant="${tenantName(last)}"}`), { kind: 'instant', time: lastSecond });
    const deadline = Date.now() + 120_000;
    let visible = false;
    while (!visible && Date.now() < deadline) {
      const got = await promQuery(tenantryEndpoint(last), countQuery(''), { kind: 'instant', time: lastSecond });
      visible = compareAnswers(want, got) === undefined;
      if (!visible) await new Promise((r) => setTimeout(r, 1000));
    }
    say(visible ? 'Tenantry shows every sample of the last tenant' : 'Tenantry did not show the same sample count within 120 s; timing anyway');
    // Time queries once both are idle: Tenantry inserts its last blocks and merges them after the samples are
    // visible, and its store gate paces queries while ingest is active (bench:isolation measures that policy).
    const settled = await settleOrSay([tenantry.pid, prometheus.pid], 'before timing queries', say);
    if (settled.settled) say(`both idle after ${seconds(settled.waitedMs)}`);

    const rows: string[] = [];
    const promP95 = new Map<string, number>();
    for (const { name, promql } of queries) {
      const promMs: number[] = [];
      const tenMs: number[] = [];
      let equal = 0;
      for (let r = 0; r < runs; r++) {
        const t = (r * 37 + 11) % tenants;
        let started = performance.now();
        const a: PromAnswer = await promQuery(promEndpoint, promql.replace('{S}', `{tenant="${tenantName(t)}"}`), range);
        promMs.push(performance.now() - started);
        started = performance.now();
        const b: PromAnswer = await promQuery(tenantryEndpoint(t), promql.replace('{S}', ''), range);
        tenMs.push(performance.now() - started);
        // The tenant label is Prometheus' way of holding tenants; drop it before comparing.
        const stripped = JSON.parse(JSON.stringify(a).replaceAll(`"tenant":"${tenantName(t)}",`, '').replaceAll(`,"tenant":"${tenantName(t)}"`, '')) as PromAnswer;
        if (compareAnswers(stripped, b) === undefined) equal += 1;
      }
      promMs.sort((x, y) => x - y);
      tenMs.sort((x, y) => x - y);
      const [p50, p95, t50, t95] = [percentile(promMs, 0.5), percentile(promMs, 0.95), percentile(tenMs, 0.5), percentile(tenMs, 0.95)];
      promP95.set(name, p95);
      rows.push(`  ${name.padEnd(24)} ${p50.toFixed(1).padStart(8)} ${p95.toFixed(1).padStart(8)} ${t50.toFixed(1).padStart(9)} ${t95.toFixed(1).padStart(9)} ${(t95 / p95).toFixed(2).padStart(8)}x  ${equal}/${runs}`);
    }
    console.log(`\nDashboard queries (range, last 1 h, step 60 s), ${runs} runs each, ms:\n  ${'query'.padEnd(24)} ${'prom p50'.padStart(8)} ${'prom p95'.padStart(8)} ${'tenantry p50'.padStart(9)} ${'p95'.padStart(9)} ${'p95 ratio'.padStart(9)}  equal answers\n${rows.join('\n')}`);
    console.log(`\nIngest: remote write ${Math.round(rwRate).toLocaleString('en')} samples/s, OTLP ${Math.round(otRate).toLocaleString('en')} metric points/s (ratio ${(rwRate / otRate).toFixed(2)})`);
    await stopTenantry();
    stopTenantry = (): Promise<void> => Promise.resolve();
    await stopPrometheus();
    stopPrometheus = (): Promise<void> => Promise.resolve();
    console.log(`\n${await inProcess(join(dir, 'tenantry'), lastSecond, promP95)}`);
  } finally {
    await stopTenantry();
    await stopPrometheus();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
