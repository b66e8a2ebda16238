// npm run bench:promql — issue 34's benchmark: Tenantry's PromQL engine
// beside Prometheus 3.16 holding the same samples (default 10 M over 100
// tenants; bench/promql/dataset.ts), loaded into both in one run: into
// Prometheus as TSDB blocks (`promtool tsdb create-blocks-from openmetrics`,
// a `tenant` label per tenant), into Tenantry `all` by remote write (POST
// /api/v1/push, X-Scope-OrgID per tenant). Once both are idle, ten range
// queries (last hour, 60 s step; bench/promql/queries.ts) run in turns on
// both, each run on a tenant drawn the same way for both; printed per query:
// p50/p95 of each, the p95 ratio, the answers equal to Prometheus' (values
// within 1e-9 relative), and the peak RSS of each process over the query's
// runs. Then, with Tenantry stopped, the same queries in this process on
// its data, phase by phase (bench/promql/breakdown.ts): where the time goes.
//
//   npm run bench:promql                                  # 10 M samples, 100 tenants
//   BENCH_PROMQL_SAMPLES=1000000 npm run bench:promql     # quick run
//   BENCH_PROMQL_RUNS=20                                  # runs per query and system
//   BENCH_PROMQL_WIDE_SERIES=10000                        # series of the count by query
//   BENCH_PROMQL_QUERIES=1,4,10                           # only these queries (1-based, as in queries.ts)
//   BENCH_PROMQL_BREAKDOWN=0                              # skip the in-process breakdown
//   BENCH_PROMQL_BURST=10                                 # panels of the breakdown's dashboard-like burst (0: none)
//   BENCH_PROMQL_LIVE=1                                   # keep remote-writing every tenant's series (15 s scrapes) to both while timing
//   BENCH_PROMQL_KEEP=1                                   # keep the data directory (its path is said) for experiments
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { postRemoteWrite, requestPlan } from './promql/ingest.ts';
import { startLiveIngest } from './promql/live-ingest.ts';
import type { LiveIngest, LiveStats, TargetStats } from './promql/live-ingest.ts';
import { startLocalIngest } from './promql/local-ingest.ts';
import { difference, rangeQuery, shapeOf } from './promql/answers.ts';
import type { Answer, Endpoint } from './promql/answers.ts';
import { breakdown } from './promql/breakdown.ts';
import type { Breakdown } from './promql/breakdown.ts';
import {
  sampleCount,
  seriesPerTenant,
  stepSeconds,
  tenantName,
  tenantSeries,
  widePoints,
  wideSeries,
  wideStepSeconds,
  writeOpenMetrics,
} from './promql/dataset.ts';
import type { Layout } from './promql/dataset.ts';
import { watchPeak } from './promql/memory.ts';
import { ensurePrometheus } from './promql/prometheus-binary.ts';
import { benchQueries as allQueries, forPrometheus, forTenantry } from './promql/queries.ts';
import type { BenchQuery } from './promql/queries.ts';
import { cacheTable, markdownTables, percentile, phaseTable, summaryLines, timingTable } from './promql/report.ts';
import type { Store } from '../src/clickhouse/store.ts';
import type { QueryTiming } from './promql/report.ts';
import { settleOrSay } from './peers/process-cpu.ts';
import { defaultTenantryRoot, startPrometheus, startTenantryAll } from './peers/servers.ts';

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
/** A subset for a quick look at a few queries: BENCH_PROMQL_QUERIES=1,4 (positions in queries.ts, from 1). */
const benchQueries = ((raw) =>
  raw === undefined || raw === ''
    ? allQueries
    : raw.split(',').map((n) => {
        const q = allQueries[Number(n) - 1];
        if (q === undefined) throw new Error(`BENCH_PROMQL_QUERIES=${raw}: ${n} is not a query position 1-${allQueries.length}`);
        return q;
      }))(process.env['BENCH_PROMQL_QUERIES']);
const withBreakdown = process.env['BENCH_PROMQL_BREAKDOWN'] !== '0';
const burstPanels = process.env['BENCH_PROMQL_BURST'] === '0' ? 0 : intOf('BENCH_PROMQL_BURST', 10);
/** Remote write of new samples, at the dataset's scrape rates, from the warm-up to the end of the timed queries. */
const live = process.env['BENCH_PROMQL_LIVE'] === '1';
/** The live ingest stops after this long whatever happens. */
const liveMaxMs = 30 * 60_000;
/** One wide tenant in 25 (4 of 100). */
const wideTenantCount = Math.max(1, Math.round(tenants / 25));
/** At most 30 % of the samples are the wide tenants'. */
const wideSeriesCount = Math.max(1, Math.min(intOf('BENCH_PROMQL_WIDE_SERIES', 10_000), Math.floor((0.3 * totalSamples) / (wideTenantCount * widePoints))));
/** A query's runs stop (and say so) after this long on both systems together. */
const perQueryBudgetMs = 180_000;

