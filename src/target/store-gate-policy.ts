// The store gate's policy for a serving process, from its configuration
// (src/clickhouse/store-gate.ts explains the scheduling). The fixed figures
// were chosen with `npm run bench:isolation` (README, "Fault isolation").
import type { GatePolicy } from '../clickhouse/store-gate.ts';
import { embeddedQueryConnections } from '../clickhouse/store.ts';
import type { Store } from '../clickhouse/store.ts';
import type { QueryLimitsConfig } from '../config/config.ts';

/** Share of embedded ClickHouse's time queries may take while ingest is active. */
export const embeddedQueryShare = 0.25;

/**
 * Store time a tenant's embedded queries may use at once while ingest is
 * active before they are held to their share: a dashboard refresh (tens of
 * PromQL panels of two or three 3-10 ms statements each) fits; a loop of
 * heavy queries is held to its share within its first quarter second.
 */
export const embeddedQueryBurstMs = 250;

/** Threads of an embedded query's statement: one, so that the gateway keeps a core of two. */
export const embeddedQueryThreads = 1;

/**
 * Embedded mode: how long a query's statement runs, once every query slot is
 * held, before it is stopped for another tenant's waiting query (that
 * tenant's longest wait, plus the store's time to end the statement). With
 * two slots and one statement per tenant, it fires only when two tenants
 * hold both slots with long statements and a third tenant's query waits.
 */
export const embeddedTurnMs = 1000;

/** How long a query over its key's limit waits for one of the key's own queries. */
export const keyWaitMs = 2000;

/**
 * `queries` is absent for a gateway-only process (no queries); `batchDelayMs`
 * (the writer's longest wait before an INSERT) is absent for an API-only one.
 */
export function storeGatePolicy(mode: Store['mode'], queries: QueryLimitsConfig | undefined, batchDelayMs: number | undefined): GatePolicy {
  const maxConcurrentQueries = queries?.maxConcurrentQueries ?? Number.POSITIVE_INFINITY;
  const embedded = mode === 'embedded';
  return {
    exclusive: embedded,
    // One statement per connection: the store's query connections are the slots.
    querySlots: embeddedQueryConnections,
    maxConcurrentQueries: () => maxConcurrentQueries,
    keyWaitMs,
    queryShare: embeddedQueryShare,
    queryBurstMs: embeddedQueryBurstMs,
    maxRunMs: embedded ? (queries?.embeddedTimeoutMs ?? Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY,
    turnMs: embeddedTurnMs,
    queryThreads: embedded ? embeddedQueryThreads : undefined,
    // Under steady ingest each table is inserted at least every batch delay; a little more covers the INSERT itself.
    ingestActiveMs: (batchDelayMs ?? 1000) + 1000,
  };
}
