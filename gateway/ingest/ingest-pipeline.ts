// Everything after conversion, shared by both protocols: charge each
// tenant's bytes to its ingest limit, hand a request's rows to the writer,
// count accepted, rejected and truncated items (per tenant too), and report
// the outcome. Authorizing the key (authorizeIngest) happens before the
// receivers pick a converter, from `converters`: the converters under this
// gateway's item limits. The ingest limits (gateway/limits/) act twice: a key
// bound to one tenant over its limit, or a key whose own bucket is in debt,
// is refused before its body is read (refuseUnread); otherwise the tenant
// resolver rejects the items of tenants over their limits (reason
// rate_limited), and a request whose items are all rate limited is answered
// 429 / RESOURCE_EXHAUSTED with a retry time.
//
// Every byte a request made the gateway inflate or parse is charged, stored
// or not (DESIGN.md section 10): stored and rate-limited items to their
// tenants, items of no tenant the key may write to the sender, and a body
// that was cut off or could not be decoded to the sender too (chargeUnstored;
// the converters here do it themselves for undecodable bodies). The sender is
// the tenant the request named (remote write's X-Scope-OrgID), else the key's
// only tenant, else the first tenant the body named that the key may write,
// else the key's own bucket (keyBucket). Only a failed write is refunded: the
// client sends the request again and is charged then.
//
// Before a body is read, every receiver passes the decode gate (gate,
// gateway/limits/decode-gate.ts) under the request's flow (decodeFlow): the
// tenant named before the body, else the key's only tenant, else the key's
// bucket. It orders the gateway's CPU by tenant, as the writer's fair queue
// orders the log.
//
// Conversion (convert()) runs inline for small bodies and in the conversion
// pool's worker threads (gateway/convert/worker/) for bodies of at least
// `offloadMinBytes` decoded, with the same results: a 16 MB body holds a
// worker, not the event loop every other tenant's requests need. Remote
// write bodies, decompressed on the event loop, take the same choice
// (convertRemoteWrite).
import { availableParallelism } from 'node:os';
import { hasScope } from '../../src/auth/api-keys.ts';
import type { KeyRing, Principal } from '../../src/auth/api-keys.ts';
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';
import { TenantResolver } from '../convert/common/tenant-resolver.ts';
import { DecodeGate } from '../limits/decode-gate.ts';
import { keyBucket } from '../limits/ingest-limiter.ts';
import type { IngestLimiter } from '../limits/ingest-limiter.ts';
import type { RejectedUsage } from '../limits/rejected-usage.ts';
import { tenantShares } from '../limits/tenant-shares.ts';
import type { TenantShare } from '../limits/tenant-shares.ts';
import type { SignalName, WireFormat } from '../wire/otlp-messages.ts';
import { joinParts } from '../receivers/body-reader.ts';
import type { BodyFailureKind, BodyParts } from '../receivers/body-reader.ts';
import type { TenantSettingsView } from '../../src/tenant/settings/tenant-settings.ts';
import type { DurableWriter } from '../writer/logged-writer.ts';
import type { GatewayMetrics, ThrottleStage } from '../gateway-metrics.ts';
import type { Failure, Outcome } from './outcome.ts';
import type { RowBatch } from '../rowbinary/row-batch.ts';
import type { ItemLimits } from '../convert/common/item-limits.ts';
import { hasTruncations } from '../convert/common/item-tally.ts';
import { rowConverters } from '../convert/row-converters.ts';
import type { RowConverters } from '../convert/row-converters.ts';
import type { RowConverter } from '../convert/common/row-converter.ts';
import type { ConvertPool } from '../convert/worker/convert-pool.ts';
import type { RemoteWriteBatch } from '../prometheus/write-request.ts';

const itemNoun: Readonly<Record<SignalName, string>> = { traces: 'spans', logs: 'log records', metrics: 'data points' };

/** 401 for a missing or unknown key, 403 for a key without the ingest scope. */
export function authorizeIngest(keys: KeyRing, presented: string | undefined): Result<Principal, Failure> {
  if (presented === undefined) return fail({ kind: 'unauthenticated', message: 'missing API key: send "Authorization: Bearer <key>" or "x-api-key: <key>"' });
  const principal = keys.authenticate(presented);
  if (principal === undefined) return fail({ kind: 'unauthenticated', message: 'unknown API key' });
  if (!hasScope(principal, 'ingest')) return fail({ kind: 'forbidden', message: 'this API key lacks the "ingest" scope' });
  return ok(principal);
}

/** The per-tenant ingest limits and where their refusals are counted for usage. */
export interface IngestLimits {
  readonly limiter: IngestLimiter;
  readonly rejected: RejectedUsage;
}

