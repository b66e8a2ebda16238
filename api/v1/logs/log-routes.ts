// POST /v1/tenants/:tenant_id/logs.
import type { ApiRoutes } from '../../http/api-routes.ts';
import { scope, validate } from '../../http/route-middleware.ts';
import type { RouteDeps } from '../../query/deps.ts';
import { LogRequest } from './log-codecs.ts';
import { logPage } from './log-queries.ts';

export function registerLogRoutes(routes: ApiRoutes, deps: RouteDeps): void {
  routes.post('/v1/tenants/:tenant_id/logs', scope(['read'], 'tenant_id'), validate(LogRequest), (query, caller) => logPage(deps, caller, query));
}
