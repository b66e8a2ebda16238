// RejectedUsageSink over usage_rejected_daily: one INSERT per write, the rows
// bound as one JSONEachRow parameter read through format(), straight to the
// store (a small statement every few seconds; an INSERT through the store
// gate would count as ingest activity and pace the API's queries).
import { classifyStoreError } from '../../src/clickhouse/clickhouse-error.ts';
import { queryTable } from '../../src/clickhouse/schema/ddl.ts';
import type { Store } from '../../src/clickhouse/store.ts';
import { fail, ok } from '../../src/result.ts';
import type { RejectedUsageSink } from './rejected-usage.ts';

const structure = 'tenant_id String, day Date, signal String, reason String, items UInt64, bytes UInt64';

/** The sink writing to `store`'s usage_rejected_daily. */
export function clickHouseRejectedUsage(store: Store): RejectedUsageSink {
  const table = queryTable(store, 'usage_rejected_daily');
  return {
    async write(rows) {
      if (rows.length === 0) return ok(undefined);
      try {
        await store.client.command({
          query: `INSERT INTO ${table} (tenant_id, day, signal, reason, items, bytes)
            SELECT tenant_id, day, signal, reason, items, bytes FROM format(JSONEachRow, {structure:String}, {rows:String})`,
          query_params: { structure, rows: rows.map((r) => JSON.stringify(r)).join('\n') },
        });
        return ok(undefined);
      } catch (error) {
        return fail(classifyStoreError(error).message);
      }
    },
  };
}
