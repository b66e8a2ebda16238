// GET /v1/tenants, GET and PUT /v1/tenants/:id (name, limits, retention),
// GET and PUT /v1/settings/tenant-defaults (the stack's defaults).
import type { Principal } from '../../../src/auth/api-keys.ts';
import type { Caller } from '../../http/route-middleware.ts';
import type { Result } from '../../../src/result.ts';
import { fail, mapValue, ok } from '../../../src/result.ts';
import { isValidTenantId, tenantIdRule } from '../../../src/tenant/tenant-id.ts';
import type { EffectiveSettings, TenantLimits, TenantRetention } from '../../../src/tenant/settings/tenant-settings.ts';
import type { ApiError } from '../../http/api-error.ts';
import { invalidRequest, notFound } from '../../http/api-error.ts';
import type { ApiRoutes } from '../../http/api-routes.ts';
import { defaultLimit, envelope } from '../../http/pagination.ts';
import type { Envelope } from '../../http/pagination.ts';
import { scope, validate, validateQuery, validateWithQuery } from '../../http/route-middleware.ts';
import { filterDigest } from '../query/cursor.ts';
import { finishPage, pageCursor } from '../query/record-page.ts';
import type { RouteDeps } from '../../query/deps.ts';
import { DirectoryScan } from '../../query/tenant-scan.ts';
import { NoInput, TenantDefaults, TenantListQuery, TenantUpdate, TenantUpdateQuery } from './tenant-codecs.ts';
import type { Tenant } from './tenant-queries.ts';
import { getTenant, listTenants, renameTenant } from './tenant-queries.ts';
import { setValues, writeSettings } from '../../query/tenant-settings-view.ts';

/** A tenant as the API shows it: its record and its effective settings, with the source of each value. */
export interface TenantView extends Tenant {
  readonly limits: TenantLimits;
  readonly retention: TenantRetention;
  readonly sources: EffectiveSettings['sources'];
}

function view(deps: RouteDeps, tenant: Tenant): TenantView {
  const { limits, retention, sources } = deps.settings.effective(tenant.id);
  return { ...tenant, limits, retention, sources };
}

/** One page of the tenants the key may see, keyset by id. */
async function tenantPage(deps: RouteDeps, caller: Caller, query: TenantListQuery): Promise<Result<Envelope<TenantView>, ApiError>> {
  const digest = filterDigest(['tenants', query.search ?? '']);
  const cursor = pageCursor(query.page, digest, 1);
  if (!cursor.ok) return cursor;
  const page = { limit: query.limit ?? defaultLimit, digest, cursor: cursor.value, frozenEndNs: undefined };
  const tenants = await listTenants(deps, new DirectoryScan(caller), query.search, cursor.value?.key[0], page.limit + 1);
  return mapValue(tenants, (rows) => {
    const finished = finishPage(page, rows, (t) => [t.id]);
    return envelope(
      finished.rows.map((t) => view(deps, t)),
      finished.next,
    );
  });
}

async function tenantOf(deps: RouteDeps, caller: Caller, id: string): Promise<Result<TenantView, ApiError>> {
  const tenant = await getTenant(deps, new DirectoryScan(caller), id);
  if (!tenant.ok) return tenant;
  return tenant.value === undefined ? fail(notFound(`tenant "${id}"`)) : ok(view(deps, tenant.value));
}

/** The record's name after the update: the one given, or the current one (a new record gets ""). */
async function applyName(deps: RouteDeps, directory: DirectoryScan, id: string, name: string | undefined): Promise<Result<string, ApiError>> {
  if (name === undefined) {
    const current = await getTenant(deps, directory, id);
    if (!current.ok) return current;
    if (current.value !== undefined) return ok(current.value.name);
  }
  // Records the name (creating the record of a valid unknown id: GitOps may name a tenant before its first telemetry).
  return mapValue(await renameTenant(deps, directory, id, name ?? ''), () => name ?? '');
}

/**
 * Updates a tenant. Settings go to source "api" (fields given are set, null
 * unsets one); with `source=tenant` (the operator, for what a Tenant resource
 * declares) limits and retention are that source's complete set instead.
 */
async function update(deps: RouteDeps, caller: Caller, id: string, body: TenantUpdate, query: TenantUpdateQuery): Promise<Result<TenantView, ApiError>> {
  if (!isValidTenantId(id)) return fail(invalidRequest(`"${id}" is not a valid tenant id: ${tenantIdRule}`));
  const changes = { ...(body.limits === undefined ? {} : { limits: body.limits }), ...(body.retention === undefined ? {} : { retention: body.retention }) };
  const written =
    query.source === 'tenant'
      ? await writeSettings(deps, (s) => s.replace('tenant', id, setValues(changes)))
      : body.limits === undefined && body.retention === undefined
        ? ok(undefined)
        : await writeSettings(deps, (s) => s.write('api', id, changes));
  if (!written.ok) return written;
  const name = await applyName(deps, new DirectoryScan(caller), id, body.name);
  return mapValue(name, (n) => view(deps, { id, name: n }));
}

/** What the stack's defaults set (only the fields it sets). */
function stackDefaults(deps: RouteDeps): { limits: Partial<TenantLimits>; retention: Partial<TenantRetention> } {
  const stack = deps.settings.stackValues();
  return { limits: stack.limits ?? {}, retention: stack.retention ?? {} };
}

/** Stack-wide defaults reach every tenant, so they need an admin key for every tenant. */
function allTenants(principal: Principal): Result<undefined, ApiError> {
  return principal.tenants === '*'
    ? ok(undefined)
    : fail({ code: 'forbidden', message: 'tenant defaults apply to every tenant: they need an admin key for all tenants ("tenants": ["*"])' });
}

export function registerTenantRoutes(routes: ApiRoutes, deps: RouteDeps): void {
  routes.get('/v1/tenants', scope(['read', 'admin']), validateQuery(TenantListQuery), (query, caller) => tenantPage(deps, caller, query));
  routes.get('/v1/tenants/:id', scope(['read', 'admin'], 'id'), validate(NoInput), (_, caller) => tenantOf(deps, caller, caller.tenantId));
  routes.put('/v1/tenants/:id', scope(['admin'], 'id'), validateWithQuery(TenantUpdate, TenantUpdateQuery), ({ body, query }, caller) =>
    update(deps, caller, caller.tenantId, body, query),
  );
  routes.get('/v1/settings/tenant-defaults', scope(['admin']), validate(NoInput), (_, { principal }) => {
    const allowed = allTenants(principal);
    return Promise.resolve(allowed.ok ? ok(stackDefaults(deps)) : allowed);
  });
  routes.put('/v1/settings/tenant-defaults', scope(['admin']), validate(TenantDefaults), async (body, { principal }) => {
    const allowed = allTenants(principal);
    if (!allowed.ok) return allowed;
    const written = await writeSettings(deps, (s) => s.replace('stack', '', setValues(body)));
    return written.ok ? ok(stackDefaults(deps)) : written;
  });
}
