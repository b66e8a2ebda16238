// Prometheus remote write 1.0 on the gateway's HTTP port: POST /api/v1/push,
// a snappy-compressed prompb.WriteRequest. The tenant is selected as on every
// compatibility endpoint (key as Bearer, x-api-key or Basic password, tenant
// from X-Scope-OrgID); then everything OTLP gets applies: the in-flight byte
// budget, the body limit (on the compressed size while reading, and on the
// size the snappy header declares before decompressing), the tenant's ingest
// limit before and after decoding, and an answer only once the rows are in
// the write-ahead log. The tenant is known before the body: it is refused
// unread when over its limit, and charged every byte read or decompressed,
// stored or not. Outcomes become HTTP answers in `answer` only. Snappy
// decompression runs on the event loop (native, ~3.7 GB/s); conversion of a
// large decompressed body runs in the ingest pipeline's worker pool, as
// OTLP's does (IngestPipeline.convertRemoteWrite).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Principal } from '../../src/auth/api-keys.ts';
import { selectTenant } from '../../src/auth/tenant-selection.ts';
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';
import type { TenantResolver } from '../convert/common/tenant-resolver.ts';
import type { TenantSettingsView } from '../../src/tenant/settings/tenant-settings.ts';
import type { ItemLimits } from '../convert/common/item-limits.ts';
import type { Outcome } from '../ingest/outcome.ts';
import { discard, readBody } from '../receivers/body-reader.ts';
import type { Reservation } from '../receivers/inflight-bytes.ts';
import type { HttpReceiverDeps } from '../receivers/otlp-http-receiver.ts';
import type { MetadataSink } from './metadata-sink.ts';
import { decompressSnappy, snappyLength } from './snappy-body.ts';
import { remoteWriteConverter } from './write-request.ts';
import type { RemoteWriteBatch } from './write-request.ts';

/** The remote write path on the gateway's HTTP port. */
export const remoteWritePath = '/api/v1/push';

/** The OTLP HTTP receiver's own needs (its maxRequestBytes bounds the compressed body and the decompressed one), and more. */
export interface RemoteWriteDeps extends Omit<HttpReceiverDeps, 'remoteWrite'> {
  readonly items: ItemLimits;
  readonly settings?: TenantSettingsView | undefined;
  readonly metadata: MetadataSink;
}

/** Outcomes of remote write beyond the OTLP ones: a failed tenant selection (its own status), a body too slow. */
type RemoteWriteOutcome =
  | Outcome
  | { readonly kind: 'selection'; readonly status: 400 | 401 | 403 | 404; readonly message: string }
  | { readonly kind: 'request_timeout'; readonly message: string };

/**
 * Statuses by outcome. The gateway's own overload (write-ahead log full,
 * bytes in flight) is 503, not OTLP's 429: Prometheus resends every 5xx but
 * a 429 only with `retry_on_http_429` (off by default in 2.42), and a
 * full log says nothing about the tenant. A tenant over its limit is 429.
 */
const statusOf: Readonly<Record<Exclude<RemoteWriteOutcome['kind'], 'accepted' | 'selection'>, number>> = {
  unauthenticated: 401,
  forbidden: 403,
  method_not_allowed: 405,
  unsupported_media_type: 415,
  too_large: 413,
  invalid: 400,
  overloaded: 503,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
  request_timeout: 408,
};

/** As the OTLP receiver: a body refused unread is read and dropped this long and this far, then the connection closes. */
const linger = { ms: 2000, bytes: 1024 * 1024 } as const;

/** Why a Content-Type is not remote write 1.0, or undefined when it is (protobuf, proto absent or prometheus.WriteRequest). */
export function contentTypeProblem(contentType: string | undefined): string | undefined {
  const [media, ...params] = (contentType ?? '').split(';').map((p) => p.trim());
  const expected = 'use application/x-protobuf (remote write 1.0, proto=prometheus.WriteRequest)';
  if (media?.toLowerCase() !== 'application/x-protobuf') return `unsupported Content-Type ${JSON.stringify(contentType ?? '')}: ${expected}`;
  const proto = params.find((p) => p.toLowerCase().startsWith('proto='))?.slice('proto='.length);
  if (proto !== undefined && proto !== 'prometheus.WriteRequest') return `unsupported remote write message ${JSON.stringify(proto)}: ${expected}`;
  return undefined;
}

