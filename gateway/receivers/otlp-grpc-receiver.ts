// OTLP/gRPC: the Trace, Logs and Metrics collector services on
// @grpc/grpc-js. Messages arrive as raw bytes (grpc-js inflates gzip and
// enforces the size limit) and go through the same protobuf converters and pipeline as
// OTLP/HTTP. An interceptor admits each call on its metadata alone (the key,
// the ingest limit of a key bound to one tenant, the in-flight byte budget)
// before its message is read, and bounds the time
// the message may take. Outcomes become gRPC statuses in `statusOf`, and
// nowhere else.
//
// grpc-js refuses some messages itself, before any handler or interceptor
// sees them: one whose length prefix is over grpc.max_receive_message_length
// ("Received message larger than max"), one that inflates past it ("decompresses
// to a size larger than"), one that does not inflate or names an unknown
// encoding, one past its grpc-timeout. It sends that status straight from its
// base call (interceptors' sendStatus is not on the way) and offers no hook
// but the listener's onCancel, which a client going away fires too. The
// interceptor tells the two apart by the stream: grpc-js's refusal is in the
// headers (or trailers) it sent, a client that left got none. Such a refusal
// is charged to the key's sender as HTTP charges a refused body
// (chargeRefusedBody): the bytes received on the call's stream, or, for a
// message refused while inflating, the limit it inflated to (the work done);
// its stream is then reset so that the rest of the message is not received.
import type { ServerHttp2Stream } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { presentedKey } from '../../src/auth/api-keys.ts';
import type { KeyRing, Principal } from '../../src/auth/api-keys.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { ListenerLimits } from '../../src/ops/listener-limits.ts';
import type { Readiness } from '../../src/ops/readiness.ts';
import { listenerMetrics } from '../../src/ops/listener-metrics.ts';
import type { GatewayMetrics } from '../gateway-metrics.ts';
import { authorizeIngest } from '../ingest/ingest-pipeline.ts';
import type { IngestPipeline, UnstoredReason } from '../ingest/ingest-pipeline.ts';
import type { Failure, Outcome } from '../ingest/outcome.ts';
import type { SignalName } from '../wire/otlp-messages.ts';
import { encodeExportResponse, encodeStatusProtobuf } from './export-response.ts';
import { addHealthService } from './grpc-health.ts';
import { resetStream, serveConnections } from './grpc-connections.ts';
import type { InflightBytes, Reservation } from './inflight-bytes.ts';

export interface GrpcReceiverDeps {
  readonly keys: KeyRing;
  readonly pipeline: IngestPipeline;
  readonly metrics: GatewayMetrics;
  readonly log: Logger;
  readonly maxRequestBytes: number;
  /** Request bytes in flight in this process (shared with OTLP/HTTP). */
  readonly inflight: InflightBytes;
}

/** A gRPC-only ending: the request message did not arrive in time. */
type GrpcFailure = Failure | { readonly kind: 'request_timeout'; readonly message: string };

/**
 * What one client may hold. Streams per connection as dskit's default; the
 * server pings a connection after a minute without traffic and drops it when
 * the ping is not answered in 20 s (dead peers); a connection without calls
 * for 5 minutes is sent GOAWAY; every connection is recycled after 30
 * minutes (±10 %), with the body timeout as grace for its last calls.
 */
function serverOptions(maxRequestBytes: number, limits: ListenerLimits): grpc.ServerOptions {
  return {
    'grpc.max_receive_message_length': maxRequestBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
    'grpc.max_concurrent_streams': 100,
    'grpc.keepalive_time_ms': 60_000,
    'grpc.keepalive_timeout_ms': 20_000,
    'grpc.max_connection_idle_ms': 5 * 60_000,
    'grpc.max_connection_age_ms': 30 * 60_000,
    'grpc.max_connection_age_grace_ms': limits.bodyTimeoutMs,
  };
}

const services: readonly (readonly [SignalName, string])[] = [
  ['traces', '/opentelemetry.proto.collector.trace.v1.TraceService/Export'],
  ['logs', '/opentelemetry.proto.collector.logs.v1.LogsService/Export'],
  ['metrics', '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export'],
];

