// The OTLP gateway component: OTLP/HTTP and OTLP/gRPC receivers (and
// Prometheus remote write on the HTTP port, gateway/prometheus/) in front of
// one ingest pipeline and one write-ahead-logged writer, with per-tenant
// ingest limits shared by the replicas (gateway/limits/). Its ports open
// first (openGateway) and answer health while the process sets up and the
// log replays; stop() stops both listeners (in-flight requests finish once
// their rows are logged), then moves what the log holds into ClickHouse.
import { listenerMetrics } from '../src/ops/listener-metrics.ts';
import { listenEarly } from '../src/ops/ops-listener.ts';
import type { EarlyListener } from '../src/ops/ops-listener.ts';
import type { ComponentContext, OpenComponent, OpenGateway, PortContext, RunningComponent, StartGateway } from '../src/target/component.ts';
import type { GatewayConfig } from '../src/config/config.ts';
import type { Logger } from '../src/log/logger.ts';
import { clickHouseRejectedUsage } from './limits/clickhouse-rejected-usage.ts';
import { clickHouseReplicaRegistry } from './limits/clickhouse-replica-registry.ts';
import { IngestLimiter } from './limits/ingest-limiter.ts';
import { RejectedUsage, rejectedUsageFlushMs } from './limits/rejected-usage.ts';
import { ReplicaCount, replicaHeartbeatMs } from './limits/replica-count.ts';
import { gatewayMetrics } from './gateway-metrics.ts';
import { defaultDecodeGate, defaultOffloadMinBytes, IngestPipeline } from './ingest/ingest-pipeline.ts';
import { ConvertPool } from './convert/worker/convert-pool.ts';
import { otlpHttpHandler } from './receivers/otlp-http-receiver.ts';
import { clickHouseMetadataSink } from './prometheus/clickhouse-metadata-sink.ts';
import { ChangedMetadata } from './prometheus/metadata-sink.ts';
import { remoteWriteHandler, remoteWritePath } from './prometheus/remote-write-receiver.ts';
import { openGrpc } from './receivers/otlp-grpc-receiver.ts';
import type { GrpcPort } from './receivers/otlp-grpc-receiver.ts';
import { InflightBytes } from './receivers/inflight-bytes.ts';
import { clickHouseRowSink } from './writer/clickhouse-row-sink.ts';
import { LoggedWriter } from './writer/logged-writer.ts';
import type { RowSink } from './writer/row-sink.ts';

/** The ingest limits of this replica and what keeps them current; stop() ends the heartbeats and writes the last rejected sums. */
async function startLimits(ctx: ComponentContext, log: Logger): Promise<{ limiter: IngestLimiter; rejected: RejectedUsage; stop: () => Promise<void> }> {
  // Logged once per outage rather than every period.
  let failing = false;
  const replicas = new ReplicaCount(clickHouseReplicaRegistry(ctx.store), {
    periodMs: replicaHeartbeatMs,
    onFailure: (message) => {
      if (!failing) log.warn("cannot record this replica's heartbeat; ingest limits keep the last replica count", { message });
      failing = true;
    },
    onBeat: () => {
      limiter.sweep();
    },
  });
  const limiter = new IngestLimiter(ctx.settings, replicas);
  const rejected = new RejectedUsage(clickHouseRejectedUsage(ctx.store), {
    flushMs: rejectedUsageFlushMs,
    onFailure: (message) => {
      log.warn('cannot write rejected usage; kept for the next write', { message });
    },
  });
  await replicas.start();
  rejected.start();
  return {
    limiter,
    rejected,
    stop: async () => {
      await Promise.all([replicas.stop(), rejected.stop()]);
    },
  };
}

export interface RunningGateway extends RunningComponent {
  /** Resolves once every acknowledged row is in ClickHouse (tests, benchmarks). */
  flush(): Promise<void>;
}

/** The gateway's two ports, open before it is set up (health answers, data 503 / UNAVAILABLE). */
interface GatewayPorts {
  readonly http: EarlyListener;
  readonly grpc: GrpcPort;
}

async function openPorts(ctx: PortContext, config: GatewayConfig): Promise<GatewayPorts> {
  const limits = config.listener;
  const http = await listenEarly({
    readiness: ctx.readiness,
    registry: ctx.registry,
    log: ctx.log,
    host: ctx.host,
    port: config.otlpHttpPort,
    name: 'otlp-http',
    limits,
  });
  try {
    const grpc = await openGrpc({
      host: ctx.host,
      port: config.otlpGrpcPort,
      limits,
      maxRequestBytes: config.maxRequestBytes,
      readiness: ctx.readiness,
      registry: ctx.registry,
    });
    return { http, grpc };
  } catch (error) {
    await http.close();
    throw error;
  }
}

