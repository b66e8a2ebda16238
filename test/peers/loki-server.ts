// A real Loki single binary for the differential tests and the benchmarks:
// filesystem chunks and TSDB index, multi-tenancy on (X-Scope-OrgID), limits
// raised so they never throttle, results caches off, loopback only, free
// ports, its data and output in one directory. ../../../shared/LOKI-TEMPO.md
// records why each setting is there.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts, spawnReady } from './server-process.ts';

export interface LokiServer {
  readonly name: 'loki';
  readonly pid: number;
  readonly dataDir: string;
  /** http://127.0.0.1:<port>: the query API under /loki/api/v1, OTLP logs at /otlp/v1/logs. */
  readonly url: string;
  /** Last lines of its output, for an error message. */
  tail(): string;
  stop(): Promise<void>;
}

const mib = 2 ** 20;

/** Loki's configuration: everything on loopback under `dir`. */
export function lokiConfig(dir: string, http: number, grpc: number): Record<string, unknown> {
  return {
    auth_enabled: true,
    server: {
      http_listen_address: '127.0.0.1', http_listen_port: http, grpc_listen_address: '127.0.0.1', grpc_listen_port: grpc, log_level: 'warn',
      grpc_server_max_recv_msg_size: 64 * mib, grpc_server_max_send_msg_size: 64 * mib,
    },
    common: {
      instance_addr: '127.0.0.1', path_prefix: dir, replication_factor: 1, ring: { kvstore: { store: 'inmemory' } },
      storage: { filesystem: { chunks_directory: join(dir, 'chunks'), rules_directory: join(dir, 'rules') } },
    },
    schema_config: { configs: [{ from: '2020-10-24', store: 'tsdb', object_store: 'filesystem', schema: 'v13', index: { prefix: 'index_', period: '24h' } }] },
    ingester: { lifecycler: { min_ready_duration: '0s', final_sleep: '0s' } },
    ingester_client: { grpc_client_config: { max_send_msg_size: 64 * mib, max_recv_msg_size: 64 * mib } },
    limits_config: {
      ingestion_rate_mb: 4096, ingestion_burst_size_mb: 8192, per_stream_rate_limit: '2GB', per_stream_rate_limit_burst: '4GB',
      max_query_series: 100_000,
      // Old test data is accepted (the differential test writes an hour back).
      reject_old_samples: false,
    },
    query_range: {
      cache_results: false, cache_index_stats_results: false, cache_volume_results: false,
      cache_series_results: false, cache_label_results: false, cache_instant_metric_results: false,
    },
    frontend: { encoding: 'protobuf' },
    pattern_ingester: { enabled: false },
    analytics: { reporting_enabled: false },
  };
}

/** Starts Loki (`-target=all`) and resolves when GET /ready answers 200. */
export async function startLoki(binary: string, dir: string, timeoutMs = 120_000): Promise<LokiServer> {
  mkdirSync(dir, { recursive: true });
  const { http, grpc } = await freePorts(['http', 'grpc']);
  const configFile = join(dir, 'loki.yaml');
  writeFileSync(configFile, JSON.stringify(lokiConfig(dir, http, grpc), null, 2));
  const url = `http://127.0.0.1:${http}`;
  const started = await spawnReady('loki', binary, [`-config.file=${configFile}`, '-target=all'], dir, `${url}/ready`, timeoutMs);
  return { name: 'loki', pid: started.child.pid ?? 0, dataDir: dir, url, tail: started.tail, stop: started.stop };
}
