// Tenant records in ClickHouse: aggregate states merged at read time, keyset
// pages by id, renames as new argMax states (the newest wins).
import type { Principal } from '../../../src/auth/api-keys.ts';
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { SqlParams } from '../../query/sql-params.ts';
import type { RouteDeps } from '../../query/deps.ts';

export interface Tenant {
  readonly id: string;
  readonly name: string;
}

interface TenantRow { tenant_id: string; name: string }

const toTenant = (r: TenantRow): Tenant => ({ id: r.tenant_id, name: r.name });

/** Tenants visible to the principal, sorted by id, after `afterId`, at most `limit`. */
export async function listTenants(deps: RouteDeps, principal: Principal, search: string | undefined, afterId: string | undefined, limit: number): Promise<Result<Tenant[], ApiError>> {
  const params = new SqlParams();
  const where: string[] = [];
  if (principal.tenants !== '*') where.push(`tenant_id IN ${params.bind([...principal.tenants], 'Array(String)')}`);
  if (afterId !== undefined) where.push(`tenant_id > ${params.bind(afterId, 'String')}`);
  const having = search === undefined || search === ''
    ? ''
    : (() => {
        const s = params.bind(search, 'String');
        return `HAVING positionCaseInsensitiveUTF8(tenant_id, ${s}) > 0 OR positionCaseInsensitiveUTF8(name, ${s}) > 0`;
      })();
  const sql = `SELECT tenant_id, argMaxMerge(name) AS name FROM ${queryTable(deps.schema, 'tenants')}
    ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
    GROUP BY tenant_id ${having} ORDER BY tenant_id LIMIT ${params.bind(limit, 'UInt64')}`;
  const rows = await deps.runner.rows<TenantRow>(sql, params);
  return rows.ok ? { ok: true, value: rows.value.map(toTenant) } : rows;
}

/** One tenant, or undefined when it is unknown. */
export async function getTenant(deps: RouteDeps, id: string): Promise<Result<Tenant | undefined, ApiError>> {
  const params = new SqlParams();
  const sql = `SELECT tenant_id, argMaxMerge(name) AS name FROM ${queryTable(deps.schema, 'tenants')}
    WHERE tenant_id = ${params.bind(id, 'String')} GROUP BY tenant_id`;
  const rows = await deps.runner.rows<TenantRow>(sql, params);
  if (!rows.ok) return rows;
  const row = rows.value[0];
  return { ok: true, value: row === undefined ? undefined : toTenant(row) };
}

/** Records a name for a tenant (creating the record when unknown). */
export async function renameTenant(deps: RouteDeps, id: string, name: string): Promise<Result<undefined, ApiError>> {
  const params = new SqlParams();
  const sql = `INSERT INTO ${queryTable(deps.schema, 'tenants')} SELECT ${params.bind(id, 'String')}, now64(3), argMaxState(${params.bind(name, 'String')}, now64(9))`;
  return deps.runner.command(sql, params);
}
