// The OTLP gateway component: OTLP/HTTP and OTLP/gRPC receivers in front of
// one ingest pipeline and one group-commit writer. stop() stops both
// listeners (in-flight requests finish, their batches written at once), then
// flushes what is left.
import { listen } from '../src/ops/ops-listener.ts';
import type { ComponentContext, RunningComponent, StartGateway } from '../src/target/component.ts';
import type { GatewayConfig } from '../src/config/config.ts';
import { gatewayMetrics } from './gateway-metrics.ts';
import { IngestPipeline } from './ingest/ingest-pipeline.ts';
import { otlpHttpHandler } from './receivers/otlp-http-receiver.ts';
import { listenGrpc } from './receivers/otlp-grpc-receiver.ts';
import { clickHouseRowSink } from './writer/clickhouse-row-sink.ts';
import { GroupCommitWriter } from './writer/group-commit-writer.ts';
import type { RowSink } from './writer/row-sink.ts';

/** Starts the gateway; `sink` replaces the ClickHouse writer port (tests). */
export async function startGatewayWith(ctx: ComponentContext, config: GatewayConfig, sink: RowSink): Promise<RunningComponent> {
  const metrics = gatewayMetrics(ctx.registry);
  const writer = new GroupCommitWriter(sink, config.writer, metrics.writer);
  const pipeline = new IngestPipeline(writer, metrics);
  const deps = { keys: ctx.keys, pipeline, metrics, log: ctx.log, maxRequestBytes: config.maxRequestBytes };
  const http = await listen({ handler: otlpHttpHandler(deps), readiness: ctx.readiness, registry: ctx.registry, log: ctx.log, host: ctx.host, port: config.otlpHttpPort });
  let grpc;
  try {
    grpc = await listenGrpc(deps, ctx.host, config.otlpGrpcPort);
  } catch (error) {
    await http.close();
    throw error;
  }
  const grpcListener = grpc;
  return {
    name: 'gateway',
    ports: { otlpHttp: http.port, otlpGrpc: grpcListener.port },
    stop: async () => {
      // In-flight requests wait for their flush: write at once instead of after the batch delay,
      // then stop listening once they are answered, then write whatever is left.
      writer.drain();
      await Promise.all([http.close(), grpcListener.close()]);
      await writer.stop();
    },
  };
}

export const startGateway: StartGateway = (ctx: ComponentContext, config: GatewayConfig): Promise<RunningComponent> =>
  startGatewayWith(ctx, config, clickHouseRowSink(ctx.store));
