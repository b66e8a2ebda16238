// The Tempo HTTP API under /tempo (DESIGN.md section 9; docs/tempo.md):
// what Grafana's Tempo data source calls — the health check (echo), TraceQL
// and tag search, tag names and values (v1 and v2), and trace by id as OTLP
// JSON or protobuf. The compat mount has chosen the tenant and runs each
// route under its query limits; errors are text/plain, as Tempo's are.
// Parameters are read by the compat APIs' shared reader (a parameter given
// twice is a 400); handlers return a Result and one adapter writes every
// answer (tempo-reply.ts).
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import type { RouteDeps } from '../../query/deps.ts';
import { TenantScan } from '../../query/tenant-scan.ts';
import type { CompatApi, CompatContext, CompatRouter } from '../compat-api.ts';
import type { RequestParams } from '../request-params.ts';
import { readRequestParams } from '../request-params.ts';
import { traceByIdResponseProtobuf, traceProtobuf } from './otlp-json.ts';
import { intrinsicTags, maxTagValues, parseTag, tagNames, tagValues } from './tag-queries.ts';
import { maxTraceSpans, parseTraceId, traceById } from './trace-by-id.ts';
import { searchTags, searchTraceQl } from './trace-search.ts';
import type { SearchOptions, SearchTrace, TagSearch } from './trace-search.ts';
import { parseTraceQl } from './traceql-parser.ts';
import type { TraceQuery } from './traceql-parser.ts';
import { comparisonProblem } from './traceql-sql.ts';
import { lookupWindow, searchWindow } from './tempo-window.ts';
import { boundedInt, defaultLimit, defaultSpss, durationParam, maxLimit, maxSpss, maxStaleValuesBound, parseLogfmt } from './tempo-params.ts';
import type { TempoBody, TempoError } from './tempo-reply.ts';
import { badRequest, fromApiError, json, notFound, writeAnswer, writeError, writeStatus } from './tempo-reply.ts';

/** The version this API answers as in buildinfo (the Tempo release whose API it follows). */
const tempoVersion = '2.8.0';

/** What a handler answers: the 200's body, or a refusal the adapter writes in Tempo's shape. */
type Answer = Result<TempoBody, TempoError>;

type Handler = (ctx: CompatContext, params: RequestParams, deps: RouteDeps) => Promise<Answer>;

/** The request's scan of its tenant's spans. */
const tracesOf = (ctx: CompatContext, deps: RouteDeps): TenantScan => TenantScan.open(deps, ctx.state.caller, 'traces');

/** A parameter's Result with its message as a 400. */
function param<T>(r: Result<T, string>): Result<T, TempoError> {
  return r.ok ? r : fail(badRequest(r.error));
}

/** The shared query path's Result in Tempo's terms. */
function queried<T>(r: Result<T, ApiError>): Result<T, TempoError> {
  return r.ok ? r : fail(fromApiError(r.error));
}

/**
 * The one adapter between Koa and a handler: reads the parameters, runs the
 * handler, writes its answer. What a handler throws is a bug: logged, and
 * answered as a 500 in Tempo's shape.
 */
function route(deps: RouteDeps, handler: Handler): (ctx: CompatContext) => Promise<void> {
  return async (ctx) => {
    let answer: Answer;
    try {
      const params = await readRequestParams(ctx);
      answer = params.ok ? await handler(ctx, params.value, deps) : fail(fromApiError(params.error));
    } catch (error) {
      deps.log?.error('request failed', { requestId: ctx.state.requestId, error });
      answer = fail({ status: 500, message: 'internal error; the request id identifies it in the server logs' });
    }
    if (answer.ok) writeAnswer(ctx, answer.value);
    else writeError(ctx, answer.error);
  };
}

const searchMetrics = { inspectedBytes: '0', completedJobs: 1, totalJobs: 1 };

/** The request's time window (api/compat/tempo/tempo-window.ts): a lookup's, or a search's and tag lookup's. */
function requestWindow(ctx: CompatContext, params: RequestParams, deps: RouteDeps, lookup: boolean): Result<SearchOptions['range'], TempoError> {
  const scan = tracesOf(ctx, deps);
  const [start, end] = [params.get('start'), params.get('end')];
  const range = { ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }) };
  return param((lookup ? lookupWindow : searchWindow)(range, scan, deps.now()));
}