/** One converted request: the tenants its resolver found, its decoded size, and the protocol it came by. */
export interface ConvertedRequest {
  readonly tenants: TenantResolver;
  readonly bytes: number;
  readonly protocol: 'http' | 'grpc';
}

/** Why a body that cost work stored nothing: the rejected-usage reason its bytes are counted under (with 0 items). */
export type UnstoredReason = 'invalid_body' | 'body_too_large' | 'body_timeout';

/** The reasons of bodies refused while they were read; the gateway's own overload (bytes in flight) is not the sender's doing, and is not charged. */
const refusedBodyReasons: Readonly<Partial<Record<BodyFailureKind, UnstoredReason>>> = {
  too_large: 'body_too_large',
  request_timeout: 'body_timeout',
  invalid: 'invalid_body',
};

/** Who sent bytes that stored nothing: the key, the tenant the request named before its body (if any), the tenants its body named so far. */
export interface Sender {
  readonly principal: Principal;
  readonly tenant?: string | undefined;
  readonly tenants?: TenantResolver | undefined;
}

/** The only tenant a key may write, or undefined for a key of several tenants or all. */
function onlyTenant(principal: Principal): string | undefined {
  if (principal.tenants === '*' || principal.tenants.size !== 1) return undefined;
  const [tenant] = principal.tenants;
  return tenant;
}

/** The bucket charged for what a sender sent beyond its tenants' items (see the header). */
function senderOf(sender: Sender): string {
  const named = sender.tenant ?? onlyTenant(sender.principal);
  if (named !== undefined) return named;
  for (const [tenant, found] of sender.tenants?.tenants ?? []) if (found.refused === undefined || found.refused.error.reason === 'rate_limited') return tenant;
  return keyBucket(sender.principal.name);
}

/** The decode gate of a process: about one request per core decoding at once; a request waits at most 5 s for its turn. */
export function defaultDecodeGate(): DecodeGate {
  return new DecodeGate({ concurrency: Math.max(2, availableParallelism()), maxWaitMs: 5000 });
}

/**
 * Bodies of at least this many decoded bytes are converted in a worker
 * (`npm run bench:capacity`, event-loop ms per spans request inline → pooled:
 * 51 KiB 0.7 → 0.8, 154 KiB 2.4 → 0.6, 512 KiB 11.7 → 1.8, 15 MiB 387 → 26).
 * Below ~100 KiB the hand-off costs as much as converting; up to 256 KiB a
 * body holds the loop a few ms inline; and a body converted inline never
 * queues behind another tenant's large one in the pool (its workers are one
 * per core but one: a single worker on two cores).
 */
export const defaultOffloadMinBytes = 256 * 1024;

/** What a pipeline is made of; the gateway builds each (gateway.ts), tests the same real parts over fake ports. */
export interface PipelineParts {
  readonly writer: DurableWriter;
  readonly metrics: GatewayMetrics;
  /** The item limits every converter applies. */
  readonly items: ItemLimits;
  readonly limits: IngestLimits;
  /** Each tenant's retention: an item older is rejected. */
  readonly settings: TenantSettingsView;
  readonly gate: DecodeGate;
  /** The worker pool large bodies are converted in, and the smallest body sent to it (defaultOffloadMinBytes). */
  readonly pool: ConvertPool;
  readonly offloadMinBytes: number;
}

export class IngestPipeline {
  /** The converter of each signal and wire format, under the gateway's item limits. */
  readonly converters: RowConverters;
  /** Passed by every request before its body is read; left once it is converted (or refused), with its decoded bytes. */
  readonly gate: DecodeGate;
  readonly #writer: DurableWriter;
  readonly #metrics: GatewayMetrics;
  readonly #limits: IngestLimits;
  readonly #pool: ConvertPool;
  readonly #offloadMinBytes: number;

  constructor(parts: PipelineParts) {
    this.gate = parts.gate;
    this.#pool = parts.pool;
    this.#offloadMinBytes = parts.offloadMinBytes;
    this.#writer = parts.writer;
    this.#metrics = parts.metrics;
    this.#limits = parts.limits;
    this.converters = this.#charging(rowConverters(undefined, undefined, parts.items, parts.settings));
  }