const say = (text: string): void => {
  console.log(`[bench:promql] ${text}`);
};
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
/** The 1, 5 and 15 min load averages: the machine is shared, so a run says how busy it was. */
const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ');

function run(binary: string, args: readonly string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: timeoutMs });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr = (stderr + c).slice(-4000);
    });
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${binary} ${args.join(' ')} exited ${code ?? signal ?? '?'}:\n${stderr}`));
    });
  });
}

function layoutOf(lastSecond: number): Layout {
  const spacing = Math.floor(tenants / wideTenantCount);
  const wideTenants = Array.from({ length: wideTenantCount }, (_, k) => k * spacing + Math.floor(spacing / 2));
  const points = Math.max(2, Math.floor((totalSamples - wideTenantCount * wideSeriesCount * widePoints) / (tenants * seriesPerTenant)));
  return {
    tenants,
    points,
    firstSecond: lastSecond - (points - 1) * stepSeconds,
    wideTenants,
    wideSeries: wideSeriesCount,
    wideFirstSecond: lastSecond - (widePoints - 1) * wideStepSeconds,
  };
}

/** The tenant of run `r` of a query: narrow queries spread over all tenants, wide ones over the wide tenants. */
const tenantOf =
  (layout: Layout) =>
  (q: BenchQuery, r: number): number =>
    q.wide === true ? (layout.wideTenants[r % layout.wideTenants.length] ?? 0) : (r * 37 + 11) % tenants;

/**
 * Bounded poll: until both systems count the same samples for the last tenant and each wide tenant
 * (rows become visible a moment after their acknowledgement). Counted per metric name, as count_over_time
 * over several names fails once the names drop (request_duration_seconds_count and _sum share their labels).
 */
async function waitVisible(prometheus: Endpoint, tenantry: (t: number) => Endpoint, layout: Layout, lastSecond: number): Promise<boolean> {
  const range = `${lastSecond - Math.min(layout.firstSecond, layout.wideFirstSecond) + 60}s`;
  const names = [...new Set([...tenantSeries(), ...wideSeries(1)].map((s) => s.name))];
  const count = (selector: string): string => names.map((n) => `(sum(count_over_time(${n}${selector}[${range}])) or vector(0))`).join(' + ');
  const at = { start: lastSecond, end: lastSecond, step: 60 };
  const deadline = Date.now() + 180_000;
  for (const t of [tenants - 1, ...layout.wideTenants]) {
    const want = await rangeQuery(prometheus, count(`{tenant="${tenantName(t)}"}`), at);
    for (;;) {
      const got = await rangeQuery(tenantry(t), count(''), at);
      if (difference(want, got) === undefined) break;
      if (Date.now() > deadline) {
        say(`${tenantName(t)}: ${difference(want, got) ?? ''}`);
        return false;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  return true;
}

async function main(): Promise<void> {
  const prom = ensurePrometheus(say);
  // Data ends a minute ago, on a minute, so the last hour is covered.
  const lastSecond = Math.floor(Date.now() / 1000 / 60) * 60 - 60;
  const layout = layoutOf(lastSecond);
  const samples = sampleCount(layout);
  say(
    `${samples.toLocaleString('en')} samples: ${tenants} tenants x ${seriesPerTenant} series x ${layout.points} points every ${stepSeconds} s (${((layout.points * stepSeconds) / 3600).toFixed(1)} h), ` +
      `and tenants ${layout.wideTenants.map(tenantName).join(', ')} x ${layout.wideSeries.toLocaleString('en')} series x ${widePoints} points every ${wideStepSeconds} s`,
  );
  say(`load average (1 / 5 / 15 min) at the start: ${load()}`);
  const dir = join(tmpdir(), `tenantry-bench-promql-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  let stopTenantry = (): Promise<void> => Promise.resolve();
  let stopPrometheus = (): Promise<void> => Promise.resolve();
  try {
    // Prometheus: an OpenMetrics file, turned into TSDB blocks by promtool, then served.
    let t0 = performance.now();
    const omFile = join(dir, 'data.om');
    await writeOpenMetrics(omFile, layout);
    say(`OpenMetrics file: ${(statSync(omFile).size / 2 ** 20).toFixed(0)} MiB in ${seconds(performance.now() - t0)}`);
    t0 = performance.now();
    const promDir = join(dir, 'prometheus');
    await run(prom.promtool, ['tsdb', 'create-blocks-from', 'openmetrics', omFile, join(promDir, 'data')], 30 * 60_000);
    say(`promtool create-blocks-from openmetrics: ${seconds(performance.now() - t0)}`);
    rmSync(omFile);
    // Under live ingest Prometheus receives the same new samples by remote write (its receiver is off otherwise).
    const prometheus = await startPrometheus(prom.prometheus, promDir, { remoteWriteReceiver: live });
    stopPrometheus = () => prometheus.stop();

    // Tenantry: remote write from 8 closed-loop clients.
    const tenantry = await startTenantryAll(defaultTenantryRoot, join(dir, 'tenantry'));
    stopTenantry = () => tenantry.stop();
    const rw = await postRemoteWrite(`${tenantry.otlpUrl}/api/v1/push`, tenantry.key, requestPlan(layout));
    say(
      `remote write: ${rw.samples.toLocaleString('en')} samples acknowledged in ${seconds(rw.ms)} = ${Math.round(rw.samples / (rw.ms / 1000)).toLocaleString('en')} samples/s (${rw.failed} requests refused after retries)`,
    );

    const promEndpoint: Endpoint = { url: prometheus.url, headers: {} };
    const tenantryEndpoint = (t: number): Endpoint => ({
      url: `${tenantry.apiUrl}/prometheus`,
      headers: { authorization: `Bearer ${tenantry.key}`, 'x-scope-orgid': tenantName(t) },
    });
    const visible = await waitVisible(promEndpoint, tenantryEndpoint, layout, lastSecond);
    say(
      visible
        ? 'Tenantry counts the samples Prometheus counts (last tenant, wide tenants)'
        : 'Tenantry did not count the same samples within 180 s; timing anyway',
    );
    // Time queries once both are idle: Tenantry inserts its last blocks and merges them after the samples are visible.
    const settled = await settleOrSay([tenantry.pid, prometheus.pid], 'before timing queries', say);
    if (settled.settled) say(`both idle after ${seconds(settled.waitedMs)}`);

    const range = { start: lastSecond - 3600, end: lastSecond, step: 60 };
    const tenantFor = tenantOf(layout);
    // New samples land after the range's end: the answers stay Prometheus', the cache tops up (and sees merges) on every read.
    let liveIngest: LiveIngest | undefined;
    if (live) {
      liveIngest = startLiveIngest(
        [
          {
            name: 'Tenantry',
            url: `${tenantry.otlpUrl}/api/v1/push`,
            headers: (t) => ({ authorization: `Bearer ${tenantry.key}`, 'x-scope-orgid': t }),
            tenantLabel: false,
          },
          { name: 'Prometheus', url: `${prometheus.url}/api/v1/write`, headers: () => ({}), tenantLabel: true },
        ],
        layout,
        liveMaxMs,
      );
      say('live ingest: every tenant remote-writes a point of each series every 15 s (wide tenants every 60 s) to both systems until the timed queries end');
    }
    // One untimed run per query and tenant on both: caches warm (Tenantry's series index, Prometheus' pages), as for a dashboard refreshed.
    for (const q of benchQueries) {
      for (const t of new Set(Array.from({ length: runs }, (_, r) => tenantFor(q, r)))) {
        await rangeQuery(promEndpoint, forPrometheus(q, tenantName(t)), range);
        await rangeQuery(tenantryEndpoint(t), forTenantry(q), range);
      }
    }
    const timings: QueryTiming[] = [];
    for (const q of benchQueries) {
      const timing: QueryTiming = {
        query: q,
        prometheus: [],
        tenantry: [],
        equal: 0,
        compared: 0,
        series: 0,
        points: 0,
        tenantryPeakMiB: NaN,
        prometheusPeakMiB: NaN,
        firstDifference: undefined,
      };
      const tenantryPeak = watchPeak(tenantry.pid);
      const prometheusPeak = watchPeak(prometheus.pid);
      const deadline = Date.now() + perQueryBudgetMs;
      for (let r = 0; r < runs && Date.now() < deadline; r++) {
        const t = tenantFor(q, r);
        let started = performance.now();
        const a: Answer = await rangeQuery(promEndpoint, forPrometheus(q, tenantName(t)), range);
        timing.prometheus.push(performance.now() - started);
        started = performance.now();
        const b: Answer = await rangeQuery(tenantryEndpoint(t), forTenantry(q), range);
        timing.tenantry.push(performance.now() - started);
        const diff = difference(a, b);
        timing.compared += 1;
        if (diff === undefined) timing.equal += 1;
        else timing.firstDifference ??= `${tenantName(t)}: ${diff}`;
        ({ series: timing.series, points: timing.points } = shapeOf(a));
      }
      timing.tenantryPeakMiB = tenantryPeak.end();
      timing.prometheusPeakMiB = prometheusPeak.end();
      if (timing.compared < runs) say(`${q.name}: ${timing.compared} of ${runs} runs within ${seconds(perQueryBudgetMs)}`);
      if (timing.firstDifference !== undefined) say(`${q.name}: first difference: ${timing.firstDifference}`);
      timings.push(timing);
    }
    // What a query that reads nothing costs over HTTP on each: the floor under every row above.
    const floor = { prometheus: [] as number[], tenantry: [] as number[] };
    for (let r = 0; r < runs; r++) {
      let started = performance.now();
      await rangeQuery(promEndpoint, 'vector(1)', range);
      floor.prometheus.push(performance.now() - started);
      started = performance.now();
      await rangeQuery(tenantryEndpoint(tenantFor(benchQueries[0] ?? { name: '', promql: '' }, r)), 'vector(1)', range);
      floor.tenantry.push(performance.now() - started);
    }
    say(`load average (1 / 5 / 15 min) after the timed queries: ${load()}`);
    const liveStats: LiveStats | undefined = await liveIngest?.stop();
    const sentTo = (t: TargetStats, ms: number): string =>
      `${t.name} ${t.samples.toLocaleString('en')} samples in ${t.requests} requests = ${Math.round(t.samples / (ms / 1000)).toLocaleString('en')} samples/s ` +
      `(${t.refused} refused, ${t.skipped} skipped with 8 in flight)`;
    const liveLine =
      liveStats === undefined
        ? undefined
        : `live ingest to both during the warm-up and the timed queries, over ${seconds(liveStats.ms)}: ${liveStats.targets.map((t) => sentTo(t, liveStats.ms)).join('; ')}`;
    if (liveLine !== undefined) say(liveLine);
    const floorLine =
      `vector(1), which reads nothing, over HTTP: Prometheus p50/p95 ${percentile(floor.prometheus, 0.5).toFixed(1)}/${percentile(floor.prometheus, 0.95).toFixed(1)} ms, ` +
      `Tenantry ${percentile(floor.tenantry, 0.5).toFixed(1)}/${percentile(floor.tenantry, 0.95).toFixed(1)} ms`;
    console.log(`\nRange queries (last 1 h, step 60 s) over HTTP, ${runs} runs each, ms; peak RSS over the query's runs, MiB:\n${timingTable(timings)}`);
    console.log(`\n${[...summaryLines(timings), floorLine].join('\n')}`);
    await stopTenantry();
    stopTenantry = (): Promise<void> => Promise.resolve();
    await stopPrometheus();
    stopPrometheus = (): Promise<void> => Promise.resolve();

    if (!withBreakdown) return;
    const parts: Breakdown = await breakdown({
      dataDir: join(dir, 'tenantry'),
      queries: benchQueries,
      tenantOf: (q, r) => tenantName(tenantFor(q, r)),
      runs,
      startMs: range.start * 1000,
      endMs: range.end * 1000,
      stepMs: range.step * 1000,
      visibleFromMs: (lastSecond - 90 * 86_400) * 1000,
      budgetMs: 15 * 60_000,
      burstPanels,
      ...(live ? { live: (store: Store) => startLocalIngest(store, layout, lastSecond, liveMaxMs) } : {}),
    });
    console.log(`\nWhere Tenantry's time goes, in one process on its data without HTTP (p50 of ${runs} runs, ms):\n${phaseTable(timings, parts)}`);
    console.log(`\n${cacheTable(timings, parts)}`);
    console.log(
      `\n---- markdown (docs/benchmarks.md) ----\n${markdownTables({
        timings,
        parts,
        runs,
        samples,
        layout,
        floor: floorLine,
        machine: `${cpus().length} cores (${cpus()[0]?.model ?? '?'}), ${Math.round(totalmem() / 2 ** 30)} GiB`,
        ingest: `remote write ${Math.round(rw.samples / (rw.ms / 1000)).toLocaleString('en')} samples/s${liveLine === undefined ? '' : `; ${liveLine}`}`,
      })}`,
    );
  } finally {
    await stopTenantry();
    await stopPrometheus();
    if (process.env['BENCH_PROMQL_KEEP'] === '1') say(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}

await main();