const signalByPath: ReadonlyMap<string, SignalName> = new Map(services.map(([signal, path]) => [path, signal]));

const passThrough = {
  requestStream: false,
  responseStream: false,
  requestSerialize: (b: Buffer): Buffer => b,
  requestDeserialize: (b: Buffer): Buffer => b,
  responseSerialize: (b: Buffer): Buffer => b,
  responseDeserialize: (b: Buffer): Buffer => b,
} as const;

const grpcCode: Readonly<Record<GrpcFailure['kind'], grpc.status>> = {
  unauthenticated: grpc.status.UNAUTHENTICATED,
  forbidden: grpc.status.PERMISSION_DENIED,
  method_not_allowed: grpc.status.UNIMPLEMENTED,
  unsupported_media_type: grpc.status.INVALID_ARGUMENT,
  too_large: grpc.status.RESOURCE_EXHAUSTED,
  invalid: grpc.status.INVALID_ARGUMENT,
  overloaded: grpc.status.RESOURCE_EXHAUSTED,
  rate_limited: grpc.status.RESOURCE_EXHAUSTED,
  unavailable: grpc.status.UNAVAILABLE,
  internal: grpc.status.INTERNAL,
  request_timeout: grpc.status.DEADLINE_EXCEEDED,
};

/** The gRPC status of a failure. */
function statusOf(failure: GrpcFailure): grpc.StatusObject {
  const code = grpcCode[failure.kind];
  const metadata = new grpc.Metadata();
  if (failure.kind === 'overloaded' || failure.kind === 'rate_limited') {
    // RetryInfo travels in grpc-status-details-bin, as the OTLP spec asks.
    metadata.set('grpc-status-details-bin', Buffer.from(encodeStatusProtobuf(code, failure.message, failure.retryAfterSeconds)));
  }
  return { code, details: failure.message, metadata };
}

/** Calls back with the one gRPC answer of an outcome. */
function reply(signal: SignalName, outcome: Outcome, callback: grpc.sendUnaryData<Buffer>): grpc.status {
  if (outcome.kind === 'accepted') {
    callback(null, Buffer.from(encodeExportResponse(signal, 'protobuf', outcome)));
    return grpc.status.OK;
  }
  const status = statusOf(outcome);
  callback(status);
  return status.code;
}

/** The status grpc-js sent on a call's stream, if any: its refusal of a message no handler saw. */
function sentStatus(stream: ServerHttp2Stream): { readonly code: number; readonly details: string } | undefined {
  const sent = (stream as { sentTrailers?: Record<string, unknown> }).sentTrailers ?? stream.sentHeaders;
  const code = sent['grpc-status'];
  if (code === undefined) return undefined;
  const details = typeof sent['grpc-message'] === 'string' ? sent['grpc-message'] : '';
  let decoded = details;
  try {
    decoded = decodeURIComponent(details);
  } catch {
    // A message grpc-js encoded otherwise is still a refusal; its reason is then just less precise.
  }
  return { code: Number(code), details: decoded };
}

// Status codes as the numbers a stream's headers carry.
const resourceExhausted: number = grpc.status.RESOURCE_EXHAUSTED;
const deadlineExceeded: number = grpc.status.DEADLINE_EXCEEDED;

/** What a grpc-js refusal is charged as: its reason, and whether the message was inflated up to the size limit first. */
function refusalCharge(status: { readonly code: number; readonly details: string }): {
  readonly reason: UnstoredReason;
  readonly inflatedToLimit: boolean;
} {
  if (status.code === resourceExhausted) return { reason: 'body_too_large', inflatedToLimit: status.details.includes('decompresses to a size') };
  if (status.code === deadlineExceeded) return { reason: 'body_timeout', inflatedToLimit: false };
  return { reason: 'invalid_body', inflatedToLimit: false };
}

/**
 * Counts the bytes a call's stream receives from now on, and charges them to
 * `principal` once the call ends without its message having reached the
 * handler and with a status grpc-js sent itself (see the header). Answers
 * undefined when grpc-js's stream is not where it keeps it (a newer grpc-js):
 * then nothing is counted, and nothing breaks.
 */