/** Sets the gateway up on its open ports: replays the write-ahead log, then hands the ports their handlers. */
async function startOn(ports: GatewayPorts, ctx: ComponentContext, config: GatewayConfig, sink: RowSink): Promise<RunningGateway> {
  const log = ctx.log.child({ component: 'gateway' });
  const metrics = gatewayMetrics(
    ctx.registry,
    (condition, healthy, message) => {
      if (healthy) {
        ctx.readiness.done(condition);
        log.info('writes succeed again', { condition });
      } else {
        ctx.readiness.unready(condition);
        log.warn('writes fail; acknowledged rows stay in the write-ahead log', { condition, message });
      }
    },
    config.metricsTenantLabels,
  );
  const writer = await LoggedWriter.open(sink, config.writer, metrics.writer);
  metrics.logBytesFrom(() => writer.logBytes);
  const ingestLimits = await startLimits(ctx, log);
  const pool = new ConvertPool({
    limits: config.items,
    settings: ctx.settings,
    onWorkerExit: (code, error) => {
      log.error('a conversion worker stopped; its request was answered unavailable and the worker replaced', { code, error: error?.stack ?? error?.message });
    },
  });
  const pipeline = new IngestPipeline({
    writer,
    metrics,
    items: config.items,
    limits: ingestLimits,
    settings: ctx.settings,
    gate: defaultDecodeGate(),
    pool,
    offloadMinBytes: defaultOffloadMinBytes,
  });
  const limits = config.listener;
  const inflight = new InflightBytes(config.maxInflightBytes);
  inflight.register(ctx.registry);
  const deps = { keys: ctx.keys, pipeline, metrics, log: ctx.log, maxRequestBytes: config.maxRequestBytes, inflight };
  const bodyTimeouts = listenerMetrics(ctx.registry).bodyTimeouts;
  const bodyDeps = {
    bodyTimeoutMs: limits.bodyTimeoutMs,
    onBodyTimeout: () => {
      bodyTimeouts.inc({ listener: 'otlp-http' });
    },
  };
  const remoteWrite = remoteWriteHandler({
    ...deps,
    ...bodyDeps,
    items: config.items,
    settings: ctx.settings,
    metadata: new ChangedMetadata(clickHouseMetadataSink(ctx.store)),
  });
  const httpDeps = { ...deps, ...bodyDeps, remoteWrite: { path: remoteWritePath, handler: remoteWrite } };
  ports.http.attach(otlpHttpHandler(httpDeps));
  ports.grpc.attach(deps);
  return {
    name: 'gateway',
    ports: { otlpHttp: ports.http.port, otlpGrpc: ports.grpc.port },
    flush: () => writer.flush(),
    stop: async () => {
      // Requests in flight are answered once logged; then the log goes to ClickHouse.
      await Promise.all([ports.http.close(), ports.grpc.close()]);
      await Promise.all([writer.stop(), ingestLimits.stop(), pipeline.stop()]);
    },
  };
}

/** Opens the gateway's ports; it starts (on ClickHouse through the process's store gate) once the process is set up. */
export const openGateway: OpenGateway = async (portCtx: PortContext, config: GatewayConfig): Promise<OpenComponent> => {
  const ports = await openPorts(portCtx, config);
  return {
    ports: { otlpHttp: ports.http.port, otlpGrpc: ports.grpc.port },
    start: (ctx) => startOn(ports, ctx, config, clickHouseRowSink(ctx.store, ctx.storeGate)),
    close: async () => {
      await Promise.all([ports.http.close(), ports.grpc.close()]);
    },
  };
};

/** Starts the gateway at once; `sink` replaces the ClickHouse writer port (tests). */
export async function startGatewayWith(ctx: ComponentContext, config: GatewayConfig, sink: RowSink): Promise<RunningGateway> {
  const ports = await openPorts(ctx, config);
  try {
    return await startOn(ports, ctx, config, sink);
  } catch (error) {
    await Promise.all([ports.http.close(), ports.grpc.close()]);
    throw error;
  }
}

export const startGateway: StartGateway = (ctx: ComponentContext, config: GatewayConfig): Promise<RunningComponent> =>
  startGatewayWith(ctx, config, clickHouseRowSink(ctx.store, ctx.storeGate));
