// RejectedUsageSink over usage_rejected_daily: one INSERT per write, the rows
// bound as one JSONEachRow parameter read through format(), through the
// process's store gate as the gateway's other INSERTs.
import { classifyStoreError } from '../../src/clickhouse/clickhouse-error.ts';
import { queryTable } from '../../src/clickhouse/schema/ddl.ts';
import type { Store } from '../../src/clickhouse/store.ts';
import { openGate } from '../../src/clickhouse/store-gate.ts';
import type { StoreGate } from '../../src/clickhouse/store-gate.ts';
import { fail, ok } from '../../src/result.ts';
import type { RejectedUsageSink } from './rejected-usage.ts';

const structure = 'tenant_id String, day Date, signal String, reason String, items UInt64, bytes UInt64';

/** The sink writing to `store`'s usage_rejected_daily. */
export function clickHouseRejectedUsage(store: Store, gate: StoreGate = openGate): RejectedUsageSink {
  const table = queryTable(store, 'usage_rejected_daily');
  return {
    async write(rows) {
      if (rows.length === 0) return ok(undefined);
      try {
        await gate.insert(() => store.client.command({
          query: `INSERT INTO ${table} (tenant_id, day, signal, reason, items, bytes)
            SELECT tenant_id, day, signal, reason, items, bytes FROM format(JSONEachRow, {structure:String}, {rows:String})`,
          query_params: { structure, rows: rows.map((r) => JSON.stringify(r)).join('\n') },
        }));
        return ok(undefined);
      } catch (error) {
        return fail(classifyStoreError(error).message);
      }
    },
  };
}
