// How long the PromQL engine's SampleSource takes to select N series of M
// samples each on embedded ClickHouse, per shape: gauges (one value per
// row), a classic OTLP histogram read as its _bucket series (10 buckets a
// row), and remote-written native histograms. Prints the series lookup
// (index cache warm), and the select's p50/p95 split into the sample
// statement (ClickHouse, RowBinary in hand) and the rest (decoding,
// turning rows into series, sorting them), and the CPU time the process
// spent on it (embedded ClickHouse's threads included: on a shared
// machine a steadier figure than wall time). Not a test.
// `node bench/prom-sample-store.ts` (BENCH_SERIES: comma-separated series
// counts, default 100,1000,10000; BENCH_SAMPLES: samples per series, 720;
// BENCH_SHAPES: gauge,histogram,native).
import { TenantScan } from '../api/query/tenant-scan.ts';
import type { Principal } from '../src/auth/api-keys.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPromSampleSource } from '../api/compat/prometheus/prom-sample-store.ts';
import { SeriesIndexCache } from '../api/compat/prometheus/series-index.ts';
import { createQueryRunner } from '../api/query/query-runner.ts';
import type { QueryRunner } from '../api/query/query-runner.ts';
import { queryTable } from '../src/clickhouse/schema/ddl.ts';
import { migrate } from '../src/clickhouse/schema/migrator.ts';
import { openStore } from '../src/clickhouse/store.ts';
import { silentLogger } from '../src/log/logger.ts';
import { remoteWriteScope } from '../src/prometheus/remote-write-scope.ts';
import { fixedSettings } from '../support/fixed-settings.ts';

const counts = (process.env['BENCH_SERIES'] ?? '100,1000,10000').split(',').map(Number);
const samples = Number(process.env['BENCH_SAMPLES'] ?? '720');
const shapes = (process.env['BENCH_SHAPES'] ?? 'gauge,histogram,native').split(',');
const runs = Number(process.env['BENCH_RUNS'] ?? '7');
const stepMs = 15_000;

const dir = mkdtempSync(join(tmpdir(), 'prom-sample-store-bench-'));
const opened = await openStore({ kind: 'embedded', dataDir: dir, database: 'bench' });
if (!opened.ok) throw new Error(opened.error);
const store = opened.value;
const migrated = await migrate(store, { logsDays: 30, tracesDays: 30, metricsDays: 90 }, silentLogger);
if (!migrated.ok) throw new Error(migrated.error.message);
/** An all-tenants key: the bench reads as the API would for any tenant. */
const everyTenant: Principal = { name: 'bench', scopes: new Set(['read'] as const), tenants: '*' };
const inner = createQueryRunner(store, 120_000, silentLogger);
/** The time and process CPU spent in binary statements (the sample reads) since last reset. */
let statementMs = 0;
let statementCpuMs = 0;
const runner: QueryRunner = {
  ...inner,
  binary: async (statement, settings) => {
    const t = performance.now();
    const used = process.cpuUsage();
    if (inner.binary === undefined) throw new Error('no binary statements');
    const r = await inner.binary(statement, settings);
    statementMs += performance.now() - t;
    const spent = process.cpuUsage(used);
    statementCpuMs += (spent.user + spent.system) / 1000;
    return r;
  },
};
const end = Math.floor(Date.now() / stepMs) * stepMs;
const start = end - (samples - 1) * stepMs;

const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;

