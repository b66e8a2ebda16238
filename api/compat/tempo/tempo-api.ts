// The Tempo HTTP API under /tempo (DESIGN.md section 9; docs/tempo.md):
// what Grafana's Tempo data source calls — the health check (echo), TraceQL
// and tag search, tag names and values (v1 and v2), and trace by id as OTLP
// JSON or protobuf. The compat mount has chosen the tenant and runs each
// route under its query limits; errors are text/plain, as Tempo's are.
import type { ParameterizedContext } from 'koa';
import type { Result } from '../../../src/result.ts';
import { fail as failure, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { errorStatus } from '../../http/api-error.ts';
import type { RouteDeps } from '../../v1/deps.ts';
import { effectiveSettings } from '../../v1/tenants/tenant-settings-view.ts';
import type { CompatApi, CompatContext, CompatRouter, CompatState } from '../compat-api.ts';
import { setRetryAfter } from '../compat-api.ts';
import { traceByIdResponseProtobuf, traceProtobuf } from './otlp-json.ts';
import { intrinsicTags, parseTag, tagNames, tagValues } from './tag-queries.ts';
import { maxTraceSpans, parseTraceId, traceById } from './trace-by-id.ts';
import { searchTags, searchTraceQl } from './trace-search.ts';
import type { SearchOptions, SearchTrace, TagSearch } from './trace-search.ts';
import { parseTraceQl } from './traceql-parser.ts';
import type { TraceQuery } from './traceql-parser.ts';
import { lookupWindow, searchWindow } from './tempo-window.ts';
import { boundedInt, defaultLimit, defaultSpss, maxLimit, maxSpss, parseGoDuration, parseLogfmt } from './tempo-params.ts';

/** The version this API answers as in buildinfo (the Tempo release whose API it follows). */
const tempoVersion = '2.8.0';

function fail(ctx: ParameterizedContext<CompatState>, status: number, message: string): void {
  ctx.status = status;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = `${message}\n`;
}

function failWith(ctx: CompatContext, error: ApiError): void {
  setRetryAfter(ctx, error);
  fail(ctx, errorStatus[error.code], error.message);
}

function json(ctx: CompatContext, body: unknown): void {
  ctx.type = 'application/json';
  ctx.body = body;
}

const param = (ctx: CompatContext, name: string): string | undefined => {
  const v = ctx.query[name];
  return Array.isArray(v) ? v[v.length - 1] : v;
};

const searchMetrics = { inspectedBytes: '0', completedJobs: 1, totalJobs: 1 };

/** The request's time window (api/compat/tempo/tempo-window.ts): a lookup's, or a search's and tag lookup's. */
function requestWindow(ctx: CompatContext, deps: RouteDeps, lookup: boolean): ReturnType<typeof searchWindow> {
  const settings = effectiveSettings(deps, ctx.state.tenantId);
  const [start, end] = [param(ctx, 'start'), param(ctx, 'end')];
  const range = { ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }) };
  return (lookup ? lookupWindow : searchWindow)(range, settings, deps.now());
}

/** The `q` parameter parsed (undefined when absent or blank), or the parser's message. */
function traceQl(ctx: CompatContext): Result<TraceQuery | undefined, string> {
  const q = param(ctx, 'q');
  if (q === undefined || q.trim() === '') return ok(undefined);
  const parsed = parseTraceQl(q);
  return parsed.ok ? parsed : failure(parsed.error.message);
}

/** The legacy tag search's parameters: logfmt `tags`, `minDuration` and `maxDuration` (Go durations). */
function tagSearch(ctx: CompatContext): Result<TagSearch, string> {
  const tags = parseLogfmt(param(ctx, 'tags') ?? '');
  if (!tags.ok) return tags;
  const bounds: Record<string, bigint> = {};
  for (const name of ['minDuration', 'maxDuration']) {
    const raw = param(ctx, name);
    if (raw === undefined || raw === '') continue;
    const ns = parseGoDuration(raw);
    if (ns === undefined) return failure(`invalid ${name}: ${JSON.stringify(raw)} is not a duration such as 100ms or 1m30s`);
    bounds[name] = ns;
  }
  const { minDuration, maxDuration } = bounds;
  if (minDuration !== undefined && maxDuration !== undefined && maxDuration < minDuration) return failure('invalid maxDuration: maxDuration is less than minDuration');
  return ok({ tags: tags.value, ...(minDuration === undefined ? {} : { minDurationNs: minDuration }), ...(maxDuration === undefined ? {} : { maxDurationNs: maxDuration }) });
}

/** The search options of a request: window, `limit` and `spss`. */
function searchOptions(ctx: CompatContext, deps: RouteDeps): Result<SearchOptions, string> {
  const range = requestWindow(ctx, deps, false);
  if (!range.ok) return range;
  const limit = boundedInt(param(ctx, 'limit'), 'limit', defaultLimit, maxLimit);
  if (!limit.ok) return limit;
  const spss = boundedInt(param(ctx, 'spss'), 'spss', defaultSpss, maxSpss);
  if (!spss.ok) return spss;
  return ok({ range: range.value, limit: limit.value, spss: spss.value });
}

