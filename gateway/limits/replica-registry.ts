// The port through which gateway replicas learn how many of them share each
// tenant's global ingest limit: each replica records a heartbeat under its
// own random id and reads how many ids were seen recently. The ClickHouse
// implementation (clickhouse-replica-registry.ts) uses the gateway_replicas
// table; unit tests use an in-memory one.
import type { Result } from '../../src/result.ts';

export interface ReplicaRegistry {
  /**
   * Records that `replicaId` is alive now, then answers how many replicas
   * (itself included) were seen within the last `liveWithinMs`; a failure is
   * the store's message.
   */
  beat(replicaId: string, liveWithinMs: number): Promise<Result<number, string>>;
}
