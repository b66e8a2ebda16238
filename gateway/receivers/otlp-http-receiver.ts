// OTLP/HTTP: POST /v1/traces, /v1/logs, /v1/metrics with protobuf or JSON
// bodies, gzip or identity. The ops endpoints share the port; the shared
// listener answers them. Prometheus remote write (/api/v1/push) is handed to
// its own handler (gateway/prometheus/). The key is checked, a key bound to one tenant over
// its ingest limit refused, the body's bytes reserved, and the request's
// turn at the decode gate taken (gateway/limits/decode-gate.ts) before a
// byte of the body is read. What a refused body made us read or inflate is charged
// to its sender (the pipeline's converters charge an undecodable one).
// Outcomes become HTTP answers in
// `answer`, and nowhere else.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { presentedKey } from '../../src/auth/api-keys.ts';
import type { KeyRing } from '../../src/auth/api-keys.ts';
import { requestPath } from '../../src/ops/ops-listener.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { GatewayMetrics } from '../gateway-metrics.ts';
import { authorizeIngest } from '../ingest/ingest-pipeline.ts';
import type { IngestPipeline } from '../ingest/ingest-pipeline.ts';
import type { Outcome } from '../ingest/outcome.ts';
import type { SignalName, WireFormat } from '../wire/otlp-messages.ts';
import { discard, readBodyParts } from './body-reader.ts';
import type { BodyFailureKind } from './body-reader.ts';
import type { InflightBytes } from './inflight-bytes.ts';
import { encodeExportResponse, encodeStatusJson, encodeStatusProtobuf } from './export-response.ts';

export interface HttpReceiverDeps {
  readonly keys: KeyRing;
  readonly pipeline: IngestPipeline;
  readonly metrics: GatewayMetrics;
  readonly log: Logger;
  readonly maxRequestBytes: number;
  /** Request bytes in flight in this process (shared with OTLP/gRPC). */
  readonly inflight: InflightBytes;
  /** Time a request's body may take to arrive. */
  readonly bodyTimeoutMs: number;
  /** Counts bodies cut off by that deadline. */
  readonly onBodyTimeout?: () => void;
  /** Prometheus remote write, answered on this port at /api/v1/push (gateway/prometheus/). */
  readonly remoteWrite?: { readonly path: string; readonly handler: (req: IncomingMessage, res: ServerResponse) => void };
}

/** An HTTP-only ending: the body did not arrive in time (408). */
type HttpOutcome = Outcome | { readonly kind: 'request_timeout'; readonly message: string };

/**
 * A request refused before its body was read (bad key, budget spent) keeps
 * being read and dropped for this long and this many bytes, so a client that
 * sends its whole body before reading sees the answer rather than a reset;
 * then the connection is closed.
 */
const linger = { ms: 2000, bytes: 1024 * 1024 } as const;

const signalByPath: ReadonlyMap<string, SignalName> = new Map([
  ['/v1/traces', 'traces'],
  ['/v1/logs', 'logs'],
  ['/v1/metrics', 'metrics'],
]);

const contentTypes: Readonly<Record<WireFormat, string>> = { protobuf: 'application/x-protobuf', json: 'application/json' };

/** The wire format named by a Content-Type header, or undefined when unsupported. */
export function wireFormat(contentType: string | undefined): WireFormat | undefined {
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (mediaType === 'application/x-protobuf' || mediaType === 'application/protobuf') return 'protobuf';
  if (mediaType === 'application/json') return 'json';
  return undefined;
}

// HTTP status and google.rpc.Code of each failure.
const httpStatus: Readonly<Record<Exclude<HttpOutcome['kind'], 'accepted'>, readonly [number, number]>> = {
  unauthenticated: [401, 16],
  forbidden: [403, 7],
  method_not_allowed: [405, 12],
  unsupported_media_type: [415, 3],
  too_large: [413, 8],
  invalid: [400, 3],
  overloaded: [429, 8],
  rate_limited: [429, 8],
  unavailable: [503, 14],
  internal: [500, 13],
  request_timeout: [408, 4],
};

/** Writes the one HTTP answer of an outcome. */
function answer(req: IncomingMessage, res: ServerResponse, signal: SignalName, format: WireFormat, outcome: HttpOutcome): number {
  if (outcome.kind === 'accepted') {
    res.writeHead(200, { 'content-type': contentTypes[format] }).end(encodeExportResponse(signal, format, outcome));
    return 200;
  }
  const [status, code] = httpStatus[outcome.kind];
  const retry = outcome.kind === 'overloaded' || outcome.kind === 'rate_limited' ? outcome.retryAfterSeconds : undefined;
  const headers: Record<string, string> = { 'content-type': contentTypes[format] };
  if (retry !== undefined) headers['retry-after'] = String(retry);
  if (outcome.kind === 'unauthenticated') headers['www-authenticate'] = 'Bearer';
  // A body we refused to read, or that is too slow, may still be arriving: do not keep this connection.
  if (outcome.kind === 'too_large' || outcome.kind === 'unsupported_media_type' || outcome.kind === 'request_timeout') headers['connection'] = 'close';
  const body = format === 'json' ? encodeStatusJson(code, outcome.message, retry) : encodeStatusProtobuf(code, outcome.message, retry);
  res.writeHead(status, headers).end(body);
  if (!req.complete && outcome.kind !== 'request_timeout') void discard(req, linger.bytes, Date.now() + linger.ms);
  return status;
}

