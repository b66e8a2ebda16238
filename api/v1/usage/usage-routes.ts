// POST /v1/tenants/:tenant_id/usage, under the tenant's query limits
// (concurrency and timeout; usage reads daily sums, so neither retention nor
// maxQueryDays applies).
import type { ApiRoutes } from '../../http/api-routes.ts';
import { scope, validate } from '../../http/route-middleware.ts';
import type { RouteDeps } from '../../query/deps.ts';
import { UsageQuery } from './usage-codecs.ts';
import { usageReport } from './usage-queries.ts';

export function registerUsageRoutes(routes: ApiRoutes, deps: RouteDeps): void {
  routes.post('/v1/tenants/:tenant_id/usage', scope(['read'], 'tenant_id'), validate(UsageQuery), (query, caller) => usageReport(deps, caller, query));
}