  /**
   * Converts a request body (a Buffer the caller keeps, or the parts of a
   * read body, which it gives up) as converters[signal][format] does (an
   * undecodable body is charged to its sender): inline below the offload
   * threshold, else in the worker pool. A body whose worker died is
   * `unavailable` (503 / UNAVAILABLE) and not charged: the client sends it again.
   */
  async convert(signal: SignalName, format: WireFormat, body: Buffer | BodyParts, tenants: TenantResolver): Promise<Result<RowBatch, Failure>> {
    const bytes = body.length;
    if (bytes < this.#offloadMinBytes) {
      const inline = this.converters[signal][format].convert(Buffer.isBuffer(body) ? body : joinParts(body), tenants);
      return inline.ok ? inline : fail({ kind: 'invalid', message: inline.error });
    }
    const pooled = await this.#pool.convert(signal, format, body, tenants, this.decodeFlow(tenants.principal));
    if (pooled.ok) return pooled;
    if (pooled.error.kind === 'unavailable') return fail({ kind: 'unavailable', message: pooled.error.message });
    this.chargeUnstored(signal, bytes, 'invalid_body', { principal: tenants.principal, tenants });
    return fail({ kind: 'invalid', message: pooled.error.message });
  }

  /**
   * Converts a decompressed remote write body for `tenant` as `inline` (the
   * receiver's remoteWriteConverter) does: inline below the offload
   * threshold, else in the worker pool, whose dead worker is `unavailable`.
   * The body is given up (it may move to the worker). An invalid body is not
   * charged here: the receiver charges it to the tenant it named.
   */
  async convertRemoteWrite(
    body: Buffer,
    tenant: string,
    tenants: TenantResolver,
    inline: (body: Buffer, tenant: string, tenants: TenantResolver) => Result<RemoteWriteBatch, string>,
  ): Promise<Result<RemoteWriteBatch, Failure>> {
    if (body.length < this.#offloadMinBytes) {
      const converted = inline(body, tenant, tenants);
      return converted.ok ? converted : fail({ kind: 'invalid', message: converted.error });
    }
    const pooled = await this.#pool.convertRemoteWrite({ chunks: [body], length: body.length }, tenant, tenants, this.decodeFlow(tenants.principal, tenant));
    return pooled.ok ? pooled : fail({ kind: pooled.error.kind, message: pooled.error.message });
  }

  /** Ends the conversion workers: requests still converting are answered unavailable. */
  stop(): Promise<void> {
    return this.#pool.stop();
  }

  /** The tenant resolver of one request by `principal`: it admits only tenants within their ingest limits. */
  resolver(principal: Principal): TenantResolver {
    return new TenantResolver(principal, this.#limits.limiter);
  }

  /** The decode gate's flow of a request: the tenant it named before its body, else the key's only tenant, else the key's bucket. */
  decodeFlow(principal: Principal, tenant: string | undefined = onlyTenant(principal)): string {
    return tenant ?? keyBucket(principal.name);
  }

  /**
   * The refusal before the body is read, for a request whose tenant is known
   * (`tenant`, or the key's only one) and over its limit, or whose key's own
   * bucket is in debt (bytes it sent for no tenant).
   */
  refuseUnread(principal: Principal, protocol: 'http' | 'grpc', signal: SignalName, tenant: string | undefined = onlyTenant(principal)): Failure | undefined {
    const limiter = this.#limits.limiter;
    if (tenant !== undefined && !limiter.admits(tenant)) return this.#throttled([tenant], protocol, signal, 'before_body');
    const key = keyBucket(principal.name);
    if (!limiter.admits(key)) return { kind: 'rate_limited', message: limiter.refusal(key), retryAfterSeconds: limiter.retryAfterSeconds(key) };
    return undefined;
  }

  /** Charges the bytes of a body refused while it was read (too large, too slow, not gzip) to its sender. */
  chargeRefusedBody(signal: SignalName, body: { readonly kind: BodyFailureKind; readonly bytes: number }, sender: Sender): void {
    const reason = refusedBodyReasons[body.kind];
    if (reason !== undefined) this.chargeUnstored(signal, body.bytes, reason, sender);
  }

  /** Charges `bytes` read or parsed for a request that stored nothing (cut off, refused, undecodable) to its sender, and counts them as rejected usage. */
  chargeUnstored(signal: SignalName, bytes: number, reason: UnstoredReason, sender: Sender): void {
    const limits = this.#limits;
    if (bytes <= 0) return;
    const target = senderOf(sender);
    limits.limiter.charge(target, bytes);
    if (target === keyBucket(sender.principal.name)) return;
    limits.rejected.record(signal, [{ tenant: target, accepted: { items: 0, bytes: 0 }, rejected: new Map([[reason, { items: 0, bytes }]]), charged: bytes }]);
  }

  /**
   * Stores the accepted items of a converted request; answers once they are
   * written. While ClickHouse is behind, tenants' requests take turns (the
   * request's first tenant stands for it).
   */
  async ingest(signal: SignalName, batch: RowBatch, request: ConvertedRequest): Promise<Outcome> {
    for (const [reason, n] of batch.rejected.byReason) this.#metrics.rejectedItems.inc({ signal, reason }, n);
    if (hasTruncations(batch.rejected)) for (const [reason, n] of batch.rejected.truncated) this.#metrics.truncations.inc({ signal, reason }, n);
    const shares = tenantShares(request.tenants.tenants, batch.rowCount, batch.rejected, request.bytes);
    // Refused items cost their parsing too: charged whatever the answer.
    this.#chargeRefused(shares, request.tenants);
    const limited = batch.rejected.byReason.get('rate_limited') ?? 0;
    if (limited > 0 && limited === batch.rowCount + batch.rejected.count) {
      this.#counted(signal, shares);
      return this.#throttled(
        shares.map((s) => s.tenant),
        request.protocol,
        signal,
        'after_decode',
      );
    }
    // Charged before the write is awaited, so that the next request sees it; refunded if the write fails.
    this.#charge(shares, 1);
    const written = await this.#writer.submit(batch.table, batch.rows, batch.rowCount, request.tenants.firstTenant);
    if (!written.ok) {
      this.#charge(shares, -1);
      switch (written.error.kind) {
        case 'overloaded':
          return { kind: 'overloaded', message: written.error.message, retryAfterSeconds: 1 };
        case 'stopped':
        case 'unavailable':
        case 'timeout':
          return { kind: 'unavailable', message: `storage unavailable: ${written.error.message}` };
        case 'invalid_query':
        case 'internal':
          return { kind: 'unavailable', message: `storage failed: ${written.error.message}` };
      }
    }
    this.#metrics.acceptedItems.inc({ signal }, batch.rowCount);
    this.#counted(signal, shares);
    return { kind: 'accepted', accepted: batch.rowCount, rejected: batch.rejected.count, errorMessage: batch.rejected.message(itemNoun[signal]) };
  }

