// Every statement the API sends to the store through an API harness is
// recorded, and a statement that reads a table holding tenants' rows must
// name its tenant as a bound parameter (`tenant_id = {p:String}` or
// `tenant_id IN {p:Array(String)}`): the rule that no query reaches
// ClickHouse without the tenant predicate, checked across every API suite
// that starts a harness. The tenants and settings tables are read across
// tenants on purpose (the admin list, the settings cache) and are not audited,
// nor are statements that read nothing back (DDL such as the retention TTLs
// the settings routes set for every tenant at once, KILL QUERY).
import type { Store } from '../../../../src/clickhouse/store.ts';

/** Tables whose every row belongs to one tenant. */
const tenantTables = ['logs', 'spans', 'metrics', 'usage_daily', 'trace_index', 'prometheus_metadata', 'metric_series'] as const;

const readsTenantTable = new RegExp(`\\.(${tenantTables.join('|')})\\b`);
const boundTenant = /\btenant_id\s*(=|IN)\s*\{[A-Za-z0-9_]+:(String|Array\(String\))\}/;

const isRead = /^\s*(SELECT|WITH)\b/i;

/** Whether a read of a tenant table binds its tenant (other statements pass). */
export function namesItsTenant(sql: string): boolean {
  return !isRead.test(sql) || !readsTenantTable.test(sql) || boundTenant.test(sql);
}

export interface AuditedStore {
  readonly store: Store;
  /** The statements that read a tenant table without binding a tenant. */
  readonly offenders: () => readonly string[];
  /** How many statements were seen (a harness that saw none audited nothing). */
  readonly seen: () => number;
}

/** The store with its query client wrapped to record every statement's text. */
export function auditedStore(store: Store): AuditedStore {
  const offenders: string[] = [];
  let seen = 0;
  const record = (args: unknown): void => {
    const sql = typeof args === 'object' && args !== null && 'query' in args ? String(args.query) : '';
    seen += 1;
    if (!namesItsTenant(sql)) offenders.push(sql.replace(/\s+/g, ' ').slice(0, 400));
  };
  const client = new Proxy(store.client, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || !['query', 'command', 'exec'].includes(String(property))) return value;
      return (args: unknown) => {
        record(args);
        return (value as (a: unknown) => unknown).call(target, args);
      };
    },
  });
  const wrapped = new Proxy(store, {
    get: (target, property, receiver): unknown => (property === 'client' ? client : Reflect.get(target, property, receiver)),
  });
  return { store: wrapped, offenders: () => offenders, seen: () => seen };
}
