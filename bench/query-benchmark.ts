// `npm run bench:query`: loads generated spans and logs (10 million each by
// default) over 100 tenants into a temporary embedded ClickHouse, then
// measures p50/p95 of four API requests next to the same query written by
// hand and run straight through the ClickHouse client. Not a test.
//
//   BENCH_ROWS=10000000 BENCH_ITERATIONS=200 npm run bench:query
//
// 200 iterations, not fewer: with 40 the p95 is the third-slowest sample, so
// one stall from other work on the machine decides it.
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { parseKeys } from '../src/auth/api-keys.ts';
import { openStore } from '../src/clickhouse/store.ts';
import type { Store } from '../src/clickhouse/store.ts';
import { migrate } from '../src/clickhouse/schema/migrator.ts';
import { silentLogger } from '../src/log/logger.ts';
import { Readiness } from '../src/ops/readiness.ts';
import { openProcessContext } from '../src/target/process-context.ts';
import { builtInDefaults } from '../src/tenant/settings/tenant-settings.ts';
import { startApi } from '../api/api.ts';
import { isRight } from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import type { RouteDeps } from '../api/query/deps.ts';
import type { ScanCaller, Statement } from '../api/query/tenant-scan.ts';
import type { Principal } from '../src/auth/api-keys.ts';
import { settingsClause } from '../api/query/query-runner.ts';
import { LogRequest } from '../api/v1/logs/log-codecs.ts';
import { logPage } from '../api/v1/logs/log-queries.ts';
import { TraceRequest } from '../api/v1/traces/trace-codecs.ts';
import { tracePage } from '../api/v1/traces/trace-queries.ts';
import { BoundedTimeseriesRequest } from '../api/v1/timeseries/timeseries-codecs.ts';
import { timeseriesReport } from '../api/v1/timeseries/timeseries-report.ts';
import { UsageQuery } from '../api/v1/usage/usage-codecs.ts';
import { usageReport } from '../api/v1/usage/usage-queries.ts';
import { statementOf } from './recording-runner.ts';
import { apiConfig } from '../support/default-config.ts';

const rows = Number(process.env['BENCH_ROWS'] ?? 10_000_000);
const iterations = Number(process.env['BENCH_ITERATIONS'] ?? 200);
const tenants = 100;
const key = 'bench-key-0123456789abcdef';
const day = 86_400;
// Data covers the 7 days before today's UTC midnight (inside every retention).
const base = Math.floor(Date.now() / 1000 / day) * day - 7 * day;

