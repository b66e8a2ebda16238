// ReplicaRegistry over the gateway_replicas table (migration 4): one row per
// heartbeat, ReplacingMergeTree by replica id, rows expire after a day. Both
// statements use ClickHouse's clock, so replicas need not agree on theirs.
// Two tiny statements every few seconds go straight to the store: the store
// gate is for the gateway's block INSERTs and the API's queries, and an
// INSERT through it counts as ingest activity (queries are then paced).
import { classifyStoreError } from '../../src/clickhouse/clickhouse-error.ts';
import { queryTable } from '../../src/clickhouse/schema/ddl.ts';
import type { Store } from '../../src/clickhouse/store.ts';
import { fail, ok } from '../../src/result.ts';
import type { ReplicaRegistry } from './replica-registry.ts';

/** The registry of the replicas writing to `store`. */
export function clickHouseReplicaRegistry(store: Store): ReplicaRegistry {
  const table = queryTable(store, 'gateway_replicas');
  return {
    async beat(replicaId, liveWithinMs) {
      try {
        await store.client.command({
          query: `INSERT INTO ${table} (replica_id, seen_at) SELECT {id:String}, now64(3)`,
          query_params: { id: replicaId },
        });
        const result = await store.client.query({
          query: `SELECT uniqExact(replica_id) AS n FROM ${table} WHERE seen_at > now64(3) - toIntervalMillisecond({ms:UInt64})`,
          query_params: { ms: Math.round(liveWithinMs) },
          format: 'JSONEachRow',
        });
        const rows = await result.json<{ n: number | string }>();
        return ok(Number(rows[0]?.n ?? 0));
      } catch (error) {
        return fail(classifyStoreError(error).message);
      }
    },
  };
}
