// POST /v1/tenants/:tenant_id/logs.
import type Router from '@koa/router';
import { ok } from '../../http/api-error.ts';
import type { ApiContext, ApiState } from '../../http/api-context.ts';
import { must, onlyQueryParameters, respond, tenantInScope } from '../../http/api-context.ts';
import { envelope } from '../../http/pagination.ts';
import { decodeWith } from '../../http/request-decoder.ts';
import { planPage } from '../query/record-page.ts';
import type { RouteDeps } from '../deps.ts';
import { LogQuery } from './log-codecs.ts';
import { queryLogs } from './log-queries.ts';

async function logs(deps: RouteDeps, ctx: ApiContext): Promise<void> {
  const tenantId = must(tenantInScope(ctx, ctx.params['tenant_id'] ?? '', ['read']));
  must(onlyQueryParameters(ctx, []));
  const query = must(decodeWith(LogQuery, ctx.state.body, 'request body'));
  const plan = must(planPage('logs', tenantId, query, 1, deps.now()));
  const page = must(await queryLogs(deps, tenantId, query, plan));
  respond(ctx, ok(envelope(page.rows, page.next)));
}

export function registerLogRoutes(router: Router<ApiState>, deps: RouteDeps): void {
  router.post('/v1/tenants/:tenant_id/logs', (ctx) => logs(deps, ctx));
}
