// MetadataSink over prometheus_metadata (schema migration 6): one INSERT per
// write, the rows bound as one JSONEachRow parameter read through format(),
// straight to the store like the other small gateway writes.
import { classifyStoreError } from '../../src/clickhouse/clickhouse-error.ts';
import { queryTable } from '../../src/clickhouse/schema/ddl.ts';
import type { Store } from '../../src/clickhouse/store.ts';
import { fail, ok } from '../../src/result.ts';
import type { MetadataSink } from './metadata-sink.ts';

const structure = 'metric_family String, type String, help String, unit String';

/** The sink writing to `store`'s prometheus_metadata. */
export function clickHouseMetadataSink(store: Store): MetadataSink {
  const table = queryTable(store, 'prometheus_metadata');
  return {
    async write(tenant, rows) {
      if (rows.length === 0) return ok(undefined);
      try {
        await store.client.command({
          query: `INSERT INTO ${table} (tenant_id, metric_family, type, help, unit, updated_at)
            SELECT {tenant:String}, metric_family, type, help, unit, now64(9) FROM format(JSONEachRow, {structure:String}, {rows:String})`,
          query_params: {
            tenant,
            structure,
            rows: rows.map((r) => JSON.stringify({ metric_family: r.metricFamily, type: r.type, help: r.help, unit: r.unit })).join('\n'),
          },
        });
        return ok(undefined);
      } catch (error) {
        return fail(classifyStoreError(error).message);
      }
    },
  };
}
