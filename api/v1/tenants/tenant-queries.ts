// Tenant records in ClickHouse: aggregate states merged at read time, keyset
// pages by id, renames as new argMax states (the newest wins).
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import type { RouteDeps } from '../../query/deps.ts';
import type { DirectoryScan } from '../../query/tenant-scan.ts';

export interface Tenant {
  readonly id: string;
  readonly name: string;
}

interface TenantRow {
  tenant_id: string;
  name: string;
}

const toTenant = (r: TenantRow): Tenant => ({ id: r.tenant_id, name: r.name });

/** Tenants visible to the principal, sorted by id, after `afterId`, at most `limit`. */
export async function listTenants(
  deps: RouteDeps,
  directory: DirectoryScan,
  search: string | undefined,
  afterId: string | undefined,
  limit: number,
): Promise<Result<Tenant[], ApiError>> {
  const statement = directory.statement();
  const { params } = statement;
  const where: string[] = [statement.tenantIs()];
  if (afterId !== undefined) where.push(`tenant_id > ${params.bind(afterId, 'String')}`);
  const having =
    search === undefined || search === ''
      ? ''
      : (() => {
          const s = params.bind(search, 'String');
          return `HAVING positionCaseInsensitiveUTF8(tenant_id, ${s}) > 0 OR positionCaseInsensitiveUTF8(name, ${s}) > 0`;
        })();
  const rows = await deps.runner.rows<TenantRow>(
    statement.finish(`SELECT tenant_id, argMaxMerge(name) AS name FROM ${queryTable(deps.schema, 'tenants')}
    WHERE ${where.join(' AND ')}
    GROUP BY tenant_id ${having} ORDER BY tenant_id LIMIT ${params.bind(limit, 'UInt64')}`),
  );
  return rows.ok ? { ok: true, value: rows.value.map(toTenant) } : rows;
}

/** One tenant, or undefined when it is unknown. */
export async function getTenant(deps: RouteDeps, directory: DirectoryScan, id: string): Promise<Result<Tenant | undefined, ApiError>> {
  const statement = directory.tenant(id);
  const rows = await deps.runner.rows<TenantRow>(
    statement.finish(`SELECT tenant_id, argMaxMerge(name) AS name FROM ${queryTable(deps.schema, 'tenants')}
    WHERE ${statement.tenantIs()} GROUP BY tenant_id`),
  );
  if (!rows.ok) return rows;
  const row = rows.value[0];
  return { ok: true, value: row === undefined ? undefined : toTenant(row) };
}

/** Records a name for a tenant (creating the record when unknown). */
export async function renameTenant(deps: RouteDeps, directory: DirectoryScan, id: string, name: string): Promise<Result<undefined, ApiError>> {
  const statement = directory.tenant(id);
  return deps.runner.command(
    statement.finish(`INSERT INTO ${queryTable(deps.schema, 'tenants')}
    SELECT ${statement.bind(id, 'String')}, now64(3), argMaxState(${statement.bind(name, 'String')}, now64(9))`),
  );
}
