// npm run bench:ingest — end-to-end ingest throughput of the gateway against
// a naive reference pipeline, the gateway's CPU cost per span, insert
// formats, and memory under 4x overload. One run, bounded in time; every
// request is acknowledged only after its rows are inserted into embedded
// ClickHouse. Not a test: it prints figures (docs/gateway.md records them).
// `node bench/ingest.ts --conversion` prints only the in-process conversion
// figures (spans, log records and metric points per CPU-second, from protobuf
// and from OTLP/JSON), in seconds.
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Registry } from 'prom-client';
import { parseKeys } from '../src/auth/api-keys.ts';
import type { Principal } from '../src/auth/api-keys.ts';
import { migrate } from '../src/clickhouse/schema/migrator.ts';
import { insertRowBinary } from '../src/clickhouse/row-binary-insert.ts';
import { openStore } from '../src/clickhouse/store.ts';
import type { Store } from '../src/clickhouse/store.ts';
import { silentLogger } from '../src/log/logger.ts';
import { Readiness } from '../src/ops/readiness.ts';
import { openProcessContext } from '../src/target/process-context.ts';
import type { ProcessContext } from '../src/target/process-context.ts';
import { builtInDefaults } from '../src/tenant/settings/tenant-settings.ts';
import { startGatewayWith } from '../gateway/gateway.ts';
import type { RowConverter } from '../gateway/convert/common/row-converter.ts';
import { rowConverters } from '../gateway/convert/row-converters.ts';
import { TenantResolver } from '../gateway/convert/common/tenant-resolver.ts';
import { ExportLogsServiceRequest, ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../gateway/wire/otlp-messages.ts';
import { clickHouseRowSink, rowTargets } from '../gateway/writer/clickhouse-row-sink.ts';
import { logsRequest, metricsRequest, tracesRequest } from './ingest-payloads.ts';
import { gatewayConfig } from '../support/default-config.ts';

const phaseSeconds = Number(process.env['BENCH_SECONDS'] ?? 12);
/** `--conversion`: only the in-process conversion figures (seconds, no ClickHouse). */
const conversionOnly = process.argv.includes('--conversion');
const itemsPerRequest = 1000;
const clients = 4;
const key = 'bench-key-0123456789abcdef';

// ---------------------------------------------------------------- load and memory

class RssSampler {
  peak = 0;
  readonly #timer = setInterval(() => {
    this.peak = Math.max(this.peak, process.memoryUsage.rss());
  }, 50);
  stop(): number {
    clearInterval(this.#timer);
    return Math.max(this.peak, process.memoryUsage.rss());
  }
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function postOnce(url: string, body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${key}`, 'content-length': String(body.length) } },
      (res) => {
        res.resume();
        res.on('end', () => {
          resolve(res.statusCode ?? 0);
        });
      },
    );
    req.on('error', () => {
      resolve(0);
    });
    req.end(body);
  });
}

/**
 * cpuCores: CPU time of the whole process (clients, server, ClickHouse's threads) per second of
 * the phase, out of the machine's 2 cores; eventLoop: the share of the phase the JavaScript
 * thread was busy; cpuMicrosPerItem: the process's CPU time per acknowledged item.
 */
interface LoadResult {
  itemsPerSecond: number;
  statuses: Record<string, number>;
  peakRssMiB: number;
  p50ms: number;
  p99ms: number;
  cpuCores: number;
  eventLoop: number;
  cpuMicrosPerItem: number;
}

async function load(url: string, bodies: readonly Buffer[], concurrency: number, seconds: number): Promise<LoadResult> {
  const rss = new RssSampler();
  const cpu = process.cpuUsage();
  const loop = performance.eventLoopUtilization();
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  let acknowledged = 0;
  const deadline = Date.now() + seconds * 1000;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, c) => {
      for (let i = c; Date.now() < deadline; i++) {
        const t = performance.now();
        const status = await postOnce(url, bodies[i % bodies.length] ?? Buffer.alloc(0));
        latencies.push(performance.now() - t);
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === 200) acknowledged += itemsPerRequest;
        else await new Promise((r) => setTimeout(r, 50));
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => Math.round(latencies[Math.floor(q * (latencies.length - 1))] ?? 0);
  return {
    itemsPerSecond: Math.round(acknowledged / elapsed),
    statuses,
    peakRssMiB: Math.round(rss.stop() / 2 ** 20),
    p50ms: at(0.5),
    p99ms: at(0.99),
    cpuCores: round2(cpuSeconds / elapsed),
    eventLoop: round2(performance.eventLoopUtilization(loop).utilization),
    cpuMicrosPerItem: Math.round((cpuSeconds * 1e6) / Math.max(1, acknowledged)),
  };
}

// ---------------------------------------------------------------- the naive reference pipeline

type Attrs = { key?: string | null; value?: { stringValue?: string | null; intValue?: number | { toString(): string } | null } | null }[] | null | undefined;
const map = (a: Attrs): Record<string, string> =>
  Object.fromEntries((a ?? []).map((kv) => [kv.key ?? '', kv.value?.stringValue ?? kv.value?.intValue?.toString() ?? '']));
const hex = (b: Uint8Array | null | undefined): string => Buffer.from(b ?? []).toString('hex');
const ns = (v: number | { toString(): string } | null | undefined): string => (v ?? 0).toString();

/** protobufjs decode → row objects → one JSONEachRow insert per request (client.insert). */
async function startReference(store: Store): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const handle = async (): Promise<void> => {
        if (req.url === '/v1/traces') {
          const rows = ExportTraceServiceRequest.decode(body).resourceSpans.flatMap((rs) => {
            const resource = map(rs.resource?.attributes);
            return (rs.scopeSpans ?? []).flatMap((ss) =>
              (ss.spans ?? []).map((s) => ({
                tenant_id: resource['tenant.id'] ?? '',
                timestamp: ns(s.startTimeUnixNano),
                trace_id: hex(s.traceId),
                span_id: hex(s.spanId),
                parent_span_id: hex(s.parentSpanId),
                span_name: s.name,
                span_kind: s.kind,
                service_name: resource['service.name'] ?? '',
                duration_ns: String(BigInt(ns(s.endTimeUnixNano)) - BigInt(ns(s.startTimeUnixNano))),
                status_code: s.status?.code ?? 0,
                status_message: s.status?.message ?? '',
                resource_attributes: resource,
                scope_name: ss.scope?.name ?? '',
                span_attributes: map(s.attributes),
                event_timestamps: (s.events ?? []).map((e) => ns(e.timeUnixNano)),
                event_names: (s.events ?? []).map((e) => e.name),
                event_attributes: (s.events ?? []).map((e) => map(e.attributes)),
              })),
            );
          });
          await store.client.insert({ table: `${store.database}.spans`, values: rows, format: 'JSONEachRow' });
        } else {
          const rows = ExportLogsServiceRequest.decode(body).resourceLogs.flatMap((rl) => {
            const resource = map(rl.resource?.attributes);
            return (rl.scopeLogs ?? []).flatMap((sl) =>
              (sl.logRecords ?? []).map((l, i) => ({
                tenant_id: resource['tenant.id'] ?? '',
                timestamp: ns(l.timeUnixNano),
                observed_timestamp: ns(l.observedTimeUnixNano),
                log_id: `${Date.now()}-${i}`,
                trace_id: hex(l.traceId),
                span_id: hex(l.spanId),
                severity_number: l.severityNumber,
                severity_text: l.severityText,
                service_name: resource['service.name'] ?? '',
                body: l.body?.stringValue ?? '',
                resource_attributes: resource,
                scope_name: sl.scope?.name ?? '',
                log_attributes: map(l.attributes),
              })),
            );
          });
          await store.client.insert({ table: `${store.database}.logs`, values: rows, format: 'JSONEachRow' });
        }
        res.writeHead(200).end();
      };
      handle().catch(() => {
        res.writeHead(503).end();
      });
    });
  });
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

// ---------------------------------------------------------------- CPU cost and insert formats

function spansPerCpuSecond(bodies: readonly Buffer[], convert: (body: Buffer) => void, seconds: number): number {
  for (let i = 0; i < 30; i++) convert(bodies[i % bodies.length] ?? Buffer.alloc(0));
  const cpu = process.cpuUsage();
  const until = Date.now() + seconds * 1000;
  let items = 0;
  while (Date.now() < until)
    for (const body of bodies) {
      convert(body);
      items += itemsPerRequest;
    }
  const used = process.cpuUsage(cpu);
  return Math.round(items / ((used.user + used.system) / 1e6));
}

const principal: Principal = { name: 'bench', scopes: new Set(['ingest']), tenants: '*' };

const converters = rowConverters();

/** The rows of one request, converted as the gateway converts it. */
function rowsOf(converter: RowConverter, body: Buffer): Buffer {
  const result = converter.convert(body, new TenantResolver(principal));
  if (!result.ok) throw new Error(result.error);
  return result.value.rows;
}

const hexIds = new Set(['traceId', 'spanId', 'parentSpanId']);

/** A protobuf request body as the OTLP/JSON an SDK sends: ids in hex, 64-bit integers as strings, enums as numbers. */
function otlpJson(decode: (body: Buffer) => Record<string, unknown>, body: Buffer): Buffer {
  return Buffer.from(
    JSON.stringify(decode(body), (key, value: unknown) =>
      hexIds.has(key) && typeof value === 'string' ? Buffer.from(value, 'base64').toString('hex') : value,
    ),
  );
}
const jsonOptions = { longs: String, enums: Number, bytes: String };
const tracesJson = (b: Buffer): Buffer => otlpJson((x) => ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(x), jsonOptions), b);
const logsJson = (b: Buffer): Buffer => otlpJson((x) => ExportLogsServiceRequest.toObject(ExportLogsServiceRequest.decode(x), jsonOptions), b);
const metricsJson = (b: Buffer): Buffer => otlpJson((x) => ExportMetricsServiceRequest.toObject(ExportMetricsServiceRequest.decode(x), jsonOptions), b);

/**
 * The gateway's conversion alone, in process: items converted to rows per CPU-second of this
 * thread's process, from protobuf and from OTLP/JSON bodies of the same requests.
 */
function conversionFigures(
  traces: readonly Buffer[],
  logs: readonly Buffer[],
  metrics: readonly Buffer[],
  print: (label: string, value: unknown) => void,
): void {
  print(
    'gateway cpu: spans per cpu-second',
    spansPerCpuSecond(
      traces,
      (b) => {
        rowsOf(converters.traces.protobuf, b);
      },
      4,
    ),
  );
  print(
    'gateway cpu: logs per cpu-second',
    spansPerCpuSecond(
      logs,
      (b) => {
        rowsOf(converters.logs.protobuf, b);
      },
      4,
    ),
  );
  print(
    'gateway cpu: points per cpu-second',
    spansPerCpuSecond(
      metrics,
      (b) => {
        rowsOf(converters.metrics.protobuf, b);
      },
      4,
    ),
  );
  print(
    'gateway cpu: json spans per cpu-s',
    spansPerCpuSecond(
      traces.map(tracesJson),
      (b) => {
        rowsOf(converters.traces.json, b);
      },
      4,
    ),
  );
  print(
    'gateway cpu: json logs per cpu-s',
    spansPerCpuSecond(
      logs.map(logsJson),
      (b) => {
        rowsOf(converters.logs.json, b);
      },
      4,
    ),
  );
  print(
    'gateway cpu: json points per cpu-s',
    spansPerCpuSecond(
      metrics.map(metricsJson),
      (b) => {
        rowsOf(converters.metrics.json, b);
      },
      4,
    ),
  );
}

/**
 * Waits until ClickHouse has had no merge running for a second (at most 30 s), so that a
 * load phase does not pay for the merges of the parts the phase before it wrote.
 */
async function settleMerges(store: Store): Promise<void> {
  const until = Date.now() + 30_000;
  for (let quiet = 0; quiet < 5 && Date.now() < until;) {
    const rows = await (await store.client.query({ query: 'SELECT count() AS n FROM system.merges', format: 'JSONEachRow' })).json<{ n: string | number }>();
    quiet = Number(rows[0]?.n) === 0 ? quiet + 1 : 0;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The process's CPU time per span row that embedded ClickHouse spends on the gateway's
 * INSERTs (RowBinary through file(), the spans table with its views and indexes), with the
 * table's background merges stopped and running; 60 INSERTs of `rowsPerInsert` rows, merges
 * waited for. No HTTP and no conversion: the rows are converted before the clock starts.
 */
async function clickHouseMicrosPerRow(store: Store, rows: readonly Buffer[], rowsPerInsert: number, merges: boolean): Promise<number> {
  if (!merges) await store.client.command({ query: `SYSTEM STOP MERGES ${store.database}.spans` });
  await settleMerges(store);
  const perInsert = rowsPerInsert / itemsPerRequest;
  const cpu = process.cpuUsage();
  for (let i = 0; i < 60; i++)
    await insertRowBinary(
      store,
      rowTargets.spans,
      Array.from({ length: perInsert }, (_, k) => rows[(i * perInsert + k) % rows.length] ?? Buffer.alloc(0)),
    );
  await settleMerges(store);
  const used = process.cpuUsage(cpu);
  return Math.round(((used.user + used.system) / (60 * rowsPerInsert)) * 10) / 10;
}

/** Rows per second of back-to-back INSERTs of the same rows. */
async function insertRowsPerSecond(rows: number, seconds: number, insert: () => Promise<void>): Promise<number> {
  const until = Date.now() + seconds * 1000;
  let inserted = 0;
  const started = Date.now();
  while (Date.now() < until) {
    await insert();
    inserted += rows;
  }
  return Math.round(inserted / ((Date.now() - started) / 1000));
}

// ---------------------------------------------------------------- main

async function database(base: Store, name: string): Promise<Store> {
  const store: Store = { ...base, database: name, close: () => Promise.resolve() };
  const migrated = await migrate(store, { logsDays: 30, tracesDays: 30, metricsDays: 30 }, silentLogger);
  if (!migrated.ok) throw new Error(migrated.error.message);
  return store;
}

async function main(): Promise<void> {
  if (conversionOnly) {
    const payloads = (make: typeof tracesRequest): Buffer[] => Array.from({ length: 8 }, (_, i) => make(itemsPerRequest, `tenant-${i % 3}`, i * 1000));
    conversionFigures(payloads(tracesRequest), payloads(logsRequest), payloads(metricsRequest), (label, value) => {
      process.stdout.write(`${label.padEnd(34)} ${JSON.stringify(value)}\n`);
    });
    return;
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'tenantry-bench-'));
  const opened = await openStore({ kind: 'embedded', dataDir, database: 'bench' });
  if (!opened.ok) throw new Error(opened.error);
  const keys = parseKeys(JSON.stringify([{ key, scopes: ['ingest'], tenants: ['*'] }]), 'bench');
  if (!keys.ok) throw new Error(keys.error);
  const traces = Array.from({ length: 8 }, (_, i) => tracesRequest(itemsPerRequest, `tenant-${i % 3}`, i * 1000));
  const logs = Array.from({ length: 8 }, (_, i) => logsRequest(itemsPerRequest, `tenant-${i % 3}`, i * 1000));
  const metrics = Array.from({ length: 8 }, (_, i) => metricsRequest(itemsPerRequest, `tenant-${i % 3}`, i * 1000));
  const out: Record<string, unknown> = {
    phaseSeconds,
    itemsPerRequest,
    clients,
    requestBytes: { traces: traces[0]?.length, logs: logs[0]?.length, metrics: metrics[0]?.length },
  };
  const print = (label: string, value: unknown): void => {
    out[label] = value;
    process.stdout.write(`${label.padEnd(34)} ${JSON.stringify(value)}\n`);
  };

  try {
    // The gateway, as in production (group commit, direct converters, RowBinary inserts), and the
    // reference, alternated twice so that a burst of load from other processes does not decide the result.
    const gwStore = await database(opened.value, 'bench_gateway');
    const logDir = mkdtempSync(join(tmpdir(), 'tenantry-bench-wal-'));
    const config = gatewayConfig({
      maxRequestBytes: 16 * 2 ** 20,
      writer: { maxBatchRows: 100_000, maxBatchBytes: 64 * 2 ** 20, maxBatchDelayMs: 1000, maxLogBytes: 2 ** 30, logDir },
    });
    const processOf = (store: Store): Promise<ProcessContext> =>
      openProcessContext(store, {
        host: '127.0.0.1',
        keys: keys.value,
        log: silentLogger,
        readiness: new Readiness([]),
        registry: new Registry(),
        settings: { defaults: builtInDefaults, refreshMs: 5000 },
      });
    const gwProcess = await processOf(gwStore);
    const gateway = await startGatewayWith(gwProcess.ctx, config, clickHouseRowSink(gwStore));
    const gwUrl = `http://127.0.0.1:${gateway.ports['otlpHttp'] ?? 0}`;
    const refStore = await database(opened.value, 'bench_reference');
    const reference = await startReference(refStore);
    const best: Record<string, LoadResult> = {};
    for (const round of [1, 2]) {
      for (const [name, url, bodies] of [
        ['gateway spans/s', `${gwUrl}/v1/traces`, traces],
        ['reference spans/s', `${reference.url}/v1/traces`, traces],
        ['gateway log records/s', `${gwUrl}/v1/logs`, logs],
        ['reference log records/s', `${reference.url}/v1/logs`, logs],
      ] as const) {
        await settleMerges(opened.value);
        const result = await load(url, bodies, clients, phaseSeconds / 2);
        print(`${name} (round ${round})`, result);
        if ((best[name]?.itemsPerSecond ?? -1) < result.itemsPerSecond) best[name] = result;
      }
    }
    for (const [name, result] of Object.entries(best)) print(`best ${name}`, result);
    await gateway.stop();
    gwProcess.stop();
    await reference.close();

    // 4x overload: 16 clients against a gateway whose write-ahead log is bounded at 64 MiB.
    const overStore = await database(opened.value, 'bench_overload');
    const overProcess = await processOf(overStore);
    const overloaded = await startGatewayWith(
      overProcess.ctx,
      { ...config, writer: { ...config.writer, maxLogBytes: 64 * 2 ** 20, logDir: join(logDir, 'overload') } },
      clickHouseRowSink(overStore),
    );
    print('overload 4x spans/s (log 64 MiB)', await load(`http://127.0.0.1:${overloaded.ports['otlpHttp'] ?? 0}/v1/traces`, traces, clients * 4, phaseSeconds));
    await overloaded.stop();
    overProcess.stop();
    rmSync(logDir, { recursive: true, force: true });

    conversionFigures(traces, logs, metrics, print);

    // Where an end-to-end span's CPU goes: ClickHouse's INSERT and its merges (shared by both
    // pipelines, as both write the same tables) against the gateway's own conversion.
    const spanRowChunks = traces.map((b) => rowsOf(converters.traces.protobuf, b));
    for (const rowsPerInsert of [2000, 4000, 8000]) {
      const insertOnly = await clickHouseMicrosPerRow(await database(opened.value, `bench_cpu_${rowsPerInsert}_nomerge`), spanRowChunks, rowsPerInsert, false);
      const withMerges = await clickHouseMicrosPerRow(await database(opened.value, `bench_cpu_${rowsPerInsert}`), spanRowChunks, rowsPerInsert, true);
      print(`clickhouse cpu µs/span row, ${rowsPerInsert}/insert`, {
        insert: insertOnly,
        merges: Math.round((withMerges - insertOnly) * 10) / 10,
        total: withMerges,
      });
    }

    // Insert formats, same 10,000 span rows: RowBinary as the gateway writes it, and the
    // JSONEachRow ClickHouse renders from those rows (the format of the previous gateway).
    const sample = Buffer.concat(Array.from({ length: 10 }, (_, i) => rowsOf(converters.traces.protobuf, traces[i % traces.length] ?? Buffer.alloc(0))));
    const formatStore = await database(opened.value, 'bench_formats');
    const spans = rowTargets.spans;
    await formatStore.client.command({ query: `CREATE TABLE ${formatStore.database}.staging AS ${formatStore.database}.spans` });
    await insertRowBinary(formatStore, { ...spans, table: 'staging' }, [sample]);
    const json = await (
      await formatStore.client.query({ query: `SELECT ${spans.columns.join(', ')} FROM ${formatStore.database}.staging`, format: 'JSONEachRow' })
    ).text();
    print('insert RowBinary rows/s', await insertRowsPerSecond(10_000, 5, () => insertRowBinary(formatStore, spans, [sample])));
    print(
      'insert JSONEachRow rows/s',
      await insertRowsPerSecond(10_000, 5, async () => {
        const result = await formatStore.client.exec({ query: `INSERT INTO ${formatStore.database}.spans FORMAT JSONEachRow`, values: Readable.from([json]) });
        result.stream.resume();
      }),
    );
    const ratio = (signal: string): number => round2((best[`gateway ${signal}`]?.itemsPerSecond ?? 0) / (best[`reference ${signal}`]?.itemsPerSecond ?? 1));
    print('speed-up vs reference (spans, best)', ratio('spans/s'));
    print('speed-up vs reference (logs, best)', ratio('log records/s'));
    // The whole process's CPU time per span that 2.5x the reference would allow, at the cores the
    // gateway phase used: compare with the ClickHouse figures above.
    const gatewaySpans = best['gateway spans/s'];
    print('cpu µs/span allowed at 2.5x (spans)', Math.round(((gatewaySpans?.cpuCores ?? 0) * 1e6) / (2.5 * (best['reference spans/s']?.itemsPerSecond ?? 1))));
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    await opened.value.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