async function timed(label: string, run: () => Promise<unknown>): Promise<void> {
  const started = Date.now();
  await run();
  console.log(`${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function load(store: Store): Promise<void> {
  const db = store.database;
  const spacing = Math.floor((7 * day * 1e9) / (rows / tenants)); // ns between one tenant's rows
  const ts = `fromUnixTimestamp64Nano(toInt64(${base}) * 1000000000 + toInt64(intDiv(number, ${tenants})) * ${spacing})`;
  const tenant = `concat('tenant-', toString(number % ${tenants}))`;
  const service = "['cart', 'web', 'auth', 'pay'][number % 4 + 1]";
  await timed(`logs (${rows})`, () =>
    store.client.command({
      query: `INSERT INTO ${db}.logs (tenant_id, timestamp, observed_timestamp, log_id, trace_id, span_id, severity_number, severity_text, service_name, body, resource_attributes, log_attributes)
      SELECT ${tenant}, ${ts}, ${ts}, leftPad(hex(number), 16, '0'), hex(cityHash64(intDiv(number, 5))), hex(cityHash64(number)),
        [9, 13, 17, 5][number % 4 + 1], '', ${service},
        concat(['GET /api/cart ok', 'payment failed: card declined', 'user login', 'cache miss for key ', 'timeout contacting db', 'order placed', 'retrying request'][number % 7 + 1], ' #', toString(number % 9973)),
        map('service.name', ${service}, 'region', ['eu', 'us'][number % 2 + 1]), map('user', concat('u', toString(number % 1000)))
      FROM numbers(${rows})`,
    }),
  );
  await timed(`spans (${rows})`, () =>
    store.client.command({
      query: `INSERT INTO ${db}.spans (tenant_id, timestamp, trace_id, span_id, parent_span_id, span_name, span_kind, service_name, duration_ns, status_code, status_message, resource_attributes, span_attributes)
      SELECT ${tenant}, ${ts}, hex(cityHash64(intDiv(number, 5))), hex(cityHash64(number)), if(number % 5 = 0, '', hex(cityHash64(number - 1))),
        ['GET /checkout', 'SELECT cart', 'POST /payment', 'render', 'publish order', 'GET /checkout/confirm'][number % 6 + 1],
        ['SERVER', 'CLIENT', 'INTERNAL', 'PRODUCER', 'CONSUMER'][number % 5 + 1], ${service},
        cityHash64(number) % 1000000000, ['OK', 'ERROR', 'UNSET'][number % 3 + 1], '',
        map('service.name', ${service}), map('http.method', ['GET', 'POST'][number % 2 + 1])
      FROM numbers(${rows})`,
    }),
  );
  // Metrics: the last two hours of the window, one gauge point per series every 10 s, 4 services × 5 routes per tenant.
  const points = tenants * 20 * 720;
  await timed(`metrics (${points})`, () =>
    store.client.command({
      query: `INSERT INTO ${db}.metrics (tenant_id, metric_name, metric_type, unit, service_name, resource_attributes, attributes, timestamp, value)
      SELECT ${tenant}, 'http.server.duration', 'gauge', 'ms', ['cart', 'web', 'auth', 'pay'][intDiv(number, ${tenants}) % 4 + 1],
        map('service.name', ['cart', 'web', 'auth', 'pay'][intDiv(number, ${tenants}) % 4 + 1]), map('route', concat('/r', toString(intDiv(number, ${tenants * 4}) % 5))),
        fromUnixTimestamp64Nano((toInt64(${base + 7 * day - 7200}) + intDiv(number, ${tenants * 20}) * 10) * 1000000000), (cityHash64(number) % 10000) / 10.0
      FROM numbers(${points})`,
    }),
  );
  // 30 days of usage per tenant (the materialized views only ever write today's row).
  await timed('usage_daily (3000)', () =>
    store.client.command({
      query: `INSERT INTO ${db}.usage_daily SELECT concat('tenant-', toString(number % ${tenants})), toDate(${base}) - intDiv(number, ${tenants}),
      number % 1000, number % 100000, number % 777, number % 555 FROM numbers(${tenants * 60})`,
    }),
  );
  await store.client.command({ query: `OPTIMIZE TABLE ${db}.logs FINAL` }).catch(() => undefined);
  await store.client.command({ query: `OPTIMIZE TABLE ${db}.spans FINAL` }).catch(() => undefined);
}

async function counts(store: Store): Promise<void> {
  for (const table of ['logs', 'spans', 'metrics', 'usage_daily']) {
    const rs = await store.client.query({ query: `SELECT toString(count()) AS n FROM ${store.database}.${table}`, format: 'JSONEachRow' });
    const [row] = await rs.json<{ n: string }>();
    console.log(`rows in ${table}: ${row?.n ?? '?'}`);
  }
}

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;

/** A request body as the route decodes it (its validate() codec); the bench's bodies are valid, so a refusal is a bug here. */
function decoded<T>(codec: t.Type<T, unknown>, body: unknown): T {
  const d = codec.decode(body);
  if (!isRight(d)) throw new Error(`a body the route would refuse: ${JSON.stringify(body)}`);
  return d.right;
}

interface Case {
  readonly name: string;
  /** The API request for tenant i. */
  readonly api: (tenant: string) => { path: string; body: unknown };
  /**
   * The route's own handler for that body (decoded as the route decodes it);
   * the statement it runs, recorded (./recording-runner.ts), is run with the
   * runner's SETTINGS clause straight through the client, to split SQL cost from HTTP cost.
   */
  readonly route: (deps: RouteDeps, caller: ScanCaller, body: unknown) => Promise<{ readonly ok: boolean }>;
  /** The same query by hand, for tenant i. */
  readonly sql: (tenant: string) => string;
  readonly page: boolean;
}

interface Figures {
  p50: number;
  p95: number;
}

/** One POST over a keep-alive connection (node:http: lighter than fetch, so the figures weigh the server, not the client). */
function post(agent: Agent, url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Runs the variants interleaved (each iteration runs every variant once, in
 * rotating order) so background load on a shared machine hits them alike.
 */
async function measure(variants: readonly ((tenant: string) => Promise<void>)[]): Promise<Figures[]> {
  for (let i = 0; i < 3; i++) for (const run of variants) await run(`tenant-${i}`);
  const samples: number[][] = variants.map(() => []);
  for (let i = 0; i < iterations; i++) {
    const tenant = `tenant-${(i * 37) % tenants}`;
    for (let k = 0; k < variants.length; k++) {
      const v = (i + k) % variants.length;
      const started = process.hrtime.bigint();
      await variants[v]?.(tenant);
      samples[v]?.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  return samples.map((s) => {
    s.sort((a, b) => a - b);
    return { p50: percentile(s, 0.5), p95: percentile(s, 0.95) };
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tenantry-query-bench-'));
  const opened = await openStore({ kind: 'embedded', dataDir: dir, database: 'bench' });
  if (!opened.ok) throw new Error(opened.error);
  const store = opened.value;
  try {
    const migrated = await migrate(store, { logsDays: 30, tracesDays: 30, metricsDays: 90 }, silentLogger);
    if (!migrated.ok) throw new Error(migrated.error.message);
    await load(store);
    await counts(store);
    const keys = parseKeys(JSON.stringify([{ key, scopes: ['read'], tenants: ['*'] }]), 'bench');
    if (!keys.ok) throw new Error(keys.error);
    const queryTimeoutMs = 30_000;
    const proc = await openProcessContext(store, {
      host: '127.0.0.1',
      keys: keys.value,
      log: silentLogger,
      readiness: new Readiness([]),
      registry: new Registry(),
      settings: { defaults: builtInDefaults, refreshMs: 5000 },
    });
    const api = await startApi(proc.ctx, apiConfig({ queryTimeoutMs, pageMaxBytes: 8 * 1_048_576 }));
    // The API runs every query with this clause (its time limit); so does the API SQL column.
    const apiSettings = settingsClause(queryTimeoutMs);
    const url = `http://127.0.0.1:${api.ports['api'] ?? 0}`;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const db = store.database;
    const start = base;
    const end = base + 7 * day;
    const lastHour = end - 3600;
    // The routes' dependencies as the API has them, but for the runner (statementOf records instead) and a clock fixed at the data's end.
    const deps: Omit<RouteDeps, 'runner'> = {
      schema: { database: db, cluster: undefined },
      now: () => BigInt(end) * 1_000_000_000n,
      pageMaxBytes: 8 * 1_048_576,
      settings: proc.ctx.settings,
    };
    // The API's statements as its route handlers build them, for an all-tenants key.
    const everyTenant: Principal = { name: 'bench', scopes: new Set(['read'] as const), tenants: '*' };
    const apiStatement = (c: Case, tenant: string): Promise<Statement> =>
      statementOf(deps, (d) => c.route(d, { principal: everyTenant, tenantId: tenant }, c.api(tenant).body));
    const window = (t: string): string =>
      `tenant_id = '${t}' AND timestamp >= fromUnixTimestamp64Nano(${start}000000000) AND timestamp < fromUnixTimestamp64Nano(${end}000000000)`;
    const cases: Case[] = [
      {
        name: 'logs page, body pattern',
        page: true,
        api: (t) => ({ path: `/v1/tenants/${t}/logs`, body: { startTime: start, endTime: end, body: '%timeout%' } }),
        route: (d, caller, body) => logPage(d, caller, decoded(LogRequest, body)),
        sql: (t) => `SELECT toString(toUnixTimestamp64Nano(timestamp)) AS ts_ns, log_id, trace_id, span_id, severity_number, service_name, body FROM ${db}.logs
          WHERE ${window(t)} AND body ILIKE '%timeout%' ORDER BY timestamp DESC, log_id DESC LIMIT 101`,
      },
      {
        name: 'traces page, name pattern + duration',
        page: true,
        api: (t) => ({
          path: `/v1/tenants/${t}/traces`,
          body: { startTime: start, endTime: end, spanName: '%checkout%', durationMin: 100_000_000, durationMax: 300_000_000 },
        }),
        route: (d, caller, body) => tracePage(d, caller, decoded(TraceRequest, body)),
        sql: (
          t,
        ) => `SELECT toString(toUnixTimestamp64Nano(timestamp)) AS ts_ns, trace_id, span_id, parent_span_id, span_name, toString(span_kind) AS span_kind, service_name,
          toString(duration_ns) AS duration, toString(status_code) AS status_code, status_message FROM ${db}.spans
          WHERE ${window(t)} AND span_name LIKE '%checkout%' AND duration_ns BETWEEN 100000000 AND 300000000
          ORDER BY timestamp DESC, trace_id DESC, span_id DESC LIMIT 101`,
      },
      {
        name: 'timeseries 1 h per minute, groupBy',
        page: false,
        api: (t) => ({
          path: `/v1/tenants/${t}/timeseries`,
          body: { startTime: lastHour, endTime: end, interval: 60, queries: { metrics: ['http.server.duration'], groupBy: ['service.name'], operator: 'avg' } },
        }),
        route: (d, caller, body) => timeseriesReport(d, caller, decoded(BoundedTimeseriesRequest, body)),
        // Same meaning as the API: service.name from the point, scope or resource attributes, else the column.
        sql: (
          t,
        ) => `SELECT multiIf(mapContains(attributes, 'service.name'), attributes['service.name'], mapContains(scope_attributes, 'service.name'), scope_attributes['service.name'],
            mapContains(resource_attributes, 'service.name'), resource_attributes['service.name'], service_name) AS service, intDiv(toUnixTimestamp64Milli(timestamp) - ${lastHour}000, 60000) AS b, avg(value) AS v
          FROM ${db}.metrics WHERE tenant_id = '${t}' AND metric_name = 'http.server.duration'
            AND timestamp >= fromUnixTimestamp64Nano(${lastHour}000000000) AND timestamp < fromUnixTimestamp64Nano(${end}000000000)
          GROUP BY service, b`,
      },
      {
        name: 'usage 30 days',
        page: false,
        api: (t) => ({ path: `/v1/tenants/${t}/usage`, body: { startTime: end - 30 * day, endTime: end } }),
        route: (d, caller, body) => usageReport(d, caller, decoded(UsageQuery, body)),
        // Accepted and refused units, as the API reports both.
        sql: (t) => `SELECT day, '', '', sum(log_records), sum(log_bytes), sum(spans), sum(metric_points), 0, 0 FROM ${db}.usage_daily
          WHERE tenant_id = '${t}' AND day >= toDate(${end - 30 * day}) AND day < toDate(${end}) GROUP BY day
          UNION ALL SELECT day, signal, reason, 0, 0, 0, 0, sum(items), sum(bytes) FROM ${db}.usage_rejected_daily
          WHERE tenant_id = '${t}' AND day >= toDate(${end - 30 * day}) AND day < toDate(${end}) GROUP BY day, signal, reason`,
      },
    ];
    console.log(`\n${iterations} iterations each, tenants rotated, variants interleaved; latency in ms`);
    console.log('API = HTTP round trip through Koa; API SQL = the SQL the API builds, run straight through the client; hand = SQL written by hand\n');
    console.log('query'.padEnd(40) + '   API p50/p95    API SQL p50/p95   hand p50/p95    API÷hand p50/p95');
    for (const c of cases) {
      // Built before timing, so the API SQL column times the statement alone.
      const statements = new Map<string, Statement>();
      for (let i = 0; i < tenants; i++) statements.set(`tenant-${i}`, await apiStatement(c, `tenant-${i}`));
      const [viaApi, apiSql, hand] = await measure([
        async (t) => {
          const { path, body } = c.api(t);
          const res = await post(agent, url + path, JSON.stringify(body));
          if (res.status !== 200) throw new Error(`${c.name}: HTTP ${res.status} ${res.text}`);
          JSON.parse(res.text);
        },
        async (t) => {
          const statement = statements.get(t);
          if (statement === undefined) throw new Error(`bug: no statement for ${t}`);
          const { sql, params } = statement;
          await (await store.client.query({ query: sql + apiSettings, query_params: params.values, format: 'JSONEachRow' })).json();
        },
        async (t) => {
          await (await store.client.query({ query: c.sql(t), format: 'JSONEachRow' })).json();
        },
      ]);
      if (viaApi === undefined || apiSql === undefined || hand === undefined) throw new Error('missing figures');
      const pair = (f: Figures): string => `${f.p50.toFixed(1).padStart(7)} ${f.p95.toFixed(1).padStart(7)}`;
      console.log(
        `${c.name.padEnd(40)}${pair(viaApi)}   ${pair(apiSql)}   ${pair(hand)}   ${(viaApi.p50 / hand.p50).toFixed(2).padStart(6)} ${(viaApi.p95 / hand.p95).toFixed(2).padStart(6)}` +
          (c.page && viaApi.p95 >= 200 ? '   p95 over 200 ms' : ''),
      );
    }
    agent.destroy();
    await api.stop();
    proc.stop();
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
