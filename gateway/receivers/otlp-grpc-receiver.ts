// OTLP/gRPC: the Trace, Logs and Metrics collector services on
// @grpc/grpc-js. Messages arrive as raw bytes (grpc-js inflates gzip and
// enforces the size limit) and go through the same protobuf converters and pipeline as
// OTLP/HTTP. Outcomes become gRPC status codes in `reply`, and nowhere else.
import * as grpc from '@grpc/grpc-js';
import { presentedKey } from '../../src/auth/api-keys.ts';
import type { KeyRing } from '../../src/auth/api-keys.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { GatewayMetrics } from '../gateway-metrics.ts';
import { rowConverters } from '../convert/row-converters.ts';
import type { RowConverter } from '../convert/common/row-converter.ts';
import { TenantResolver } from '../convert/common/tenant-resolver.ts';
import { authorizeIngest } from '../ingest/ingest-pipeline.ts';
import type { IngestPipeline } from '../ingest/ingest-pipeline.ts';
import type { Outcome } from '../ingest/outcome.ts';
import type { SignalName } from '../wire/otlp-messages.ts';
import { encodeExportResponse, encodeStatusProtobuf } from './export-response.ts';

export interface GrpcReceiverDeps {
  readonly keys: KeyRing;
  readonly pipeline: IngestPipeline;
  readonly metrics: GatewayMetrics;
  readonly log: Logger;
  readonly maxRequestBytes: number;
}

const services: readonly (readonly [SignalName, string])[] = [
  ['traces', '/opentelemetry.proto.collector.trace.v1.TraceService/Export'],
  ['logs', '/opentelemetry.proto.collector.logs.v1.LogsService/Export'],
  ['metrics', '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export'],
];

const passThrough = {
  requestStream: false,
  responseStream: false,
  requestSerialize: (b: Buffer): Buffer => b,
  requestDeserialize: (b: Buffer): Buffer => b,
  responseSerialize: (b: Buffer): Buffer => b,
  responseDeserialize: (b: Buffer): Buffer => b,
} as const;

const grpcCode: Readonly<Record<Exclude<Outcome['kind'], 'accepted'>, grpc.status>> = {
  unauthenticated: grpc.status.UNAUTHENTICATED, forbidden: grpc.status.PERMISSION_DENIED,
  method_not_allowed: grpc.status.UNIMPLEMENTED, unsupported_media_type: grpc.status.INVALID_ARGUMENT, too_large: grpc.status.RESOURCE_EXHAUSTED,
  invalid: grpc.status.INVALID_ARGUMENT, overloaded: grpc.status.RESOURCE_EXHAUSTED, unavailable: grpc.status.UNAVAILABLE, internal: grpc.status.INTERNAL,
};

/** Calls back with the one gRPC answer of an outcome. */
function reply(signal: SignalName, outcome: Outcome, callback: grpc.sendUnaryData<Buffer>): grpc.status {
  if (outcome.kind === 'accepted') {
    callback(null, Buffer.from(encodeExportResponse(signal, 'protobuf', outcome)));
    return grpc.status.OK;
  }
  const code = grpcCode[outcome.kind];
  const metadata = new grpc.Metadata();
  if (outcome.kind === 'overloaded') {
    // RetryInfo travels in grpc-status-details-bin, as the OTLP spec asks.
    metadata.set('grpc-status-details-bin', Buffer.from(encodeStatusProtobuf(code, outcome.message, outcome.retryAfterSeconds)));
  }
  callback({ code, details: outcome.message, metadata });
  return code;
}

function firstString(metadata: grpc.Metadata, key: string): string | undefined {
  const [value] = metadata.get(key);
  return typeof value === 'string' ? value : undefined;
}

function handler(signal: SignalName, converter: RowConverter, deps: GrpcReceiverDeps): grpc.handleUnaryCall<Buffer, Buffer> {
  return (call, callback) => {
    const timer = deps.metrics.requestSeconds.startTimer({ protocol: 'grpc', signal });
    const run = async (): Promise<Outcome> => {
      const auth = authorizeIngest(deps.keys, presentedKey(firstString(call.metadata, 'authorization'), firstString(call.metadata, 'x-api-key')));
      if (!auth.ok) return auth.failure;
      const converted = converter.convert(call.request, new TenantResolver(auth.principal));
      if (!converted.ok) return { kind: 'invalid', message: converted.message };
      return deps.pipeline.ingest(signal, converted.batch);
    };
    run().then((outcome) => {
      if (outcome.kind === 'internal' || outcome.kind === 'unavailable') deps.log.warn('export failed', { signal, kind: outcome.kind, message: outcome.message });
      const code = reply(signal, outcome, callback);
      deps.metrics.requests.inc({ protocol: 'grpc', signal, status: grpc.status[code] });
      timer();
    }).catch((error: unknown) => {
      deps.log.error('bug while handling an export', { error, stack: (error as Error).stack });
      callback({ code: grpc.status.INTERNAL, details: 'internal error' });
    });
  };
}

export interface GrpcListener {
  readonly port: number;
  /** Stops accepting; resolves when in-flight calls have been answered. */
  close(): Promise<void>;
}

/** Starts the OTLP/gRPC server on host:port. */
export async function listenGrpc(deps: GrpcReceiverDeps, host: string, port: number): Promise<GrpcListener> {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': deps.maxRequestBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
  });
  const converters = rowConverters();
  for (const [signal, path] of services) {
    const definition = { Export: { path, originalName: 'export', ...passThrough } } satisfies grpc.ServiceDefinition;
    server.addService(definition, { Export: handler(signal, converters[signal].protobuf, deps) });
  }
  const bound = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host.includes(":") ? `[${host}]` : host}:${port}`, grpc.ServerCredentials.createInsecure(), (error, chosen) => {
      if (error === null) resolve(chosen);
      else reject(error);
    });
  });
  return {
    port: bound,
    close: () => new Promise<void>((resolve) => {
      server.tryShutdown(() => { resolve(); });
    }),
  };
}
