// The Koa application of the /v1 API: request id, metrics and the one error
// shape around everything; bearer-key authentication; request bodies; then
// the routes, each with its own scope and input (see api/http/api-routes.ts).
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import Router from '@koa/router';
import type { KeyRing } from '../src/auth/api-keys.ts';
import { presentedKey } from '../src/auth/api-keys.ts';
import type { Logger } from '../src/log/logger.ts';
import { internal, invalidRequest, methodNotAllowed, unauthorized } from './http/api-error.ts';
import type { ApiError } from './http/api-error.ts';
import type { ApiState } from './http/api-context.ts';
import { apiRoutes } from './http/api-routes.ts';
import { sendError } from './http/reply.ts';
import { bodyReader } from './http/request-body.ts';
import { defaultListenerLimits } from '../src/ops/listener-limits.ts';
import type { HttpMetrics } from './http/http-metrics.ts';
import type { RouteDeps } from './query/deps.ts';
import { registerTenantRoutes } from './v1/tenants/tenant-routes.ts';
import { registerLogRoutes } from './v1/logs/log-routes.ts';
import { registerTraceRoutes } from './v1/traces/trace-routes.ts';
import { registerUsageRoutes } from './v1/usage/usage-routes.ts';
import { registerTimeseriesRoutes } from './v1/timeseries/timeseries-routes.ts';
import { openApiDocument } from './v1/openapi/openapi-document.ts';
import { compatMiddleware } from './compat/compat-api.ts';
import { prometheusApi } from './compat/prometheus/prometheus-api.ts';
import { lokiApi } from './compat/loki/loki-api.ts';
import { tempoApi } from './compat/tempo/tempo-api.ts';

export interface AppDeps extends RouteDeps {
  readonly keys: KeyRing;
  readonly log: Logger;
  readonly metrics: HttpMetrics;
  /** Time a request's body has after its headers (TENANTRY_BODY_TIMEOUT_MS); 408 and the connection closed beyond. */
  readonly bodyTimeoutMs?: number;
}

/** Maps other framework errors carrying a client status (e.g. a malformed URL) to API errors. */
function frameworkError(error: unknown): ApiError | undefined {
  const status = (error as { status?: unknown }).status;
  return status === 400 ? invalidRequest('malformed request URL') : undefined;
}

/** JSON bodies up to 1 MiB after decompression, nested at most 32 levels; form encoding too for PUT /v1/tenants/:id. */
const readBody = bodyReader({ limit: 1_048_576, formMethods: new Set(['PUT']), maxDepth: 32 });

/** Every /v1 route (exported so the OpenAPI test can compare it with the document). */
export function buildRouter(deps: RouteDeps): Router<ApiState> {
  const router = new Router<ApiState>();
  const openApi = JSON.stringify(openApiDocument());
  router.get('/v1/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = openApi;
  });
  const routes = apiRoutes(router);
  registerTenantRoutes(routes, deps);
  registerLogRoutes(routes, deps);
  registerTraceRoutes(routes, deps);
  registerUsageRoutes(routes, deps);
  registerTimeseriesRoutes(routes, deps);
  return router;
}

export function createApp(deps: AppDeps): Koa<ApiState> {
  const app = new Koa<ApiState>();
  app.proxy = false;
  const router = buildRouter(deps);
  // Koa reports failures of a request's streams here (e.g. a connection the listener cut at its timeouts); without a listener it prints their stacks to stderr.
  app.on('error', (error: unknown, ctx?: { readonly state?: Partial<ApiState>; readonly method?: string; readonly path?: string }) => {
    const e = error as { message?: unknown; code?: unknown };
    deps.log.warn('request stream failed', { requestId: ctx?.state?.requestId, method: ctx?.method, path: ctx?.path, error: String(e.message), code: e.code });
  });

  app.use(async (ctx, next) => {
    const started = process.hrtime.bigint();
    ctx.state.requestId = randomUUID();
    const bodyTimeoutMs = deps.bodyTimeoutMs ?? defaultListenerLimits.bodyTimeoutMs;
    ctx.state.bodyDeadline = { atMs: performance.now() + bodyTimeoutMs, timeoutMs: bodyTimeoutMs };
    ctx.set('x-request-id', ctx.state.requestId);
    // A client that closes its connection before the answer is written stops waiting: its statement is killed (api/query/running-statements.ts).
    const gone = new AbortController();
    const onClose = (): void => {
      if (!ctx.res.writableFinished) gone.abort();
    };
    ctx.res.once('close', onClose);
    try {
      ctx.state.abort = gone.signal;
      await next();
      // The compatibility APIs write their own errors (and so set a body).
      if (ctx.status === 405 && ctx.body === undefined)
        sendError(ctx, methodNotAllowed(`${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('allow')}`));
      else if (ctx.status === 501 && ctx.body === undefined) sendError(ctx, methodNotAllowed(`${ctx.method} is not supported`));
      else if (ctx.status === 404 && ctx.body === undefined) sendError(ctx, { code: 'not_found', message: `no route ${ctx.method} ${ctx.path}` });
      // A cut body is the one client failure worth a line: it held a connection for the whole timeout.
      if (ctx.status === 408)
        deps.log.warn('request body did not arrive in time; answered 408 and closed the connection', {
          requestId: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          bodyTimeoutMs,
        });
      // A server fault's answer names only its request id: one line under that id, whatever logged the cause (a load shared by several requests cannot name them all).
      else if (ctx.status >= 500)
        deps.log.warn('answered a server error', { requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, status: ctx.status });
    } catch (error) {
      // Expected failures arrive as values; what is thrown is a framework client error or a bug.
      const mapped = frameworkError(error);
      if (mapped !== undefined) sendError(ctx, mapped);
      else {
        deps.log.error('request failed', { requestId: ctx.state.requestId, error });
        sendError(ctx, internal());
      }
    } finally {
      const route = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      deps.metrics.observe(typeof route === 'string' ? route : 'unmatched', ctx.method, ctx.status, Number(process.hrtime.bigint() - started) / 1e9);
    }
  });

  // The Prometheus, Loki and Tempo APIs: their own tenant selection, bodies and error shapes.
  app.use(compatMiddleware([prometheusApi, lokiApi, tempoApi], deps) as unknown as Koa.Middleware<ApiState>);

  // Authentication for everything under /v1 except the OpenAPI document.
  app.use(async (ctx, next) => {
    if (ctx.path === '/v1/openapi.json') {
      await next();
      return;
    }
    const header = (name: string): string | undefined => {
      const v = ctx.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const principal = deps.keys.authenticate(presentedKey(header('authorization'), header('x-api-key')));
    if (principal === undefined) {
      sendError(ctx, unauthorized());
      return;
    }
    ctx.state.principal = principal;
    await next();
  });

  app.use(async (ctx, next) => {
    const body = await readBody(ctx, ctx.state.bodyDeadline);
    if (!body.ok) {
      sendError(ctx, body.error);
      return;
    }
    ctx.state.body = body.value;
    await next();
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
