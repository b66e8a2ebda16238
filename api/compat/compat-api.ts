// The compatibility APIs on the API port (DESIGN.md section 9): Prometheus
// under /prometheus, Loki under /loki, Tempo under /tempo. Each speaks its
// upstream system's request and response shapes, errors included, so each
// gives its own error writer; what they share is here: the tenant of every
// request (src/auth/tenant-selection.ts), the key's and the tenant's query
// limits, and a 404 in the API's own shape for paths it does not have.
import type Koa from 'koa';
import Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { KeyRing, Principal } from '../../src/auth/api-keys.ts';
import { selectTenant } from '../../src/auth/tenant-selection.ts';
import type { RouteDeps } from '../query/deps.ts';
import type { ScanCaller } from '../query/tenant-scan.ts';
import type { BodyDeadline } from '../http/request-body.ts';

/** What a compatibility route knows of its request: who asks, and about which tenant. */
export interface CompatState {
  requestId: string;
  principal: Principal;
  tenantId: string;
  /** Aborts once the client stopped waiting (set by the app before anything else). */
  abort: AbortSignal | undefined;
  /** When the request's body must have arrived (set by the app before anything else). */
  bodyDeadline: BodyDeadline | undefined;
  /** The checked caller every statement of the request is scanned for (the key, its tenant, the abort signal). */
  caller: ScanCaller;
}

export type CompatContext = RouterContext<CompatState>;
export type CompatRouter = Router<CompatState>;

/** One compatibility API: where it is mounted, its routes, and how it writes an error. */
export interface CompatApi {
  /** The path prefix, e.g. "/prometheus"; routes are registered without it. */
  readonly prefix: string;
  readonly register: (router: CompatRouter, deps: RouteDeps) => void;
  /** Writes an error the way the upstream system does (status, body, headers). */
  readonly fail: (ctx: Koa.ParameterizedContext<CompatState>, status: number, message: string) => void;
}

interface Mounted {
  readonly api: CompatApi;
  readonly routes: Koa.Middleware<CompatState>;
  readonly methods: Koa.Middleware<CompatState>;
}

function underPrefix(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * A middleware answering every request under the APIs' prefixes and passing
 * every other one on. Its statements are scanned for the key's caller and
 * its tenant (api/query/tenant-scan.ts: the tenant's limits, its retention).
 */
export function compatMiddleware(apis: readonly CompatApi[], deps: RouteDeps & { readonly keys: KeyRing }): Koa.Middleware<CompatState> {
  const mounted: Mounted[] = apis.map((api) => {
    const router = new Router<CompatState>({ prefix: api.prefix });
    api.register(router, deps);
    return { api, routes: router.routes() as Koa.Middleware<CompatState>, methods: router.allowedMethods() as Koa.Middleware<CompatState> };
  });
  return async (ctx, next) => {
    const target = mounted.find((m) => underPrefix(ctx.path, m.api.prefix));
    if (target === undefined) {
      await next();
      return;
    }
    const selected = selectTenant(deps.keys, ctx.headers, 'read');
    if (!selected.ok) {
      if (selected.error.status === 401) ctx.set('www-authenticate', 'Basic realm="tenantry"');
      target.api.fail(ctx, selected.error.status, selected.error.message);
      return;
    }
    const { principal, tenantId } = selected.value;
    ctx.state.principal = principal;
    ctx.state.tenantId = tenantId;
    ctx.state.caller = { principal, tenantId, requestId: ctx.state.requestId, ...(ctx.state.abort === undefined ? {} : { abort: ctx.state.abort }) };
    await target.routes(ctx, async () => {
      await target.methods(ctx, () => Promise.resolve());
    });
    if (ctx.status === 404 && ctx.body === undefined) target.api.fail(ctx, 404, `no route ${ctx.method} ${ctx.path}`);
    else if (ctx.status === 405 && (ctx.body === undefined || ctx.body === 'Method Not Allowed'))
      target.api.fail(ctx, 405, `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('allow')}`);
  };
}