/** The `q` parameter parsed and checked (undefined when absent or blank), or a 400. */
function traceQl(params: RequestParams): Result<TraceQuery | undefined, TempoError> {
  const q = params.get('q');
  if (q === undefined || q.trim() === '') return ok(undefined);
  const parsed = parseTraceQl(q);
  if (!parsed.ok) return fail(badRequest(parsed.error.message));
  const problem = comparisonProblem(parsed.value);
  return problem === undefined ? parsed : fail(badRequest(problem));
}

/** The legacy tag search's parameters: logfmt `tags`, `minDuration` and `maxDuration` (Go durations). */
function tagSearch(params: RequestParams): Result<TagSearch, TempoError> {
  const tags = param(parseLogfmt(params.get('tags') ?? ''));
  if (!tags.ok) return tags;
  const bounds: Record<string, bigint> = {};
  for (const name of ['minDuration', 'maxDuration']) {
    const raw = params.get(name);
    if (raw === undefined || raw === '') continue;
    const ns = param(durationParam(raw, name));
    if (!ns.ok) return ns;
    bounds[name] = ns.value;
  }
  const { minDuration, maxDuration } = bounds;
  if (minDuration !== undefined && maxDuration !== undefined && maxDuration < minDuration)
    return fail(badRequest('invalid maxDuration: maxDuration is less than minDuration'));
  return ok({
    tags: tags.value,
    ...(minDuration === undefined ? {} : { minDurationNs: minDuration }),
    ...(maxDuration === undefined ? {} : { maxDurationNs: maxDuration }),
  });
}

/** The search options of a request: window, `limit` and `spss`. */
function searchOptions(ctx: CompatContext, params: RequestParams, deps: RouteDeps): Result<SearchOptions, TempoError> {
  const range = requestWindow(ctx, params, deps, false);
  if (!range.ok) return range;
  const limit = param(boundedInt(params.get('limit'), 'limit', defaultLimit, maxLimit));
  if (!limit.ok) return limit;
  const spss = param(boundedInt(params.get('spss'), 'spss', defaultSpss, maxSpss));
  if (!spss.ok) return spss;
  return ok({ range: range.value, limit: limit.value, spss: spss.value });
}

/** The tag endpoints' `limit` (1 to maxTagValues) and `maxStaleValues` (checked; Tenantry keeps no stale values). */
function tagLimit(params: RequestParams): Result<number, TempoError> {
  const stale = param(boundedInt(params.get('maxStaleValues'), 'maxStaleValues', 0, maxStaleValuesBound, 0));
  if (!stale.ok) return stale;
  return param(boundedInt(params.get('limit'), 'limit', maxTagValues, maxTagValues));
}

const search: Handler = async (ctx, params, deps) => {
  const options = searchOptions(ctx, params, deps);
  if (!options.ok) return options;
  const query = traceQl(params);
  if (!query.ok) return query;
  let result: Result<SearchTrace[], ApiError>;
  if (query.value !== undefined) {
    result = await searchTraceQl(deps, tracesOf(ctx, deps), query.value, options.value);
  } else {
    const tags = tagSearch(params);
    if (!tags.ok) return tags;
    result = await searchTags(deps, tracesOf(ctx, deps), tags.value, options.value);
  }
  const found = queried(result);
  return found.ok ? ok(json({ traces: found.value, metrics: searchMetrics })) : found;
};

