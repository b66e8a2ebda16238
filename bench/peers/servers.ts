// Starts and stops the systems bench:peers compares, each as a user would
// run it on one machine: Tenantry `all` (embedded ClickHouse); VictoriaLogs
// and VictoriaMetrics single-node; Jaeger v2 with its Badger store; and
// Prometheus with its OTLP receiver. Every listener is bound to 127.0.0.1
// (each program's defaults are wildcard addresses, so each is set), on free
// ports, with the data in one temp dir.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeFlags } from '../../src/target/node-flags.ts';
import { freePorts, spawnReady, stopper, tailOf } from '../../support/server-process.ts';
import type { RunningServer as BaseServer } from '../../support/server-process.ts';

export { freePort, freePorts, spawnReady } from '../../support/server-process.ts';

export type SystemName = 'tenantry' | 'victoria-logs' | 'jaeger' | 'prometheus' | 'victoria-metrics';

export interface RunningServer extends BaseServer {
  readonly name: SystemName;
}
export interface Tenantry extends RunningServer {
  readonly name: 'tenantry';
  readonly otlpUrl: string;
  readonly apiUrl: string;
  readonly key: string;
}
/** VictoriaLogs, VictoriaMetrics or Prometheus: one HTTP port for ingest, queries and its admin calls. */
export interface HttpPeer extends RunningServer {
  readonly url: string;
}
export interface Jaeger extends RunningServer {
  readonly name: 'jaeger';
  readonly otlpUrl: string;
  readonly queryUrl: string;
}

/** The checkout whose Tenantry this bench runs: this one unless told otherwise. */
export const defaultTenantryRoot = join(import.meta.dirname, '..', '..');

/**
 * Tenantry `all` as `npm start` runs it (`node src/cli.ts all` of the checkout at `root`),
 * embedded ClickHouse in `dir`, ports 0, one API key for ingest and read, no TENANTRY_*
 * variable inherited (BENCH_TENANTRY_* ones are passed on without their prefix).
 */
export async function startTenantryAll(root: string, dir: string, timeoutMs = 180_000): Promise<Tenantry> {
  mkdirSync(dir, { recursive: true });
  const key = 'bench-peers-key-0123456789abcdef';
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TENANTRY_')) env[k] = v;
  // BENCH_TENANTRY_X=v sets TENANTRY_X=v for Tenantry (A/B of a setting in one checkout).
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k.startsWith('BENCH_TENANTRY_')) env[k.slice('BENCH_'.length)] = v;
  Object.assign(env, {
    TENANTRY_HOST: '127.0.0.1',
    TENANTRY_DATA_DIR: dir,
    TENANTRY_OTLP_HTTP_PORT: '0',
    TENANTRY_OTLP_GRPC_PORT: '0',
    TENANTRY_API_PORT: '0',
    TENANTRY_API_KEYS: JSON.stringify([{ key, scopes: ['ingest', 'read'], tenants: ['*'] }]),
  });
  const logFile = join(dir, 'output.log');
  const out = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(process.execPath, [...nodeFlags, join(root, 'src', 'cli.ts'), 'all'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr.pipe(out, { end: false });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  const stop = stopper(child, out, 60_000);
  const tail = (): string => tailOf(logFile);
  // Its JSON log lines go to the log file; the "tenantry started" line carries the ports.
  const ports = await new Promise<Record<string, number>>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => {
      reject(new Error(`tenantry not started within ${timeoutMs} ms:\n${tail()}`));
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out.write(chunk);
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const text = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          const line = JSON.parse(text) as { msg?: unknown; ports?: Record<string, number> };
          if (line.msg === 'tenantry started' && line.ports !== undefined) {
            clearTimeout(timer);
            resolve(line.ports);
          }
        } catch {
          // not a JSON line
        }
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`tenantry exited (${child.exitCode ?? child.signalCode}) before it started:\n${tail()}`));
    });
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return {
    name: 'tenantry',
    pid: child.pid ?? 0,
    dataDir: dir,
    key,
    tail,
    stop,
    otlpUrl: `http://127.0.0.1:${ports['otlpHttp'] ?? 0}`,
    apiUrl: `http://127.0.0.1:${ports['api'] ?? 0}`,
  };
}

/**
 * VictoriaLogs single-node: `-httpListenAddr` (default `:9428`) on loopback; its other
 * listeners (syslog, …) are off unless given. Multi-tenant through the AccountID and
 * ProjectID headers; OTLP logs at /insert/opentelemetry/v1/logs.
 */