  /** Charges the admitted tenants their items' bytes (sign 1), or refunds them (-1). */
  #charge(shares: readonly TenantShare[], sign: 1 | -1): void {
    const limiter = this.#limits.limiter;
    for (const share of shares) if (share.charged > 0) limiter.charge(share.tenant, sign * share.charged);
  }

  /** Charges the bytes of refused items: a rate-limited tenant its own, items of no tenant the key may write the sender. */
  #chargeRefused(shares: readonly TenantShare[], tenants: TenantResolver): void {
    const limiter = this.#limits.limiter;
    let senderBytes = 0;
    for (const share of shares) {
      for (const [reason, counted] of share.rejected) {
        if (reason === 'rate_limited') limiter.charge(share.tenant, counted.bytes);
        else if (share.tenant === '' || reason === 'tenant_not_allowed') senderBytes += counted.bytes;
      }
    }
    if (senderBytes > 0) limiter.charge(senderOf({ principal: tenants.principal, tenants }), senderBytes);
  }

  /** The converters, each charging the bytes of a body it cannot decode to the body's sender. */
  #charging(converters: RowConverters): RowConverters {
    const charging = (signal: SignalName, converter: RowConverter): RowConverter => ({
      convert: (body, tenants) => {
        const result = converter.convert(body, tenants);
        if (!result.ok) this.chargeUnstored(signal, body.length, 'invalid_body', { principal: tenants.principal, tenants });
        return result;
      },
    });
    const both = (signal: SignalName): RowConverters[SignalName] => ({
      protobuf: charging(signal, converters[signal].protobuf),
      json: charging(signal, converters[signal].json),
    });
    return { traces: both('traces'), logs: both('logs'), metrics: both('metrics') };
  }

  /** Per-tenant metrics and rejected usage of a request that was answered (stored, or refused as a whole). */
  #counted(signal: SignalName, shares: readonly TenantShare[]): void {
    this.#metrics.tenants.record(signal, shares);
    this.#limits.rejected.record(signal, shares);
  }

  /** The 429 of a request whose tenants are all over their limits: the longest of their retry times. */
  #throttled(tenants: readonly string[], protocol: 'http' | 'grpc', signal: SignalName, stage: ThrottleStage): Failure {
    const limiter = this.#limits.limiter;
    let retryAfterSeconds = 1;
    const messages: string[] = [];
    for (const tenant of tenants) {
      this.#metrics.tenants.throttled(tenant, protocol, signal, stage);
      if (tenant === '') continue;
      retryAfterSeconds = Math.max(retryAfterSeconds, limiter.retryAfterSeconds(tenant));
      if (messages.length < 3) messages.push(limiter.refusal(tenant));
    }
    return { kind: 'rate_limited', message: messages.join('; '), retryAfterSeconds };
  }
}
