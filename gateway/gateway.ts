// The OTLP gateway component: OTLP/HTTP and OTLP/gRPC receivers in front of
// one ingest pipeline and one write-ahead-logged writer. stop() stops both
// listeners (in-flight requests finish once their rows are logged), then
// moves what the log holds into ClickHouse.
import { listen } from '../src/ops/ops-listener.ts';
import type { ComponentContext, RunningComponent, StartGateway } from '../src/target/component.ts';
import type { GatewayConfig } from '../src/config/config.ts';
import { gatewayMetrics } from './gateway-metrics.ts';
import { IngestPipeline } from './ingest/ingest-pipeline.ts';
import { otlpHttpHandler } from './receivers/otlp-http-receiver.ts';
import { listenGrpc } from './receivers/otlp-grpc-receiver.ts';
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
  const pipeline = new IngestPipeline(writer, metrics);
  const deps = { keys: ctx.keys, pipeline, metrics, log: ctx.log, maxRequestBytes: config.maxRequestBytes };
  let http;
  try {
    http = await listen({ handler: otlpHttpHandler(deps), readiness: ctx.readiness, registry: ctx.registry, log: ctx.log, host: ctx.host, port: config.otlpHttpPort });
  } catch (error) {
    await writer.stop();
    throw error;
  }
  const httpListener = http;
  let grpc;
  try {
    grpc = await listenGrpc(deps, ctx.host, config.otlpGrpcPort);
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
  startGatewayWith(ctx, config, clickHouseRowSink(ctx.store));
