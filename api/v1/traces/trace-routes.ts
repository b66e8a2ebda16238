// POST /v1/tenants/:tenant_id/traces.
import type Router from '@koa/router';
import { fail, invalidRequest, ok } from '../../http/api-error.ts';
import type { ApiContext, ApiState } from '../../http/api-context.ts';
import { must, onlyQueryParameters, respond, tenantInScope } from '../../http/api-context.ts';
import { envelope } from '../../http/pagination.ts';
import { decodeWith } from '../../http/request-decoder.ts';
import { planPage } from '../query/record-page.ts';
import type { RouteDeps } from '../deps.ts';
import { TraceQuery } from './trace-codecs.ts';
import { queryTraces } from './trace-queries.ts';

async function traces(deps: RouteDeps, ctx: ApiContext): Promise<void> {
  const tenantId = must(tenantInScope(ctx, ctx.params['tenant_id'] ?? '', ['read']));
  must(onlyQueryParameters(ctx, []));
  const query = must(decodeWith(TraceQuery, ctx.state.body, 'request body'));
  if (query.durationMin !== undefined && query.durationMax !== undefined && query.durationMin > query.durationMax) {
    must(fail(invalidRequest('durationMin is greater than durationMax')));
  }
  const plan = must(planPage('traces', tenantId, query, 2, deps.now()));
  const page = must(await queryTraces(deps, tenantId, query, plan));
  respond(ctx, ok(envelope(page.rows, page.next)));
}

export function registerTraceRoutes(router: Router<ApiState>, deps: RouteDeps): void {
  router.post('/v1/tenants/:tenant_id/traces', (ctx) => traces(deps, ctx));
}