function watchRefusal(call: object, charge: (bytes: number, status: { code: number; details: string }) => void): { ended(): void } | undefined {
  const stream: unknown = (call as { stream?: unknown }).stream;
  if (typeof stream !== 'object' || stream === null || !('sentHeaders' in stream) || typeof (stream as { on?: unknown }).on !== 'function') return undefined;
  const s = stream as ServerHttp2Stream;
  let bytes = 0;
  // grpc-js pauses the stream explicitly, so one more 'data' listener does not make it flow.
  s.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
  });
  return {
    ended: () => {
      const status = sentStatus(s);
      if (status === undefined) return;
      // The client may still be sending the refused message: reset its stream alone, and charge what arrived by then.
      resetStream(call);
      if (s.closed || s.destroyed) charge(bytes, status);
      else
        s.once('close', () => {
          charge(bytes, status);
        });
    },
  };
}

const overloaded: Failure = { kind: 'overloaded', message: 'too many request bytes in flight on this gateway: retry later', retryAfterSeconds: 1 };

/**
 * Admits a call on its metadata: a missing, unknown or unscoped key, a key
 * bound to one tenant over its ingest limit, or a spent byte budget, is
 * answered before the message is read (grpc-js reads
 * it only once the handler asks). The message must then arrive within the
 * body timeout, and its bytes are charged to the budget until the call ends.
 */
function admission(attached: () => GrpcReceiverDeps | undefined, bodyTimeoutMs: number, onBodyTimeout: () => void): grpc.ServerInterceptor {
  return (method, call) => {
    const signal = signalByPath.get(method.path);
    // Only exports are admitted here: the health service answers probes without a key.
    if (signal === undefined) return new grpc.ServerInterceptingCall(call);
    let reservation: Reservation | undefined;
    let timer: NodeJS.Timeout | undefined;
    // Whether the message reached the handler, and whether a status went out through this interceptor (its own or the handler's).
    let passed = false;
    let answered = false;
    let refusal: { ended(): void } | undefined;
    const finish = (): void => {
      clearTimeout(timer);
      reservation?.release();
    };
    // A refused call's client may still be sending its message: its stream alone is reset, the connection's other calls go on.
    const refuse = (failure: GrpcFailure): void => {
      answered = true;
      finish();
      call.sendStatus(statusOf(failure));
      resetStream(call);
    };
    const watch = (deps: GrpcReceiverDeps, principal: Principal): void => {
      refusal = watchRefusal(call, (bytes, status) => {
        const { reason, inflatedToLimit } = refusalCharge(status);
        deps.pipeline.chargeUnstored(signal, inflatedToLimit ? Math.max(bytes, deps.maxRequestBytes) : bytes, reason, { principal });
      });
    };
    return new grpc.ServerInterceptingCall(call, {
      start: (next) => {
        next({
          onReceiveMetadata: (metadata, admit) => {
            const deps = attached();
            if (deps === undefined) {
              refuse(starting);
              return;
            }
            const auth = authorizeIngest(deps.keys, presentedKey(firstString(metadata, 'authorization'), firstString(metadata, 'x-api-key')));
            if (!auth.ok) {
              refuse(auth.error);
              return;
            }
            const limited = deps.pipeline.refuseUnread(auth.value, 'grpc', signal);
            if (limited !== undefined) {
              refuse(limited);
              return;
            }
            reservation = deps.inflight.reserve(0);
            if (reservation === undefined) {
              refuse(overloaded);
              return;
            }
            timer = setTimeout(() => {
              onBodyTimeout();
              refuse({ kind: 'request_timeout', message: `the request message did not arrive within ${bodyTimeoutMs} ms` });
            }, bodyTimeoutMs);
            watch(deps, auth.value);
            admit(metadata);
          },
          onReceiveMessage: (message: Buffer, pass) => {
            passed = true;
            clearTimeout(timer);
            if (reservation?.ensure(message.length) !== true) {
              refuse(overloaded);
              return;
            }
            pass(message);
          },
          onCancel: () => {
            finish();
            // Ended with neither the handler nor this interceptor answering: grpc-js refused the message itself, or the client left.
            if (!passed && !answered) refusal?.ended();
          },
        });
      },
      sendStatus: (status, send) => {
        answered = true;
        finish();
        send(status);
      },
    });
  };
}