export async function startVictoriaLogs(binary: string, dir: string): Promise<HttpPeer> {
  mkdirSync(dir, { recursive: true });
  const { http } = await freePorts(['http']);
  const args = [
    `-httpListenAddr=127.0.0.1:${http}`,
    `-storageDataPath=${join(dir, 'data')}`,
    '-retentionPeriod=30d',
    '-inmemoryDataFlushInterval=1s',
    '-loggerLevel=WARN',
  ];
  const url = `http://127.0.0.1:${http}`;
  const { child, tail, stop } = await spawnReady('victoria-logs', binary, args, dir, `${url}/health`);
  return { name: 'victoria-logs', pid: child.pid ?? 0, dataDir: join(dir, 'data'), url, tail, stop };
}

/**
 * VictoriaMetrics single-node: `-httpListenAddr` (default `:8428`) on loopback; graphite,
 * influx and opentsdb listeners are off unless given. OTLP metrics at
 * /opentelemetry/v1/metrics.
 */
export async function startVictoriaMetrics(binary: string, dir: string): Promise<HttpPeer> {
  mkdirSync(dir, { recursive: true });
  const { http } = await freePorts(['http']);
  const args = [
    `-httpListenAddr=127.0.0.1:${http}`,
    `-storageDataPath=${join(dir, 'data')}`,
    '-retentionPeriod=30d',
    '-inmemoryDataFlushInterval=1s',
    '-loggerLevel=WARN',
  ];
  const url = `http://127.0.0.1:${http}`;
  const { child, tail, stop } = await spawnReady('victoria-metrics', binary, args, dir, `${url}/health`);
  return { name: 'victoria-metrics', pid: child.pid ?? 0, dataDir: join(dir, 'data'), url, tail, stop };
}

/** What a Prometheus accepts besides OTLP: remote write 1.0 at /api/v1/write (`--web.enable-remote-write-receiver`). */
export interface PrometheusOptions {
  readonly remoteWriteReceiver?: boolean;
}

/**
 * Prometheus with its OTLP receiver (`--web.enable-otlp-receiver`, /api/v1/otlp/v1/metrics),
 * `--web.listen-address` (default `0.0.0.0:9090`) on loopback, nothing scraped.
 */
export async function startPrometheus(binary: string, dir: string, o: PrometheusOptions = {}): Promise<HttpPeer> {
  mkdirSync(dir, { recursive: true });
  const { http } = await freePorts(['http']);
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, 'global:\n  scrape_interval: 1h\nscrape_configs: []\n');
  const args = [
    `--config.file=${config}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${http}`,
    '--web.enable-otlp-receiver',
    ...(o.remoteWriteReceiver === true ? ['--web.enable-remote-write-receiver'] : []),
    '--log.level=warn',
  ];
  const url = `http://127.0.0.1:${http}`;
  const { child, tail, stop } = await spawnReady('prometheus', binary, args, dir, `${url}/-/ready`);
  return { name: 'prometheus', pid: child.pid ?? 0, dataDir: join(dir, 'data'), url, tail, stop };
}

/**
 * Jaeger v2 (an OpenTelemetry Collector build) from a YAML config: the OTLP
 * receiver, the Badger store in `dir`, the query service, and the health check.
 * Each listener's default is a wildcard address (4317/4318, 16685/16686, 13133),
 * so every one is set to 127.0.0.1; its own metrics are off (`level: none`).
 * Badger keeps tenants apart only with multi-tenancy, which the Badger store
 * does not offer: every tenant's spans go to one store.
 */
export async function startJaeger(binary: string, dir: string): Promise<Jaeger> {
  mkdirSync(dir, { recursive: true });
  const ports = await freePorts(['otlpGrpc', 'otlpHttp', 'queryGrpc', 'queryHttp', 'health']);
  const store = join(dir, 'badger');
  const config = `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${ports.health}
  jaeger_query:
    storage:
      traces: bench_store
    http:
      endpoint: 127.0.0.1:${ports.queryHttp}
    grpc:
      endpoint: 127.0.0.1:${ports.queryGrpc}
  jaeger_storage:
    backends:
      bench_store:
        badger:
          directories:
            keys: ${join(store, 'keys')}
            values: ${join(store, 'values')}
          ephemeral: false
          ttl:
            spans: 720h
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${ports.otlpGrpc}
      http:
        endpoint: 127.0.0.1:${ports.otlpHttp}
processors:
  batch:
exporters:
  jaeger_storage_exporter:
    trace_storage: bench_store
`;
  const file = join(dir, 'jaeger.yaml');
  writeFileSync(file, config);
  const { child, tail, stop } = await spawnReady('jaeger', binary, [`--config=${file}`], dir, `http://127.0.0.1:${ports.health}/status`);
  return {
    name: 'jaeger',
    pid: child.pid ?? 0,
    dataDir: store,
    tail,
    stop,
    otlpUrl: `http://127.0.0.1:${ports.otlpHttp}`,
    queryUrl: `http://127.0.0.1:${ports.queryHttp}`,
  };
}