/** Writes the one answer of an outcome: 204 when every sample was stored; text for everything else. */
function answer(req: IncomingMessage, res: ServerResponse, outcome: RemoteWriteOutcome): number {
  if (outcome.kind === 'accepted' && outcome.rejected === 0) {
    res.writeHead(204).end();
    return 204;
  }
  // Samples rejected one by one (too old, too new): the rest is stored; 400 as Mimir answers, so Prometheus does not resend them.
  const status = outcome.kind === 'accepted' ? 400 : outcome.kind === 'selection' ? outcome.status : statusOf[outcome.kind];
  const message = outcome.kind === 'accepted' ? outcome.errorMessage : outcome.message;
  const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' };
  if (outcome.kind === 'overloaded' || outcome.kind === 'rate_limited') headers['retry-after'] = String(outcome.retryAfterSeconds);
  if (status === 401) headers['www-authenticate'] = 'Basic realm="tenantry"';
  if (outcome.kind === 'too_large' || outcome.kind === 'unsupported_media_type' || outcome.kind === 'request_timeout') headers['connection'] = 'close';
  res.writeHead(status, headers).end(`${message}\n`);
  if (!req.complete && outcome.kind !== 'request_timeout') void discard(req, linger.bytes, Date.now() + linger.ms);
  return status;
}

type Convert = ReturnType<typeof remoteWriteConverter>;

/** A body read, decompressed and converted. */
interface Decoded {
  readonly tenants: TenantResolver;
  readonly converted: RemoteWriteBatch;
  readonly bytes: number;
}

/** Reads, decompresses and converts the body within the gate's turn; `cost.bytes` is what it read or decompressed, for the gate. */
async function decode(
  req: IncomingMessage,
  deps: RemoteWriteDeps,
  convert: Convert,
  who: { principal: Principal; tenantId: string; reservation: Reservation },
  cost: { bytes: number },
): Promise<Result<Decoded, RemoteWriteOutcome>> {
  const { principal, tenantId, reservation } = who;
  // The body reader knows gzip and identity: the snappy block is read as it is and decompressed below.
  delete req.headers['content-encoding'];
  const read = await readBody(req, { limit: deps.maxRequestBytes, deadlineMs: deps.bodyTimeoutMs, reservation });
  const sender = { principal, tenant: tenantId };
  cost.bytes = read.ok ? read.value.length : read.error.bytes;
  if (!read.ok) {
    if (read.error.kind === 'request_timeout') deps.onBodyTimeout?.();
    deps.pipeline.chargeRefusedBody('metrics', read.error, sender);
    return fail(
      read.error.kind === 'overloaded'
        ? { kind: 'overloaded', message: read.error.message, retryAfterSeconds: 1 }
        : { kind: read.error.kind, message: read.error.message },
    );
  }
  const declared = snappyLength(read.value) ?? 0;
  if (declared <= deps.maxRequestBytes && !reservation.ensure(read.value.length + declared)) {
    return fail({ kind: 'overloaded', message: 'too many request bytes in flight on this gateway: retry later', retryAfterSeconds: 1 });
  }
  const body = decompressSnappy(read.value, deps.maxRequestBytes);
  if (!body.ok) {
    // Snappy output is allocated at its declared length before it is checked: a length within the limit was spent.
    const spent = read.value.length + (declared <= deps.maxRequestBytes ? declared : 0);
    cost.bytes = spent;
    deps.pipeline.chargeUnstored('metrics', spent, body.error.kind === 'too_large' ? 'body_too_large' : 'invalid_body', sender);
    return fail({ kind: body.error.kind, message: body.error.message });
  }
  // Read before conversion, which may move the body to a worker.
  const bytes = body.value.length;
  cost.bytes = bytes;
  const tenants = deps.pipeline.resolver(principal);
  const converted = await deps.pipeline.convertRemoteWrite(body.value, tenantId, tenants, convert);
  if (!converted.ok) {
    // A worker that died is not the sender's doing: the client sends again, and is charged then.
    if (converted.error.kind === 'invalid') deps.pipeline.chargeUnstored('metrics', bytes, 'invalid_body', sender);
    return fail(converted.error);
  }
  return ok({ tenants, converted: converted.value, bytes });
}

