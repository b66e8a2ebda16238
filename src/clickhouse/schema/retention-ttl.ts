// The TTL of the signal tables from migration 7 (docs/schema.md, "Raising
// retention"): each row expires after the greater of the days stored with it
// (retention_days, fixed at INSERT, part of the partition key) and its
// tenant's current days, so raising a tenant's retention keeps the rows it
// already has. ClickHouse refuses dictGet in a TTL (not deterministic), so the
// tenants whose days differ from the default are written into the expression
// as literal arrays, and the expression is replaced whenever the settings
// change it. The tables carry materialize_ttl_recalculate_only = 1 (migration
// 7), so the MODIFY TTL's materialization recomputes each part's TTL
// information and deletes no rows: it writes again only the columns the TTL
// reads (tenant_id, timestamp, retention_days; a compact part whole) and
// hard-links the others. Whole parts are still dropped by `ttl_only_drop_parts`.
import { quoted } from '../inline-params.ts';
import { queryTable, storageTable } from './ddl.ts';
import type { SchemaTarget } from './ddl.ts';
import { retentionColumn, retentionTables, retentionView } from './tables.ts';
import type { RetentionTable } from './tables.ts';
import type { Store } from '../store.ts';

/** A tenant whose current days for a signal differ from the default. */
export interface TenantDays {
  readonly tenant: string;
  readonly days: number;
}

/** Table setting that makes MATERIALIZE TTL recompute TTL information only (migration 7). */
export const recalculateOnlySetting = 'materialize_ttl_recalculate_only = 1';

/**
 * The TTL expression for the current settings: the greater of a row's stored
 * days and its tenant's current days (`defaultDays` for tenants not listed).
 * Tenant ids are string literals (a TTL takes no query parameters), escaped by
 * the property-tested `quoted` (../inline-params.ts); sorted, so equal settings give an
 * equal text and the migrator can compare it with the table's.
 */
export function retainedTtl(tenants: readonly TenantDays[], defaultDays: number): string {
  const listed = [...tenants].filter((t) => t.days !== defaultDays).sort((a, b) => (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0));
  const current =
    listed.length === 0
      ? String(defaultDays)
      : `transform(tenant_id, [${listed.map((t) => quoted(t.tenant)).join(', ')}], [${listed.map((t) => t.days).join(', ')}], ${defaultDays})`;
  return `toDateTime(timestamp) + toIntervalDay(greatest(${retentionColumn}, ${current}))`;
}

/** The TTL and settings of a table, as system.tables' engine_full prints them. */
function ttlOf(engineFull: string): string | undefined {
  return / TTL (.*?)(?: SETTINGS |$)/.exec(engineFull)?.[1];
}

interface ViewRow {
  tenant_id: string;
  logs_days: number;
  traces_days: number;
  metrics_days: number;
}

/** The expression each signal table should have now, from the tenant_retention view. */
export async function desiredTtls(store: Pick<Store, 'client'>, t: SchemaTarget): Promise<Map<RetentionTable, string>> {
  const rs = await store.client.query({
    query: `SELECT tenant_id, logs_days, traces_days, metrics_days FROM ${queryTable(t, retentionView)}`,
    format: 'JSONEachRow',
  });
  const rows = await rs.json<ViewRow>();
  const out = new Map<RetentionTable, string>();
  for (const r of retentionTables) {
    const defaultDays = rows.find((row) => row.tenant_id === '')?.[r.column];
    if (defaultDays === undefined) continue;
    out.set(
      r.table,
      retainedTtl(
        rows.filter((row) => row.tenant_id !== '').map((row) => ({ tenant: row.tenant_id, days: row[r.column] })),
        defaultDays,
      ),
    );
  }
  return out;
}

const onCluster = (t: SchemaTarget): string => (t.cluster === undefined ? '' : ` ON CLUSTER ${t.cluster}`);

/**
 * Brings each signal table's TTL in line with the current settings; returns
 * the tables changed. Tables without migration 7's setting are left alone
 * (their MATERIALIZE TTL would rewrite every part). The ALTER waits for the
 * recalculation on every replica (mutations_sync = 2), so when it returns no
 * TTL merge can drop a part on the schedule it was written with. Writers racing
 * each other are settled by reading the view again after a change, at most
 * three rounds (the last writer's change is then in place).
 */
export async function applyRetentionTtl(store: Pick<Store, 'client'>, t: SchemaTarget): Promise<RetentionTable[]> {
  const changed = new Set<RetentionTable>();
  for (let round = 0; round < 3; round++) {
    const rs = await store.client.query({
      query: 'SELECT name, engine_full FROM system.tables WHERE database = {db:String} AND name IN {names:Array(String)}',
      query_params: { db: t.database, names: retentionTables.map((r) => storageTable(t, r.table).slice(t.database.length + 1)) },
      format: 'JSONEachRow',
    });
    const engines = new Map((await rs.json<{ name: string; engine_full: string }>()).map((r) => [r.name, r.engine_full]));
    if (![...engines.values()].some((engine) => engine.includes(recalculateOnlySetting))) break;
    const desired = await desiredTtls(store, t);
    let roundChanged = false;
    for (const [table, ttl] of desired) {
      const engine = engines.get(storageTable(t, table).slice(t.database.length + 1));
      if (engine === undefined || !engine.includes(recalculateOnlySetting) || ttlOf(engine) === ttl) continue;
      await store.client.command({
        query: `ALTER TABLE ${storageTable(t, table)}${onCluster(t)} MODIFY TTL ${ttl}`,
        clickhouse_settings: { materialize_ttl_after_modify: 1, mutations_sync: '2' },
      });
      changed.add(table);
      roundChanged = true;
    }
    if (!roundChanged) break;
  }
  return [...changed];
}
