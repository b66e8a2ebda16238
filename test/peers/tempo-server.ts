// The real Tempo single binary as the differential tests and the benchmarks
// run it (../shared/LOKI-TEMPO.md records why each setting is there): local
// block storage, X-Scope-OrgID tenants, an OTLP/HTTP receiver, ingestion
// limits raised, rings in memory, everything on 127.0.0.1 and free ports.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePorts, spawnReady } from './server-process.ts';
import type { RunningServer } from './server-process.ts';

export interface Tempo extends RunningServer { readonly name: 'tempo'; readonly url: string; readonly otlpUrl: string }

export interface TempoOptions {
  /**
   * How long a trace receives no span before it leaves the live-trace map
   * (Tempo's default 10 s). TraceQL and tag search see a trace only after
   * that, so the differential tests set about a second.
   */
  readonly traceIdlePeriod?: string;
}

const mib = 2 ** 20;

/** Tempo's configuration for a data dir and ports (JSON is YAML). */
export function tempoConfig(dir: string, ports: { http: number; grpc: number; otlp: number; gossip: number }, options: TempoOptions = {}): Record<string, unknown> {
  const inMemoryRing = { kvstore: { store: 'inmemory' } };
  const idle = options.traceIdlePeriod === undefined ? {} : { trace_idle_period: options.traceIdlePeriod, flush_check_period: options.traceIdlePeriod };
  return {
    multitenancy_enabled: true,
    server: {
      http_listen_address: '127.0.0.1', http_listen_port: ports.http, grpc_listen_address: '127.0.0.1', grpc_listen_port: ports.grpc, log_level: 'warn',
      grpc_server_max_recv_msg_size: 64 * mib, grpc_server_max_send_msg_size: 64 * mib,
    },
    distributor: {
      receivers: { otlp: { protocols: { http: { endpoint: `127.0.0.1:${ports.otlp}` } } } },
      ring: { ...inMemoryRing, instance_addr: '127.0.0.1' },
    },
    ingester: { lifecycler: { address: '127.0.0.1', ring: { ...inMemoryRing, replication_factor: 1 }, min_ready_duration: '0s', final_sleep: '0s' }, ...idle },
    metrics_generator: { ring: { ...inMemoryRing, instance_addr: '127.0.0.1' } },
    memberlist: { bind_addr: ['127.0.0.1'], bind_port: ports.gossip, advertise_addr: '127.0.0.1', advertise_port: ports.gossip },
    storage: { trace: { backend: 'local', wal: { path: join(dir, 'wal') }, local: { path: join(dir, 'blocks') } } },
    overrides: { defaults: { ingestion: { rate_limit_bytes: 4 * 2 ** 30, burst_size_bytes: 8 * 2 ** 30, max_traces_per_user: 0 } } },
    usage_report: { reporting_enabled: false },
  };
}

/** Starts Tempo with its data in `dir`; resolves once /ready answers 200. */
export async function startTempo(binary: string, dir: string, options: TempoOptions = {}): Promise<Tempo> {
  mkdirSync(dir, { recursive: true });
  const ports = await freePorts(['http', 'grpc', 'otlp', 'gossip']);
  const configFile = join(dir, 'tempo.yaml');
  writeFileSync(configFile, JSON.stringify(tempoConfig(dir, ports, options), null, 2));
  const url = `http://127.0.0.1:${ports.http}`;
  const started = await spawnReady('tempo', binary, [`-config.file=${configFile}`, '-target=all'], dir, `${url}/ready`);
  return { name: 'tempo', pid: started.child.pid ?? 0, dataDir: dir, url, otlpUrl: `http://127.0.0.1:${ports.otlp}`, tail: started.tail, stop: started.stop };
}
