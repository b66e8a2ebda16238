// What every route handler sees: the request id, the authenticated principal
// and the helpers that turn Results into responses.
import type { RouterContext } from '@koa/router';
import type { Principal } from '../../src/auth/api-keys.ts';
import { canAccessTenant, hasScope } from '../../src/auth/api-keys.ts';
import { ApiErrorSignal, fail, forbidden, invalidRequest, notFound, ok } from './api-error.ts';
import type { Result } from './api-error.ts';

export interface ApiState {
  requestId: string;
  principal: Principal | undefined;
  /** The parsed request body (undefined when the request has none). */
  body: unknown;
}

export type ApiContext = RouterContext<ApiState>;

/**
 * Sends a Result: the value as JSON, or the error through the error middleware.
 * The body goes to Koa already serialised with its media type set: Koa's own
 * path for objects looks the type up by name on every response.
 */
export function respond(ctx: ApiContext, result: Result<unknown>, status = 200): void {
  if (!result.ok) throw new ApiErrorSignal(result.error);
  ctx.status = status;
  ctx.set('Content-Type', 'application/json; charset=utf-8');
  ctx.body = JSON.stringify(result.value);
}

/** Unwraps a Result or stops the request with its error. */
export function must<T>(result: Result<T>): T {
  if (!result.ok) throw new ApiErrorSignal(result.error);
  return result.value;
}

/**
 * The tenant of the path, if this key may touch it with `scope`. A tenant
 * outside the key's list is "not found", exactly like one that does not
 * exist, so a key learns nothing about other tenants.
 */
export function tenantInScope(ctx: ApiContext, tenantId: string, scopes: readonly ('read' | 'admin')[]): Result<string> {
  const principal = ctx.state.principal;
  if (principal === undefined || !canAccessTenant(principal, tenantId)) return fail(notFound(`tenant "${tenantId}"`));
  if (!scopes.some((s) => hasScope(principal, s))) return fail(forbidden(scopes.join('" or "')));
  return ok(tenantId);
}

/** Rejects query-string parameters the route does not know. */
export function onlyQueryParameters(ctx: ApiContext, allowed: readonly string[]): Result<Readonly<Record<string, string>>> {
  const out: Record<string, string> = {};
  const unknown: string[] = [];
  for (const [name, value] of new URLSearchParams(ctx.querystring)) {
    if (!allowed.includes(name)) unknown.push(name);
    else if (name in out) return fail(invalidRequest(`query parameter "${name}" is given more than once`));
    else out[name] = value;
  }
  if (unknown.length > 0) return fail(invalidRequest(`unknown query parameter${unknown.length > 1 ? 's' : ''}: ${unknown.map((u) => `"${u}"`).join(', ')}`));
  return ok(out);
}
