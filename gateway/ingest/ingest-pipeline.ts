// Everything after decoding, shared by both protocols: authorize, resolve
// tenants and convert to rows, hand the rows to the group-commit writer,
// and report accepted/rejected counts.
import { hasScope } from '../../src/auth/api-keys.ts';
import type { KeyRing, Principal } from '../../src/auth/api-keys.ts';
import type { SignalName, SignalRequest } from '../wire/otlp-messages.ts';
import type { GroupCommitWriter } from '../writer/group-commit-writer.ts';
import type { GatewayMetrics } from '../gateway-metrics.ts';
import { LogIdGenerator } from './log-id.ts';
import { logRows } from './log-rows.ts';
import { metricRows } from './metric-rows.ts';
import type { Failure, Outcome } from './outcome.ts';
import type { RowBatch } from './row-batch.ts';
import { spanRows } from './span-rows.ts';
import { logRowsDirect } from '../direct/log-rows-direct.ts';
import { spanRowsDirect } from '../direct/span-rows-direct.ts';
import { WireError } from '../direct/wire-reader.ts';
import { TenantResolver } from './tenant-resolver.ts';

const itemNoun: Readonly<Record<SignalName, string>> = { traces: 'spans', logs: 'log records', metrics: 'data points' };

export type AuthResult = { readonly ok: true; readonly principal: Principal } | { readonly ok: false; readonly failure: Failure };

/** 401 for a missing or unknown key, 403 for a key without the ingest scope. */
export function authorizeIngest(keys: KeyRing, presented: string | undefined): AuthResult {
  if (presented === undefined) return { ok: false, failure: { kind: 'unauthenticated', message: 'missing API key: send "Authorization: Bearer <key>" or "x-api-key: <key>"' } };
  const principal = keys.authenticate(presented);
  if (principal === undefined) return { ok: false, failure: { kind: 'unauthenticated', message: 'unknown API key' } };
  if (!hasScope(principal, 'ingest')) return { ok: false, failure: { kind: 'forbidden', message: 'this API key lacks the "ingest" scope' } };
  return { ok: true, principal };
}

export class IngestPipeline {
  readonly #writer: GroupCommitWriter;
  readonly #metrics: GatewayMetrics;
  readonly #logIds = new LogIdGenerator();

  constructor(writer: GroupCommitWriter, metrics: GatewayMetrics) {
    this.#writer = writer;
    this.#metrics = metrics;
  }

  /** Converts a request for `principal` (pure: no I/O); malformed protobuf is reported, not thrown. */
  convert(request: SignalRequest, principal: Principal): RowBatch | { readonly invalid: string } {
    const resolver = new TenantResolver(principal);
    try {
      switch (request.signal) {
        case 'traces': return request.form === 'protobuf'
          ? { table: 'spans', ...spanRowsDirect(request.body, resolver) }
          : spanRows(request.resourceSpans, resolver);
        case 'logs': return request.form === 'protobuf'
          ? { table: 'logs', ...logRowsDirect(request.body, resolver, this.#logIds, Date.now()) }
          : logRows(request.resourceLogs, resolver, this.#logIds, Date.now());
        case 'metrics': return metricRows(request.resourceMetrics, resolver);
      }
    } catch (error) {
      if (error instanceof WireError) return { invalid: `invalid protobuf: ${error.message}` };
      throw error;
    }
  }

  /** Stores the accepted items of a request; answers once they are written. */
  async ingest(request: SignalRequest, principal: Principal): Promise<Outcome> {
    const batch = this.convert(request, principal);
    if ('invalid' in batch) return { kind: 'invalid', message: batch.invalid };
    for (const [reason, n] of batch.rejected.byReason) this.#metrics.rejectedItems.inc({ signal: request.signal, reason }, n);
    const written = await this.#writer.submit(batch.table, batch.rows, batch.rowCount);
    if (!written.ok) {
      switch (written.kind) {
        case 'overloaded': return { kind: 'overloaded', message: written.message, retryAfterSeconds: 1 };
        case 'stopped':
        case 'unavailable':
        case 'timeout': return { kind: 'unavailable', message: `storage unavailable: ${written.message}` };
        case 'invalid_query':
        case 'internal': return { kind: 'unavailable', message: `storage failed: ${written.message}` };
      }
    }
    this.#metrics.acceptedItems.inc({ signal: request.signal }, batch.rowCount);
    return { kind: 'accepted', accepted: batch.rowCount, rejected: batch.rejected.count, errorMessage: batch.rejected.message(itemNoun[request.signal]) };
  }
}
