// The OTLP gateway component: OTLP/HTTP and OTLP/gRPC receivers in front of
// one ingest pipeline and one write-ahead-logged writer. stop() stops both
// listeners (in-flight requests finish once their rows are logged), then
// moves what the log holds into ClickHouse.
import { defaultListenerLimits } from '../src/ops/listener-limits.ts';
import { listenerMetrics } from '../src/ops/listener-metrics.ts';
import { listen } from '../src/ops/ops-listener.ts';
import type { ComponentContext, RunningComponent, StartGateway } from '../src/target/component.ts';
import type { GatewayConfig } from '../src/config/config.ts';
import { gatewayMetrics } from './gateway-metrics.ts';
import { IngestPipeline } from './ingest/ingest-pipeline.ts';
import { otlpHttpHandler } from './receivers/otlp-http-receiver.ts';
import { listenGrpc } from './receivers/otlp-grpc-receiver.ts';
import { defaultMaxInflightBytes, InflightBytes } from './receivers/inflight-bytes.ts';
import { clickHouseRowSink } from './writer/clickhouse-row-sink.ts';
import { LoggedWriter } from './writer/logged-writer.ts';
import type { RowSink } from './writer/row-sink.ts';

export interface RunningGateway extends RunningComponent {
  /** Resolves once every acknowledged row is in ClickHouse (tests, benchmarks). */
  flush(): Promise<void>;
}

/** Starts the gateway; `sink` replaces the ClickHouse writer port (tests). */
export async function startGatewayWith(ctx: ComponentContext, config: GatewayConfig, sink: RowSink): Promise<RunningGateway> {
  const log = ctx.log.child({ component: 'gateway' });
  const metrics = gatewayMetrics(ctx.registry, (condition, healthy, message) => {
    if (healthy) {
      ctx.readiness.done(condition);
      log.info('writes succeed again', { condition });
    } else {
      ctx.readiness.unready(condition);
      log.warn('writes fail; acknowledged rows stay in the write-ahead log', { condition, message });
    }
  });
  const writer = await LoggedWriter.open(sink, config.writer, metrics.writer);
  metrics.logBytesFrom(() => writer.logBytes);
  const pipeline = new IngestPipeline(writer, metrics, config.items);
  const limits = config.listener ?? defaultListenerLimits;
  const inflight = new InflightBytes(config.maxInflightBytes ?? defaultMaxInflightBytes);
  inflight.register(ctx.registry);
  const deps = { keys: ctx.keys, pipeline, metrics, log: ctx.log, maxRequestBytes: config.maxRequestBytes, inflight };
  const bodyTimeouts = listenerMetrics(ctx.registry).bodyTimeouts;
  const httpDeps = { ...deps, bodyTimeoutMs: limits.bodyTimeoutMs, onBodyTimeout: () => { bodyTimeouts.inc({ listener: 'otlp-http' }); } };
  let http;
  try {
    http = await listen({ handler: otlpHttpHandler(httpDeps), readiness: ctx.readiness, registry: ctx.registry, log: ctx.log, host: ctx.host, port: config.otlpHttpPort, name: 'otlp-http', limits });
  } catch (error) {
    await writer.stop();
    throw error;
  }
  const httpListener = http;
  let grpc;
  try {
    grpc = await listenGrpc(deps, ctx.host, config.otlpGrpcPort, limits, ctx.registry);
  } catch (error) {
    await httpListener.close();
    await writer.stop();
    throw error;
  }
  const grpcListener = grpc;
  return {
    name: 'gateway',
    ports: { otlpHttp: httpListener.port, otlpGrpc: grpcListener.port },
    flush: () => writer.flush(),
    stop: async () => {
      // Requests in flight are answered once logged; then the log goes to ClickHouse.
      await Promise.all([httpListener.close(), grpcListener.close()]);
      await writer.stop();
    },
  };
}

export const startGateway: StartGateway = (ctx: ComponentContext, config: GatewayConfig): Promise<RunningComponent> =>
  startGatewayWith(ctx, config, clickHouseRowSink(ctx.store, ctx.storeGate));