/** Writes the shape's rows in one INSERT (the view fills the series index) and names the series to select. */
async function write(shape: string, series: number): Promise<string> {
  const params = { scope: remoteWriteScope.name, series, start, step: stepMs, rows: series * samples };
  const time = 'fromUnixTimestamp64Milli(toInt64({start:Int64} + intDiv(number, {series:UInt64}) * {step:Int64}))';
  const pod = "map('pod', concat('pod-', toString(number % {series:UInt64})))";
  const table = queryTable(store, 'metrics');
  if (shape === 'gauge') {
    await store.client.command({
      query: `INSERT INTO ${table} (tenant_id, metric_name, metric_type, scope_name, resource_attributes, attributes, timestamp, value)
        SELECT 'bench', {name:String}, 'gauge', {scope:String}, map('service.name', 'job'), ${pod}, ${time}, toFloat64(number) FROM numbers({rows:UInt64})`,
      query_params: { ...params, name: `gauge_${series}` },
    });
    return `gauge_${series}`;
  }
  if (shape === 'histogram') {
    await store.client.command({
      query: `INSERT INTO ${table} (tenant_id, metric_name, metric_type, temporality, unit, resource_attributes, attributes, timestamp, count, sum, bucket_counts, explicit_bounds)
        SELECT 'bench', {name:String}, 'histogram', 'cumulative', 's', map('service.name', 'job'), ${pod}, ${time}, 10 * number, toFloat64(number),
          arrayMap(i -> number, range(10)), [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] FROM numbers({rows:UInt64})`,
      query_params: { ...params, name: `hist_${series}` },
    });
    return `hist_${series}_seconds_bucket`;
  }
  await store.client.command({
    query: `INSERT INTO ${table} (tenant_id, metric_name, metric_type, temporality, scope_name, resource_attributes, attributes, timestamp, count, sum,
        exp_scale, exp_zero_count, exp_zero_threshold, exp_positive_offset, exp_positive_bucket_counts)
      SELECT 'bench', {name:String}, 'exponential_histogram', 'cumulative', {scope:String}, map('service.name', 'job'), ${pod}, ${time}, 12 * number, toFloat64(number),
        3, number, 1e-128, -5, arrayMap(i -> number, range(11)) FROM numbers({rows:UInt64})`,
    query_params: { ...params, name: `native_${series}` },
  });
  return `native_${series}`;
}

for (const shape of shapes) {
  for (const series of counts) {
    const name = await write(shape, series);
    const index = new SeriesIndexCache({ refreshMs: 60_000 });
    const source = createPromSampleSource({
      runner,
      schema: store,
      scan: TenantScan.open(
        { now: () => BigInt(Date.now()) * 1_000_000n, settings: fixedSettings() },
        { principal: everyTenant, tenantId: 'bench' },
        'metrics',
      ),
      visibleFromMs: 0,
      maxSamples: 100_000_000,
      maxSeries: 1_000_000,
      index,
    });
    const request = { matchers: [{ name: '__name__', op: '=' as const, value: name }], minT: start, maxT: end };
    const later = { ...request, minT: end + 3 * 86_400_000, maxT: end + 3 * 86_400_000 };
    const signal = new AbortController().signal;
    const first = performance.now();
    await source.select(later, signal);
    const coldIndex = performance.now() - first;
    const lookup: number[] = [];
    const total: number[] = [];
    const statement: number[] = [];
    const rest: number[] = [];
    const cpu: number[] = [];
    const statementCpu: number[] = [];
    let read = 0;
    let got = 0;
    for (let i = 0; i < runs; i++) {
      let t = performance.now();
      // Days past the data: the lookup and matching alone (no series has rows then, so no sample statement).
      await source.select(later, signal);
      lookup.push(performance.now() - t);
      statementMs = 0;
      statementCpuMs = 0;
      t = performance.now();
      const used = process.cpuUsage();
      const r = await source.select(request, signal);
      const ms = performance.now() - t;
      const spent = process.cpuUsage(used);
      cpu.push((spent.user + spent.system) / 1000);
      statementCpu.push(statementCpuMs);
      total.push(ms);
      statement.push(statementMs);
      rest.push(ms - statementMs);
      if (!r.ok) throw new Error(r.error.message);
      got = r.value.length;
      read = r.value.reduce((n, s) => n + s.times.length, 0);
    }
    const f = (xs: number[]): string => quantile(xs, 0.5).toFixed(1);
    console.log(
      `${shape} ${series} series × ${samples} samples (${got} series, ${read} samples read): index load ${coldIndex.toFixed(1)} ms; ` +
        `lookup p50 ${quantile(lookup, 0.5).toFixed(2)} ms; select min ${Math.min(...total).toFixed(1)} ms, p50 ${f(total)} ms, p95 ${quantile(total, 0.95).toFixed(1)} ms ` +
        `(statement p50 ${f(statement)} ms, decode and merge p50 ${f(rest)} ms; process CPU min ${Math.min(...cpu).toFixed(1)} ms, p50 ${f(cpu)} ms, of which the statement p50 ${f(statementCpu)} ms; ${((quantile(total, 0.5) * 1e6) / Math.max(1, read)).toFixed(0)} ns/sample)`,
    );
  }
}
await store.close();
rmSync(dir, { recursive: true, force: true });
