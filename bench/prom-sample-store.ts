// How long the PromQL engine's SampleSource takes to select N series of M
// samples each on embedded ClickHouse: the series lookup (index cache warm),
// and the lookup plus the samples read in RowBinary. Not a test: prints
// p50/p95 of a few runs per shape. `node bench/prom-sample-store.ts`
// (BENCH_SERIES / BENCH_SAMPLES: comma-separated shapes, default 100,1000,10000 × 720).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPromSampleSource } from '../api/compat/prometheus/prom-sample-store.ts';
import { SeriesIndexCache } from '../api/compat/prometheus/series-index.ts';
import { createQueryRunner } from '../api/v1/query/query-runner.ts';
import { queryTable } from '../src/clickhouse/schema/ddl.ts';
import { migrate } from '../src/clickhouse/schema/migrator.ts';
import { openStore } from '../src/clickhouse/store.ts';
import { silentLogger } from '../src/log/logger.ts';
import { remoteWriteScope } from '../src/prometheus/remote-write-scope.ts';

const shapes = (process.env['BENCH_SERIES'] ?? '100,1000,10000').split(',').map(Number);
const samples = Number(process.env['BENCH_SAMPLES'] ?? '720');
const runs = 7;
const stepMs = 15_000;

const dir = mkdtempSync(join(tmpdir(), 'prom-sample-store-bench-'));
const opened = await openStore({ kind: 'embedded', dataDir: dir, database: 'bench' });
if (!opened.ok) throw new Error(opened.message);
const store = opened.store;
const migrated = await migrate(store, { logsDays: 30, tracesDays: 30, metricsDays: 90 }, silentLogger);
if (!migrated.ok) throw new Error(migrated.message);
const runner = createQueryRunner(store, 60_000, silentLogger);
const end = Math.floor(Date.now() / stepMs) * stepMs;
const start = end - (samples - 1) * stepMs;

const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;

for (const series of shapes) {
  const name = `bench_metric_${series}`;
  // Written as remote write stores it, one INSERT; the view fills the series index.
  await store.client.command({
    query: `INSERT INTO ${queryTable(store, 'metrics')} (tenant_id, metric_name, metric_type, scope_name, resource_attributes, attributes, timestamp, value)
      SELECT 'bench', {name:String}, 'gauge', {scope:String}, map('service.name', 'job'), map('pod', concat('pod-', toString(number % {series:UInt64}))),
        fromUnixTimestamp64Milli(toInt64({start:Int64} + intDiv(number, {series:UInt64}) * {step:Int64})), toFloat64(number)
      FROM numbers({rows:UInt64})`,
    query_params: { name, scope: remoteWriteScope.name, series, start, step: stepMs, rows: series * samples },
  });
  const index = new SeriesIndexCache({ refreshMs: 60_000 });
  const source = createPromSampleSource({ runner, schema: store, tenantId: 'bench', visibleFromMs: 0, maxSamples: 50_000_000, maxSeries: 1_000_000, index });
  const request = { matchers: [{ name: '__name__', op: '=' as const, value: name }], minT: start, maxT: end };
  const signal = new AbortController().signal;
  const first = performance.now();
  await source.select({ ...request, minT: end + 3 * 86_400_000, maxT: end + 3 * 86_400_000 }, signal);
  const coldIndex = performance.now() - first;
  const lookup: number[] = [];
  const total: number[] = [];
  let read = 0;
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    // Days past the data: the lookup and matching alone (no series has rows then, so no sample statement).
    await source.select({ ...request, minT: end + 3 * 86_400_000, maxT: end + 3 * 86_400_000 }, signal);
    lookup.push(performance.now() - t);
    t = performance.now();
    const r = await source.select(request, signal);
    total.push(performance.now() - t);
    if (!r.ok) throw new Error(r.error.message);
    read = r.value.reduce((n, s) => n + s.times.length, 0);
  }
  console.log(`${series} series × ${samples} samples (${read} read): index load ${coldIndex.toFixed(1)} ms; ` +
    `lookup p50 ${quantile(lookup, 0.5).toFixed(2)} ms; select p50 ${quantile(total, 0.5).toFixed(1)} ms, p95 ${quantile(total, 0.95).toFixed(1)} ms ` +
    `(${((quantile(total, 0.5) * 1e6) / Math.max(1, read)).toFixed(0)} ns/sample)`);
}
await store.close();
rmSync(dir, { recursive: true, force: true });