function firstString(metadata: grpc.Metadata, key: string): string | undefined {
  const [value] = metadata.get(key);
  return typeof value === 'string' ? value : undefined;
}

function handler(signal: SignalName, attached: () => GrpcReceiverDeps | undefined): grpc.handleUnaryCall<Buffer, Buffer> {
  return (call, callback) => {
    const deps = attached();
    if (deps === undefined) {
      callback(statusOf(starting));
      return;
    }
    const timer = deps.metrics.requestSeconds.startTimer({ protocol: 'grpc', signal });
    const run = async (): Promise<Outcome> => {
      const auth = authorizeIngest(deps.keys, presentedKey(firstString(call.metadata, 'authorization'), firstString(call.metadata, 'x-api-key')));
      if (!auth.ok) return auth.error;
      // grpc-js has read and inflated the message; converting it takes its turn by tenant (gateway/limits/decode-gate.ts).
      const turn = await deps.pipeline.gate.enter(deps.pipeline.decodeFlow(auth.value));
      if (!turn.ok) return { kind: 'overloaded', ...turn.error };
      const tenants = deps.pipeline.resolver(auth.value);
      const converted = await deps.pipeline.convert(signal, 'protobuf', call.request, tenants).finally(() => {
        turn.value.release(call.request.length);
      });
      if (!converted.ok) return converted.error;
      return deps.pipeline.ingest(signal, converted.value, { tenants, bytes: call.request.length, protocol: 'grpc' });
    };
    run()
      .then((outcome) => {
        if (outcome.kind === 'internal' || outcome.kind === 'unavailable')
          deps.log.warn('export failed', { signal, kind: outcome.kind, message: outcome.message });
        const code = reply(signal, outcome, callback);
        deps.metrics.requests.inc({ protocol: 'grpc', signal, status: grpc.status[code] });
        timer();
      })
      .catch((error: unknown) => {
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

/** The OTLP/gRPC port opened before the gateway is set up: health answers at once, exports UNAVAILABLE until attach(). */
export interface GrpcPort extends GrpcListener {
  /** Serves exports with `deps` from now on. */
  attach(deps: GrpcReceiverDeps): void;
}

export interface GrpcPortOptions {
  readonly host: string;
  readonly port: number;
  readonly limits: ListenerLimits;
  readonly maxRequestBytes: number;
  readonly readiness: Readiness;
  readonly registry: Registry;
}

const starting: Failure = { kind: 'unavailable', message: 'the gateway is starting: retry later' };

/** Opens the OTLP/gRPC port on host:port with the health service; exports wait for attach(). */
export async function openGrpc(options: GrpcPortOptions): Promise<GrpcPort> {
  const name = 'otlp-grpc';
  const bodyTimeouts = listenerMetrics(options.registry).bodyTimeouts;
  let attached: GrpcReceiverDeps | undefined;
  const server = new grpc.Server({
    ...serverOptions(options.maxRequestBytes, options.limits),
    interceptors: [
      admission(
        () => attached,
        options.limits.bodyTimeoutMs,
        () => {
          bodyTimeouts.inc({ listener: name });
        },
      ),
    ],
  });
  for (const [signal, path] of services) {
    const definition = { Export: { path, originalName: 'export', ...passThrough } } satisfies grpc.ServiceDefinition;
    // Admission refuses every export until attach(), so a handler always finds its deps.
    server.addService(definition, { Export: handler(signal, () => attached) });
  }
  addHealthService(
    server,
    options.readiness,
    services.map(([, path]) => path.split('/')[1] ?? ''),
  );
  const connections = await serveConnections(server, options.host, options.port, options.limits, options.registry, name);
  return {
    ...connections,
    attach: (deps) => {
      attached = deps;
    },
  };
}
