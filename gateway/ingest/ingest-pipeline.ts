// Everything after conversion, shared by both protocols: hand a request's
// rows to the writer, count accepted, rejected and truncated items, and
// report the outcome. Authorizing the key (authorizeIngest) happens before
// the receivers pick a converter, from `converters`: the converters under
// this gateway's item limits.
import { hasScope } from '../../src/auth/api-keys.ts';
import type { KeyRing, Principal } from '../../src/auth/api-keys.ts';
import type { SignalName } from '../wire/otlp-messages.ts';
import type { DurableWriter } from '../writer/logged-writer.ts';
import type { GatewayMetrics } from '../gateway-metrics.ts';
import type { Failure, Outcome } from './outcome.ts';
import type { RowBatch } from '../rowbinary/row-batch.ts';
import { defaultItemLimits } from '../convert/common/item-limits.ts';
import type { ItemLimits } from '../convert/common/item-limits.ts';
import { hasTruncations } from '../convert/common/item-tally.ts';
import { rowConverters } from '../convert/row-converters.ts';
import type { RowConverters } from '../convert/row-converters.ts';

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
  /** The converter of each signal and wire format, under the gateway's item limits. */
  readonly converters: RowConverters;
  readonly #writer: DurableWriter;
  readonly #metrics: GatewayMetrics;

  constructor(writer: DurableWriter, metrics: GatewayMetrics, limits: ItemLimits = defaultItemLimits) {
    this.#writer = writer;
    this.#metrics = metrics;
    this.converters = rowConverters(undefined, undefined, limits);
  }

  /**
   * Stores the accepted items of a converted request; answers once they are
   * written. `tenant` is whom they are for: while ClickHouse is behind,
   * tenants' requests take turns.
   */
  async ingest(signal: SignalName, batch: RowBatch, tenant = ''): Promise<Outcome> {
    for (const [reason, n] of batch.rejected.byReason) this.#metrics.rejectedItems.inc({ signal, reason }, n);
    if (hasTruncations(batch.rejected)) for (const [reason, n] of batch.rejected.truncated) this.#metrics.truncations.inc({ signal, reason }, n);
    const written = await this.#writer.submit(batch.table, batch.rows, batch.rowCount, tenant);
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
    this.#metrics.acceptedItems.inc({ signal }, batch.rowCount);
    return { kind: 'accepted', accepted: batch.rowCount, rejected: batch.rejected.count, errorMessage: batch.rejected.message(itemNoun[signal]) };
  }
}
