// POST /v1/tenants/:tenant_id/timeseries.
import type Router from '@koa/router';
import { fail, invalidRequest, ok } from '../../http/api-error.ts';
import type { ApiContext, ApiState } from '../../http/api-context.ts';
import { must, onlyQueryParameters, respond, tenantInScope } from '../../http/api-context.ts';
import { decodeWith } from '../../http/request-decoder.ts';
import { nsToMs, resolveRange } from '../query/time-range.ts';
import type { RouteDeps } from '../deps.ts';
import { bucketTimes, planBuckets } from './bucket-plan.ts';
import { TimeseriesRequest } from './timeseries-codecs.ts';
import { maxSeries, metricSeries } from './timeseries-queries.ts';
import type { SeriesData, Window } from './timeseries-queries.ts';
import { unitNames } from './ucum-units.ts';

const suggestedLabel = (name: string, labels: Readonly<Record<string, string>>): string => {
  const entries = Object.entries(labels);
  return entries.length === 0 ? name : `${name}{${entries.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
};

async function timeseries(deps: RouteDeps, ctx: ApiContext): Promise<void> {
  const tenantId = must(tenantInScope(ctx, ctx.params['tenant_id'] ?? '', ['read']));
  must(onlyQueryParameters(ctx, []));
  const request = must(decodeWith(TimeseriesRequest, ctx.state.body, 'request body'));
  const range = resolveRange(request.startTime, request.endTime, deps.now());
  if (!range.ok) return must(fail(invalidRequest(range.message)));
  const { startNs, endNs } = range.range;
  const startMs = nsToMs(startNs);
  const endMs = Number((endNs + 999_999n) / 1_000_000n);
  const buckets = planBuckets(startMs, endMs, request.interval);
  if (!buckets.ok) return must(fail(invalidRequest(buckets.message)));
  const w: Window = { tenantId, startNs, endNs, buckets: buckets.plan };
  const all: { series: SeriesData; operator: string }[] = [];
  for (const q of request.queries) {
    const operator = q.operator ?? 'avg';
    for (const name of new Set(q.metrics)) {
      for (const series of must(await metricSeries(deps, w, name, q, operator))) all.push({ series, operator });
      if (all.length > maxSeries) must(fail(invalidRequest(`the request makes more than ${maxSeries} series: group by fewer attributes or filter`)));
    }
  }
  respond(ctx, ok({
    times: bucketTimes(w.buckets),
    series: all.map(({ series }) => ({
      name: series.metric.name,
      suggested_label: suggestedLabel(series.metric.name, series.labels),
      unit: unitNames(series.metric.unit),
      labels: series.labels,
      length: series.values.length,
      values: series.values,
    })),
    metadata: all.map(({ series, operator }) => ({
      name: series.metric.name,
      labels: series.labels,
      type: series.metric.type,
      temporality: series.metric.temporality,
      monotonic: series.metric.monotonic,
      unit: series.metric.unit,
      description: series.metric.description,
      operator,
    })),
    query: {
      queries: request.queries.map((q) => ({ metrics: q.metrics, groupBy: q.groupBy ?? [], operator: q.operator ?? 'avg', attributes: q.attributes ?? {} })),
      startTime: startMs / 1000,
      endTime: endMs / 1000,
      interval: w.buckets.stepMs / 1000,
    },
  }));
}

export function registerTimeseriesRoutes(router: Router<ApiState>, deps: RouteDeps): void {
  router.post('/v1/tenants/:tenant_id/timeseries', (ctx) => timeseries(deps, ctx));
}
