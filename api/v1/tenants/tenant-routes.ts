// GET /v1/tenants, GET and PUT /v1/tenants/:id.
import type Router from '@koa/router';
import { fail, invalidRequest, notFound, ok } from '../../http/api-error.ts';
import type { ApiContext, ApiState } from '../../http/api-context.ts';
import { must, onlyQueryParameters, respond, tenantInScope } from '../../http/api-context.ts';
import { decodeWith } from '../../http/request-decoder.ts';
import { defaultLimit, envelope, Limit } from '../../http/pagination.ts';
import { decodeCursor, encodeCursor, filterDigest } from '../query/cursor.ts';
import type { RouteDeps } from '../deps.ts';
import { isValidTenantId, tenantIdRule } from '../../../src/tenant/tenant-id.ts';
import { RenameTenant, tenantListParameters } from './tenant-codecs.ts';
import { getTenant, listTenants, renameTenant } from './tenant-queries.ts';

async function list(deps: RouteDeps, ctx: ApiContext): Promise<void> {
  const principal = ctx.state.principal;
  if (principal === undefined) return;
  const query = must(onlyQueryParameters(ctx, tenantListParameters));
  if (!principal.scopes.has('read') && !principal.scopes.has('admin')) must(fail({ code: 'forbidden', message: 'this API key lacks the "read" or "admin" scope' }));
  const limit = query['limit'] === undefined ? defaultLimit : must(decodeWith(Limit, /^\d+$/.test(query['limit']) ? Number(query['limit']) : query['limit'], 'query parameter "limit"'));
  const search = query['search'];
  const digest = filterDigest(['tenants', search ?? '']);
  const page = query['page'];
  const after = page === undefined ? undefined : (() => {
    const c = decodeCursor(page, digest, 1);
    return c.ok ? c.cursor.key[0] : must(fail(invalidRequest(c.message)));
  })();
  const tenants = must(await listTenants(deps, principal, search, after, limit + 1));
  const pageRows = tenants.slice(0, limit);
  const last = pageRows[pageRows.length - 1];
  const next = tenants.length > limit && last !== undefined ? encodeCursor(digest, { key: [last.id] }) : null;
  respond(ctx, ok(envelope(pageRows, next)));
}

async function show(deps: RouteDeps, ctx: ApiContext): Promise<void> {
  must(onlyQueryParameters(ctx, []));
  const id = must(tenantInScope(ctx, ctx.params['id'] ?? '', ['read', 'admin']));
  const tenant = must(await getTenant(deps, id));
  respond(ctx, tenant === undefined ? fail(notFound(`tenant "${id}"`)) : ok(tenant));
}

async function rename(deps: RouteDeps, ctx: ApiContext): Promise<void> {
  must(onlyQueryParameters(ctx, []));
  const id = must(tenantInScope(ctx, ctx.params['id'] ?? '', ['admin']));
  if (!isValidTenantId(id)) must(fail(invalidRequest(`"${id}" is not a valid tenant id: ${tenantIdRule}`)));
  const body = must(decodeWith(RenameTenant, ctx.state.body ?? {}, 'request body'));
  const name = body.name ?? '';
  must(await renameTenant(deps, id, name));
  respond(ctx, ok({ id, name }));
}

export function registerTenantRoutes(router: Router<ApiState>, deps: RouteDeps): void {
  router.get('/v1/tenants', (ctx) => list(deps, ctx));
  router.get('/v1/tenants/:id', (ctx) => show(deps, ctx));
  router.put('/v1/tenants/:id', (ctx) => rename(deps, ctx));
}
