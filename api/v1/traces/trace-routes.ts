// POST /v1/tenants/:tenant_id/traces.
import type { ApiRoutes } from '../../http/api-routes.ts';
import { scope, validate } from '../../http/route-middleware.ts';
import type { RouteDeps } from '../../query/deps.ts';
import { TraceRequest } from './trace-codecs.ts';
import { tracePage } from './trace-queries.ts';

export function registerTraceRoutes(routes: ApiRoutes, deps: RouteDeps): void {
  routes.post('/v1/tenants/:tenant_id/traces', scope(['read'], 'tenant_id'), validate(TraceRequest), (query, caller) => tracePage(deps, caller, query));
}
