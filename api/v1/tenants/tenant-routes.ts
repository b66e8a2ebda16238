// GET /v1/tenants, GET and PUT /v1/tenants/:id.
import type { Principal } from '../../../src/auth/api-keys.ts';
import type { Result } from '../../../src/result.ts';
import { fail, mapValue, ok } from '../../../src/result.ts';
import { isValidTenantId, tenantIdRule } from '../../../src/tenant/tenant-id.ts';
import type { ApiError } from '../../http/api-error.ts';
import { invalidRequest, notFound } from '../../http/api-error.ts';
import type { ApiRoutes } from '../../http/api-routes.ts';
import { defaultLimit, envelope } from '../../http/pagination.ts';
import type { Envelope } from '../../http/pagination.ts';
import { scope, validate, validateQuery } from '../../http/route-middleware.ts';
import { filterDigest } from '../query/cursor.ts';
import { finishPage, pageCursor } from '../query/record-page.ts';
import type { RouteDeps } from '../deps.ts';
import { NoInput, RenameTenant, TenantListQuery } from './tenant-codecs.ts';
import type { Tenant } from './tenant-queries.ts';
import { getTenant, listTenants, renameTenant } from './tenant-queries.ts';

/** One page of the tenants the key may see, keyset by id. */
async function tenantPage(deps: RouteDeps, principal: Principal, query: TenantListQuery): Promise<Result<Envelope<Tenant>, ApiError>> {
  const digest = filterDigest(['tenants', query.search ?? '']);
  const cursor = pageCursor(query.page, digest, 1);
  if (!cursor.ok) return cursor;
  const page = { limit: query.limit ?? defaultLimit, digest, cursor: cursor.value, frozenEndNs: undefined };
  const tenants = await listTenants(deps, principal, query.search, cursor.value?.key[0], page.limit + 1);
  return mapValue(tenants, (rows) => {
    const finished = finishPage(page, rows, (t) => [t.id]);
    return envelope(finished.rows, finished.next);
  });
}

async function tenantOf(deps: RouteDeps, id: string): Promise<Result<Tenant, ApiError>> {
  const tenant = await getTenant(deps, id);
  if (!tenant.ok) return tenant;
  return tenant.value === undefined ? fail(notFound(`tenant "${id}"`)) : ok(tenant.value);
}

/** Records the name (creating the record of a valid unknown id: GitOps may name a tenant before its first telemetry). */
async function rename(deps: RouteDeps, id: string, body: RenameTenant): Promise<Result<Tenant, ApiError>> {
  if (!isValidTenantId(id)) return fail(invalidRequest(`"${id}" is not a valid tenant id: ${tenantIdRule}`));
  const name = body.name ?? '';
  return mapValue(await renameTenant(deps, id, name), () => ({ id, name }));
}

export function registerTenantRoutes(routes: ApiRoutes, deps: RouteDeps): void {
  routes.get('/v1/tenants', scope(['read', 'admin']), validateQuery(TenantListQuery), (query, { principal }) => tenantPage(deps, principal, query));
  routes.get('/v1/tenants/:id', scope(['read', 'admin'], 'id'), validate(NoInput), (_, { tenantId }) => tenantOf(deps, tenantId));
  routes.put('/v1/tenants/:id', scope(['admin'], 'id'), validate(RenameTenant), (body, { tenantId }) => rename(deps, tenantId, body));
}
