// POST /v1/tenants/:tenant_id/timeseries.
import type { ApiRoutes } from '../../http/api-routes.ts';
import { scope, validate } from '../../http/route-middleware.ts';
import type { RouteDeps } from '../../query/deps.ts';
import { BoundedTimeseriesRequest } from './timeseries-codecs.ts';
import { timeseriesReport } from './timeseries-report.ts';

export function registerTimeseriesRoutes(routes: ApiRoutes, deps: RouteDeps): void {
  routes.post('/v1/tenants/:tenant_id/timeseries', scope(['read'], 'tenant_id'), validate(BoundedTimeseriesRequest), (request, caller) =>
    timeseriesReport(deps, caller, request),
  );
}
