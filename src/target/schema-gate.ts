// Targets gateway and api do not migrate (the migrate Job does); they stay
// unready until the schema they were built for is in place.
import { queryTable } from '../clickhouse/schema/ddl.ts';
import { migrations } from '../clickhouse/schema/migrations.ts';
import type { Store } from '../clickhouse/store.ts';

export const latestSchemaVersion = Math.max(...migrations.map((m) => m.version));

/** True when the store's database has every released migration applied. */
export async function schemaIsCurrent(store: Store): Promise<boolean> {
  try {
    const rs = await store.client.query({
      query: `SELECT max(version) AS v FROM ${queryTable(store, 'schema_migrations')}`,
      format: 'JSONEachRow',
    });
    const [row] = await rs.json<{ v: number | string }>();
    return row !== undefined && Number(row.v) >= latestSchemaVersion;
  } catch {
    // Missing table or unreachable server both mean "not yet": the caller polls again.
    return false;
  }
}