async function push(req: IncomingMessage, res: ServerResponse, deps: RemoteWriteDeps, convert: Convert): Promise<RemoteWriteOutcome> {
  if (req.method !== 'POST') return { kind: 'method_not_allowed', message: `${req.method ?? ''} is not allowed: use POST` };
  const typeProblem = contentTypeProblem(req.headers['content-type']);
  if (typeProblem !== undefined) return { kind: 'unsupported_media_type', message: typeProblem };
  const encoding = (req.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding !== 'snappy') return { kind: 'unsupported_media_type', message: `unsupported Content-Encoding ${JSON.stringify(encoding)}: use snappy` };
  const selected = selectTenant(deps.keys, req.headers, 'ingest');
  if (!selected.ok) return { kind: 'selection', ...selected.error };
  const { principal, tenantId } = selected.value;
  const limited = deps.pipeline.refuseUnread(principal, 'http', 'metrics', tenantId);
  if (limited !== undefined) return limited;
  const reservation = deps.inflight.reserve(0);
  if (reservation === undefined) return { kind: 'overloaded', message: 'too many request bytes in flight on this gateway: retry later', retryAfterSeconds: 1 };
  res.once('close', () => {
    reservation.release();
  });
  // Reading, decompressing and converting take turns by tenant (the decode gate, gateway/limits/decode-gate.ts).
  const turn = await deps.pipeline.gate.enter(deps.pipeline.decodeFlow(principal, tenantId));
  if (!turn.ok) return { kind: 'overloaded', ...turn.error };
  const cost = { bytes: 0 };
  let decoded: Result<Decoded, RemoteWriteOutcome>;
  try {
    decoded = await decode(req, deps, convert, { principal, tenantId, reservation }, cost);
  } finally {
    turn.value.release(cost.bytes);
  }
  if (!decoded.ok) return decoded.error;
  const { tenants, converted, bytes } = decoded.value;
  const { batch, metadata, skippedHistograms } = converted;
  if (skippedHistograms > 0) deps.metrics.rejectedItems.inc({ signal: 'metrics', reason: 'custom_bucket_histogram' }, skippedHistograms);
  // Metadata first: if it cannot be written, nothing is acknowledged and Prometheus sends both again.
  if (metadata.length > 0 && tenants.tenants.get(tenantId)?.refused === undefined) {
    const written = await deps.metadata.write(tenantId, metadata);
    if (!written.ok) return { kind: 'unavailable', message: `storage unavailable: ${written.error}` };
  }
  if (batch.rowCount + batch.rejected.count === 0) return { kind: 'accepted', accepted: 0, rejected: 0, errorMessage: '' };
  return deps.pipeline.ingest('metrics', batch, { tenants, bytes, protocol: 'http' });
}

/** The request listener of POST /api/v1/push. */
export function remoteWriteHandler(deps: RemoteWriteDeps): (req: IncomingMessage, res: ServerResponse) => void {
  const convert = remoteWriteConverter(deps.items, Date.now, deps.settings);
  return (req, res) => {
    const timer = deps.metrics.requestSeconds.startTimer({ protocol: 'remote_write', signal: 'metrics' });
    push(req, res, deps, convert)
      .then((outcome) => {
        if (outcome.kind === 'internal' || outcome.kind === 'unavailable')
          deps.log.warn('remote write failed', { kind: outcome.kind, message: outcome.message });
        const status = answer(req, res, outcome);
        deps.metrics.requests.inc({ protocol: 'remote_write', signal: 'metrics', status: String(status) });
        timer();
      })
      .catch((error: unknown) => {
        // Only bugs get here.
        deps.log.error('bug while handling a remote write', { error, stack: (error as Error).stack });
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('internal error\n');
      });
  };
}