async function search(ctx: CompatContext, deps: RouteDeps): Promise<void> {
  const options = searchOptions(ctx, deps);
  if (!options.ok) { fail(ctx, 400, options.error); return; }
  const query = traceQl(ctx);
  if (!query.ok) { fail(ctx, 400, query.error); return; }
  let result: Result<SearchTrace[], ApiError>;
  if (query.value !== undefined) {
    result = await searchTraceQl(deps, ctx.state.tenantId, query.value, options.value);
  } else {
    const tags = tagSearch(ctx);
    if (!tags.ok) { fail(ctx, 400, tags.error); return; }
    result = await searchTags(deps, ctx.state.tenantId, tags.value, options.value);
  }
  if (!result.ok) { failWith(ctx, result.error); return; }
  json(ctx, { traces: result.value, metrics: searchMetrics });
}

async function trace(ctx: CompatContext, deps: RouteDeps, version: 1 | 2): Promise<void> {
  const id = parseTraceId(ctx.params['traceId'] ?? '');
  if (!id.ok) { fail(ctx, 400, id.error); return; }
  const range = requestWindow(ctx, deps, true);
  if (!range.ok) { fail(ctx, 400, range.error); return; }
  const found = await traceById(deps, ctx.state.tenantId, id.value, range.value);
  if (!found.ok) { failWith(ctx, found.error); return; }
  const { spans, partial } = found.value;
  const protobuf = (ctx.get('accept') || '').includes('application/protobuf');
  // Another tenant's trace is as absent as one that never existed: 404, v1 and v2 (COMPAT-APIS.md; docs/tempo.md).
  if (spans.length === 0) { fail(ctx, 404, 'trace not found'); return; }
  // v1 has no status field: a trace over the limit comes back with its first maxTraceSpans spans.
  const partialMessage = partial ? `the trace has more than ${maxTraceSpans} spans; the first ${maxTraceSpans} (by start time) are returned` : undefined;
  if (protobuf) {
    ctx.type = 'application/protobuf';
    ctx.body = Buffer.from(version === 1 ? traceProtobuf(spans) : traceByIdResponseProtobuf(spans, partialMessage));
    return;
  }
  if (version === 1) { json(ctx, { batches: spans }); return; }
  json(ctx, { trace: { resourceSpans: spans }, metrics: {}, ...(partialMessage === undefined ? {} : { status: 'PARTIAL', message: partialMessage }) });
}

async function tags(ctx: CompatContext, deps: RouteDeps, version: 1 | 2): Promise<void> {
  const range = requestWindow(ctx, deps, false);
  if (!range.ok) { fail(ctx, 400, range.error); return; }
  const scope = param(ctx, 'scope') ?? 'all';
  if (!['all', 'span', 'resource', 'intrinsic', 'none', ''].includes(scope)) { fail(ctx, 400, `invalid scope: ${JSON.stringify(scope)} (span, resource, intrinsic or none)`); return; }
  const names = scope === 'intrinsic' ? { ok: true as const, value: { span: [], resource: [] } } : await tagNames(deps, ctx.state.tenantId, range.value);
  if (!names.ok) { failWith(ctx, names.error); return; }
  const { span, resource } = names.value;
  if (version === 1) {
    json(ctx, { tagNames: [...new Set([...(scope === 'resource' ? [] : span), ...(scope === 'span' ? [] : resource)])].sort(), metrics: {} });
    return;
  }
  const scopes = [
    ...(['all', 'none', '', 'resource'].includes(scope) ? [{ name: 'resource', tags: resource }] : []),
    ...(['all', 'none', '', 'intrinsic'].includes(scope) ? [{ name: 'intrinsic', tags: intrinsicTags }] : []),
    ...(['all', 'none', '', 'span'].includes(scope) ? [{ name: 'span', tags: span }] : []),
  ];
  json(ctx, { scopes: scopes.filter((s) => s.tags.length > 0), metrics: {} });
}

async function values(ctx: CompatContext, deps: RouteDeps, version: 1 | 2): Promise<void> {
  const range = requestWindow(ctx, deps, false);
  if (!range.ok) { fail(ctx, 400, range.error); return; }
  const raw = ctx.params['tag'] ?? '';
  const query = traceQl(ctx);
  if (!query.ok) { fail(ctx, 400, query.error); return; }
  const tag = version === 1 ? { kind: 'attribute' as const, scope: 'any' as const, name: raw } : parseTag(raw);
  const found = await tagValues(deps, ctx.state.tenantId, tag, range.value, query.value);
  if (!found.ok) { failWith(ctx, found.error); return; }
  json(ctx, version === 1 ? { tagValues: found.value.map((v) => v.value), metrics: {} } : { tagValues: found.value, metrics: {} });
}

function register(router: CompatRouter, deps: RouteDeps): void {
  router.get('/api/echo', (ctx) => { ctx.type = 'text/plain; charset=utf-8'; ctx.body = 'echo\n'; });
  router.get('/api/status/buildinfo', (ctx) => { json(ctx, { version: tempoVersion, revision: 'tenantry', branch: 'tenantry', buildUser: '', buildDate: '', goVersion: '' }); });
  router.get('/api/search', (ctx) => search(ctx, deps));
  router.get('/api/traces/:traceId', (ctx) => trace(ctx, deps, 1));
  router.get('/api/v2/traces/:traceId', (ctx) => trace(ctx, deps, 2));
  router.get('/api/search/tags', (ctx) => tags(ctx, deps, 1));
  router.get('/api/v2/search/tags', (ctx) => tags(ctx, deps, 2));
  router.get('/api/search/tag/:tag/values', (ctx) => values(ctx, deps, 1));
  router.get('/api/v2/search/tag/:tag/values', (ctx) => values(ctx, deps, 2));
}

export const tempoApi: CompatApi = { prefix: '/tempo', register, fail };
