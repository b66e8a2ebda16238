// Tenant settings in ClickHouse (table tenant_settings, migration 4): one row
// per source, tenant and field, the newest write of a key wins, and a NULL
// value unsets the field for that source. Every process reads all rows
// (settings-cache.ts); the API writes one source's values. Store failures
// come back as values.
import { classifyStoreError } from '../../clickhouse/clickhouse-error.ts';
import type { StoreFailure } from '../../clickhouse/clickhouse-error.ts';
import { queryTable } from '../../clickhouse/schema/ddl.ts';
import { applyRetentionTtl } from '../../clickhouse/schema/retention-ttl.ts';
import type { SchemaTarget } from '../../clickhouse/schema/ddl.ts';
import type { Store } from '../../clickhouse/store.ts';
import type { Result } from '../../result.ts';
import { fail, ok } from '../../result.ts';
import { limitFields, retentionFields } from './tenant-settings.ts';
import type { LimitField, RetentionField, SettingValues, StoredSource, TenantLimits, TenantRetention } from './tenant-settings.ts';

/** Changes one source makes: a number sets a field, null unsets it, an absent field is left as it is. */
export interface SettingChanges {
  readonly limits?: Readonly<Partial<Record<LimitField, number | null>>>;
  readonly retention?: Readonly<Partial<Record<RetentionField, number | null>>>;
}

/** Every stored value: the stack's, and each configured tenant's per source. */
export interface StoredSettings {
  readonly stack: SettingValues;
  readonly tenants: ReadonlyMap<string, Readonly<Partial<Record<'tenant' | 'api', SettingValues>>>>;
}

export interface SettingsStore {
  /** All values currently set, by source and tenant. */
  readAll(): Promise<Result<StoredSettings, StoreFailure>>;
  /** Sets or unsets the fields `changes` names for one source and tenant (`''` for the stack); others stay. */
  write(source: StoredSource, tenantId: string, changes: SettingChanges): Promise<Result<undefined, StoreFailure>>;
  /** Makes `values` the complete set of one source and tenant: fields absent from it are unset. */
  replace(source: StoredSource, tenantId: string, values: SettingValues): Promise<Result<undefined, StoreFailure>>;
}

/** Stored field names, e.g. "limits.maxQueryDays". */
const storedFields: readonly string[] = [...limitFields.map((f) => `limits.${f}`), ...retentionFields.map((f) => `retention.${f}`)];

function rowsOf(changes: SettingChanges): { fields: string[]; values: (number | null)[] } {
  const fields: string[] = [];
  const values: (number | null)[] = [];
  for (const [group, entries] of [
    ['limits', changes.limits],
    ['retention', changes.retention],
  ] as const) {
    for (const [field, value] of Object.entries(entries ?? {}) as [string, number | null | undefined][]) {
      if (value === undefined) continue;
      fields.push(`${group}.${field}`);
      values.push(value);
    }
  }
  return { fields, values };
}

/** Every field: the given value, or null (unset) where `values` has none. */
function completeSet(values: SettingValues): SettingChanges {
  const limits: Partial<Record<LimitField, number | null>> = {};
  const retention: Partial<Record<RetentionField, number | null>> = {};
  for (const f of limitFields) limits[f] = values.limits?.[f] ?? null;
  for (const f of retentionFields) retention[f] = values.retention?.[f] ?? null;
  return { limits, retention };
}

interface Row {
  source: string;
  tenant_id: string;
  field: string;
  value: number;
}

type Mutable = { limits: Partial<Record<LimitField, number>>; retention: Partial<Record<RetentionField, number>> };

function assemble(rows: readonly Row[]): StoredSettings {
  const stack: Mutable = { limits: {}, retention: {} };
  const tenants = new Map<string, Partial<Record<'tenant' | 'api', Mutable>>>();
  for (const row of rows) {
    if (!storedFields.includes(row.field) || typeof row.value !== 'number') continue;
    let into: Mutable;
    if (row.source === 'stack') into = stack;
    else if (row.source === 'tenant' || row.source === 'api') {
      let sources = tenants.get(row.tenant_id);
      if (sources === undefined) {
        sources = {};
        tenants.set(row.tenant_id, sources);
      }
      into = sources[row.source] ??= { limits: {}, retention: {} };
    } else continue;
    const [group, field] = row.field.split('.') as ['limits' | 'retention', string];
    if (group === 'limits') into.limits[field as keyof TenantLimits] = row.value;
    else into.retention[field as keyof TenantRetention] = row.value;
  }
  return { stack, tenants };
}

/**
 * The ClickHouse settings store of a process. Its statements (a read every
 * refresh period, a write per change) go straight to the store: the store
 * gate is for the gateway's block INSERTs and the API's queries, and an
 * INSERT through it counts as ingest activity (queries are then paced).
 */
export function createSettingsStore(store: Pick<Store, 'client'>, schema: SchemaTarget): SettingsStore {
  const table = queryTable(schema, 'tenant_settings');
  const write = async (source: StoredSource, tenantId: string, changes: SettingChanges): Promise<Result<undefined, StoreFailure>> => {
    const { fields, values } = rowsOf(changes);
    if (fields.length === 0) return ok(undefined);
    try {
      await store.client.command({
        query: `INSERT INTO ${table} (source, tenant_id, field, value, updated_at)
          SELECT {source:String}, {tenant:String}, f.1, f.2, now64(9)
          FROM (SELECT arrayJoin(arrayZip({fields:Array(String)}, {values:Array(Nullable(Float64))})) AS f)`,
        query_params: { source, tenant: source === 'stack' ? '' : tenantId, fields, values },
      });
      // A raised retention keeps the rows already stored: the signal tables' TTL follows the settings (migration 7).
      if (fields.some((f) => f.startsWith('retention.'))) await applyRetentionTtl(store, schema);
      return ok(undefined);
    } catch (error) {
      return fail(classifyStoreError(error));
    }
  };
  return {
    async readAll() {
      try {
        // argMax skips NULL arguments; a tuple is never NULL, so a newer NULL (an unset) wins over an older value.
        const rs = await store.client.query({
          query: `SELECT source, tenant_id, field, v.1 AS value FROM (
              SELECT source, tenant_id, field, argMax(tuple(value), updated_at) AS v FROM ${table} GROUP BY source, tenant_id, field
            ) WHERE v.1 IS NOT NULL ORDER BY source, tenant_id, field`,
          format: 'JSONEachRow',
        });
        return ok(assemble(await rs.json<Row>()));
      } catch (error) {
        return fail(classifyStoreError(error));
      }
    },
    write,
    replace: (source, tenantId, values) => write(source, tenantId, completeSet(values)),
  };
}
