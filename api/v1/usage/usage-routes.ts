// POST /v1/tenants/:tenant_id/usage.
import type Router from '@koa/router';
import { fail, invalidRequest } from '../../http/api-error.ts';
import type { ApiContext, ApiState } from '../../http/api-context.ts';
import { must, onlyQueryParameters, respond, tenantInScope } from '../../http/api-context.ts';
import { decodeWith } from '../../http/request-decoder.ts';
import { resolveRange } from '../query/time-range.ts';
import type { RouteDeps } from '../deps.ts';
import { UsageQuery } from './usage-codecs.ts';
import { periodsTouching } from './usage-periods.ts';
import { queryUsage } from './usage-queries.ts';

/** At most ten years of days per request. */
export const maxUsagePeriods = 3660;

async function usage(deps: RouteDeps, ctx: ApiContext): Promise<void> {
  const tenantId = must(tenantInScope(ctx, ctx.params['tenant_id'] ?? '', ['read']));
  must(onlyQueryParameters(ctx, []));
  const query = must(decodeWith(UsageQuery, ctx.state.body, 'request body'));
  const range = resolveRange(query.startTime, query.endTime, deps.now());
  if (!range.ok) return must(fail(invalidRequest(range.message)));
  const periods = periodsTouching(range.range.startNs, range.range.endNs, query.interval ?? 'day', maxUsagePeriods);
  if (periods === undefined) return must(fail(invalidRequest(`the range spans more than ${maxUsagePeriods} periods (days or months); narrow it`)));
  respond(ctx, await queryUsage(deps, tenantId, periods));
}

export function registerUsageRoutes(router: Router<ApiState>, deps: RouteDeps): void {
  router.post('/v1/tenants/:tenant_id/usage', (ctx) => usage(deps, ctx));
}