function bodyFailure(kind: BodyFailureKind, message: string): HttpOutcome {
  return kind === 'overloaded' ? { kind, message, retryAfterSeconds: 1 } : { kind, message };
}

async function exportRequest(
  req: IncomingMessage,
  res: ServerResponse,
  signal: SignalName,
  deps: HttpReceiverDeps,
): Promise<{ format: WireFormat; outcome: HttpOutcome }> {
  if (req.method !== 'POST') return { format: 'json', outcome: { kind: 'method_not_allowed', message: `${req.method ?? ''} is not allowed: use POST` } };
  const format = wireFormat(req.headers['content-type']);
  if (format === undefined) {
    return {
      format: 'json',
      outcome: {
        kind: 'unsupported_media_type',
        message: `unsupported Content-Type ${JSON.stringify(req.headers['content-type'] ?? '')}: use application/x-protobuf or application/json`,
      },
    };
  }
  const auth = authorizeIngest(deps.keys, presentedKey(req.headers.authorization, single(req.headers['x-api-key'])));
  if (!auth.ok) return { format, outcome: auth.error };
  const limited = deps.pipeline.refuseUnread(auth.value, 'http', signal);
  if (limited !== undefined) return { format, outcome: limited };
  // Held from the first byte until the answer is written (decoding and the write-ahead log included).
  const reservation = deps.inflight.reserve(0);
  if (reservation === undefined) return { format, outcome: bodyFailure('overloaded', 'too many request bytes in flight on this gateway: retry later') };
  res.once('close', () => {
    reservation.release();
  });
  // Reading, inflating and converting take turns by tenant (the decode gate); the write-ahead log's turns are the writer's.
  const turn = await deps.pipeline.gate.enter(deps.pipeline.decodeFlow(auth.value));
  if (!turn.ok) return { format, outcome: { kind: 'overloaded', ...turn.error } };
  let cost = 0;
  let converted;
  let tenants;
  try {
    const body = await readBodyParts(req, { limit: deps.maxRequestBytes, deadlineMs: deps.bodyTimeoutMs, reservation });
    if (!body.ok) {
      cost = body.error.bytes;
      if (body.error.kind === 'request_timeout') deps.onBodyTimeout?.();
      deps.pipeline.chargeRefusedBody(signal, body.error, { principal: auth.value });
      return { format, outcome: bodyFailure(body.error.kind, body.error.message) };
    }
    cost = body.value.length;
    tenants = deps.pipeline.resolver(auth.value);
    converted = await deps.pipeline.convert(signal, format, body.value, tenants);
  } finally {
    turn.value.release(cost);
  }
  if (!converted.ok) return { format, outcome: converted.error };
  return { format, outcome: await deps.pipeline.ingest(signal, converted.value, { tenants, bytes: cost, protocol: 'http' }) };
}

const single = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** The request listener of the OTLP/HTTP port. */
export function otlpHttpHandler(deps: HttpReceiverDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    // The ops paths never get here: the shared listener answers them.
    const path = requestPath(req.url ?? '/');
    if (deps.remoteWrite !== undefined && path === deps.remoteWrite.path) {
      deps.remoteWrite.handler(req, res);
      return;
    }
    const signal = signalByPath.get(path);
    if (signal === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: OTLP paths are /v1/traces, /v1/logs and /v1/metrics\n');
      return;
    }
    const timer = deps.metrics.requestSeconds.startTimer({ protocol: 'http', signal });
    exportRequest(req, res, signal, deps)
      .then(({ format, outcome }) => {
        if (outcome.kind === 'internal' || outcome.kind === 'unavailable')
          deps.log.warn('export failed', { signal, kind: outcome.kind, message: outcome.message });
        const status = answer(req, res, signal, format, outcome);
        deps.metrics.requests.inc({ protocol: 'http', signal, status: String(status) });
        timer();
      })
      .catch((error: unknown) => {
        // Only bugs get here.
        deps.log.error('bug while handling an export', { error, stack: (error as Error).stack });
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(encodeStatusJson(13, 'internal error'));
      });
  };
}