function trace(version: 1 | 2): Handler {
  return async (ctx, params, deps) => {
    const id = param(parseTraceId(ctx.params['traceId'] ?? ''));
    if (!id.ok) return id;
    const range = requestWindow(ctx, params, deps, true);
    if (!range.ok) return range;
    const found = queried(await traceById(deps, tracesOf(ctx, deps), id.value, range.value));
    if (!found.ok) return found;
    const { spans, partial } = found.value;
    // Another tenant's trace is as absent as one that never existed: 404, v1 and v2 (COMPAT-APIS.md; docs/tempo.md).
    if (spans.length === 0) return fail(notFound('trace not found'));
    // v1 has no status field: a trace over the limit comes back with its first maxTraceSpans spans.
    const partialMessage = partial ? `the trace has more than ${maxTraceSpans} spans; the first ${maxTraceSpans} (by start time) are returned` : undefined;
    if ((ctx.get('accept') || '').includes('application/protobuf')) {
      return ok({ kind: 'protobuf', body: version === 1 ? traceProtobuf(spans) : traceByIdResponseProtobuf(spans, partialMessage) });
    }
    if (version === 1) return ok(json({ batches: spans }));
    return ok(json({ trace: { resourceSpans: spans }, metrics: {}, ...(partialMessage === undefined ? {} : { status: 'PARTIAL', message: partialMessage }) }));
  };
}

function tags(version: 1 | 2): Handler {
  return async (ctx, params, deps) => {
    const range = requestWindow(ctx, params, deps, false);
    if (!range.ok) return range;
    const limit = tagLimit(params);
    if (!limit.ok) return limit;
    const scope = params.get('scope') ?? 'all';
    if (!['all', 'span', 'resource', 'intrinsic', 'none', ''].includes(scope))
      return fail(badRequest(`invalid scope: ${JSON.stringify(scope.slice(0, 100))} (span, resource, intrinsic or none)`));
    const names = scope === 'intrinsic' ? ok({ span: [], resource: [] }) : queried(await tagNames(deps, tracesOf(ctx, deps), range.value));
    if (!names.ok) return names;
    const [span, resource] = [names.value.span.slice(0, limit.value), names.value.resource.slice(0, limit.value)];
    if (version === 1) {
      return ok(
        json({
          tagNames: [...new Set([...(scope === 'resource' ? [] : span), ...(scope === 'span' ? [] : resource)])].sort().slice(0, limit.value),
          metrics: {},
        }),
      );
    }
    const scopes = [
      ...(['all', 'none', '', 'resource'].includes(scope) ? [{ name: 'resource', tags: resource }] : []),
      ...(['all', 'none', '', 'intrinsic'].includes(scope) ? [{ name: 'intrinsic', tags: intrinsicTags.slice(0, limit.value) }] : []),
      ...(['all', 'none', '', 'span'].includes(scope) ? [{ name: 'span', tags: span }] : []),
    ];
    return ok(json({ scopes: scopes.filter((s) => s.tags.length > 0), metrics: {} }));
  };
}

function values(version: 1 | 2): Handler {
  return async (ctx, params, deps) => {
    const range = requestWindow(ctx, params, deps, false);
    if (!range.ok) return range;
    const limit = tagLimit(params);
    if (!limit.ok) return limit;
    const query = traceQl(params);
    if (!query.ok) return query;
    const raw = ctx.params['tag'] ?? '';
    const tag = version === 1 ? { kind: 'attribute' as const, scope: 'any' as const, name: raw } : parseTag(raw);
    const found = queried(await tagValues(deps, tracesOf(ctx, deps), tag, range.value, query.value, limit.value));
    if (!found.ok) return found;
    return ok(json(version === 1 ? { tagValues: found.value.map((v) => v.value), metrics: {} } : { tagValues: found.value, metrics: {} }));
  };
}

const echo: Handler = () => Promise.resolve(ok({ kind: 'text', body: 'echo\n' }));
const buildInfo: Handler = () =>
  Promise.resolve(ok(json({ version: tempoVersion, revision: 'tenantry', branch: 'tenantry', buildUser: '', buildDate: '', goVersion: '' })));

function register(router: CompatRouter, deps: RouteDeps): void {
  const get = (path: string, handler: Handler): void => {
    router.get(path, route(deps, handler));
  };
  get('/api/echo', echo);
  get('/api/status/buildinfo', buildInfo);
  get('/api/search', search);
  get('/api/traces/:traceId', trace(1));
  get('/api/v2/traces/:traceId', trace(2));
  get('/api/search/tags', tags(1));
  get('/api/v2/search/tags', tags(2));
  get('/api/search/tag/:tag/values', values(1));
  get('/api/v2/search/tag/:tag/values', values(2));
}

export const tempoApi: CompatApi = { prefix: '/tempo', register, fail: writeStatus };
