// The Prometheus HTTP API under /prometheus (DESIGN.md section 9): instant
// and range queries of PromQL evaluated by the in-process engine
// (promql-query.ts), format_query and parse_query, the series browser
// (labels, label values, series), metadata and build information, each as
// GET or POST with a form body, with Prometheus' envelope and error types.
// The compatibility mount has already selected the tenant and runs this
// under its query limits.
import type { CompatApi, CompatContext, CompatRouter } from '../compat-api.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { RouteDeps } from '../../query/deps.ts';
import { TenantScan } from '../../query/tenant-scan.ts';
import type { PromError } from './prom-envelope.ts';
import { badData, writeError, writeStatus, writeSuccess } from './prom-envelope.ts';
import type { RequestParams as PromParams } from '../request-params.ts';
import { readRequestParams } from '../request-params.ts';
import { errorStatus } from '../../http/api-error.ts';
import { parseDurationParam, parseTimeParam } from './prom-time.ts';
import type { LabelMatcher } from './engine/sample-source.ts';
import { prettifyExpr } from './engine/format-expr.ts';
import { parsedTree } from './promql-tree.ts';
import { maxPointsPerSeries, parsePromqlQuery, runPromql } from './promql-query.ts';
import type { QueryRequest } from './promql-query.ts';
import { queryData } from './promql-json.ts';
import { SeriesIndexCache } from './series-index.ts';
import { SampleCache } from './sample-cache.ts';
import { labelNames, labelValues, metadata, seriesSets } from './label-queries.ts';
import type { Window } from './label-queries.ts';

/** Prometheus' default lookback delta (staleness). */
export const defaultLookbackMs = 300_000;
/** The Prometheus version whose behaviour this API follows (docs/prometheus.md). */
export const compatibleVersion = '3.16.0';

const nowMs = (deps: RouteDeps): number => Number(deps.now() / 1_000_000n);

function timeParam(params: PromParams, name: string, fallback: number | undefined): Result<number, PromError> {
  const text = params.get(name);
  if (text === undefined || text === '') {
    return fallback === undefined ? fail(badData(`invalid parameter "${name}": cannot parse "" to a valid timestamp`)) : ok(fallback);
  }
  const t = parseTimeParam(text, name);
  return t.ok ? t : fail(badData(t.error));
}

function lookback(params: PromParams): Result<number, PromError> {
  const text = params.get('lookback_delta');
  if (text === undefined || text === '') return ok(defaultLookbackMs);
  const d = parseDurationParam(text, 'lookback_delta');
  if (!d.ok) return fail(badData(d.error));
  return ok(d.value <= 0 ? defaultLookbackMs : d.value);
}

/** The tenant's retention start (Unix ms), and a 400 when [startMs, endMs] spans more than limits.maxQueryDays. */
function tenantLimits(scan: TenantScan, startMs: number, endMs: number): Result<number, PromError> {
  const range = { startNs: BigInt(Math.round(startMs)) * 1_000_000n, endNs: BigInt(Math.round(Math.max(startMs, endMs))) * 1_000_000n };
  const checked = scan.window(range, { what: 'of start/end ', narrow: 'start/end' });
  if (!checked.ok) return fail(badData(checked.error.message));
  return ok(Number(scan.visibleFromNs / 1_000_000n));
}

/** The optional `timeout` parameter (the tenant's own limit applies too). */
function timeoutOf(params: PromParams): Result<number | undefined, PromError> {
  const text = params.get('timeout');
  if (text === undefined || text === '') return ok(undefined);
  const d = parseDurationParam(text, 'timeout');
  return d.ok ? ok(d.value) : fail(badData(d.error));
}

/** What instant and range queries read beside their times: lookback_delta, timeout, the query. */
function queryOf(params: PromParams): Result<Pick<QueryRequest, 'query' | 'lookbackMs' | 'timeoutMs'>, PromError> {
  const lb = lookback(params);
  if (!lb.ok) return lb;
  const timeout = timeoutOf(params);
  if (!timeout.ok) return timeout;
  const parsed = parsePromqlQuery(params.get('query') ?? '');
  if (!parsed.ok) return parsed;
  return ok(
    timeout.value === undefined ? { query: parsed.value, lookbackMs: lb.value } : { query: parsed.value, lookbackMs: lb.value, timeoutMs: timeout.value },
  );
}

/** What a handler answers: the data, and the notes Prometheus' envelope carries beside it. */
interface Answered {
  readonly data: unknown;
  readonly warnings?: string[];
  readonly infos?: string[];
}

async function instantQuery(c: Ctx, params: PromParams): Promise<Result<Answered, PromError>> {
  const t = timeParam(params, 'time', nowMs(c.deps));
  if (!t.ok) return t;
  const q = queryOf(params);
  if (!q.ok) return q;
  return answered(await runPromql(c, { kind: 'instant', ...q.value, t: t.value }));
}

async function rangeQuery(c: Ctx, params: PromParams): Promise<Result<Answered, PromError>> {
  const start = timeParam(params, 'start', undefined);
  if (!start.ok) return start;
  const end = timeParam(params, 'end', undefined);
  if (!end.ok) return end;
  if (end.value < start.value) return fail(badData('invalid parameter "end": end timestamp must not be before start time'));
  const stepText = params.get('step') ?? '';
  const step = parseDurationParam(stepText, 'step');
  if (!step.ok) return fail(badData(step.error));
  if (step.value <= 0) return fail(badData('invalid parameter "step": zero or negative query resolution step widths are not accepted. Try a positive integer'));
  if ((end.value - start.value) / step.value > maxPointsPerSeries) {
    return fail(badData('exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)'));
  }
  const q = queryOf(params);
  if (!q.ok) return q;
  return answered(await runPromql(c, { kind: 'range', ...q.value, start: start.value, end: end.value, step: step.value }));
}

/** Prometheus' API prints at most this many warnings and as many infos, then how many it left out. */
const maxAnnotations = 10;

/** Where the evaluator says a note stands: " (1:5)". */
const notePosition = / \(\d+:\d+\)$/;

/**
 * A query's annotations as Prometheus 3's envelope carries them: infos apart
 * from warnings, one per message (Prometheus keys them by the message without
 * its position, the last one written winning), at most ten of each and a
 * count of the rest.
 */
function answered(r: Result<{ value: Parameters<typeof queryData>[0]; annotations: string[] }, PromError>): Result<Answered, PromError> {
  if (!r.ok) return r;
  const byMessage = new Map<string, string>();
  for (const a of r.value.annotations) {
    const key = a.replace(notePosition, '');
    byMessage.delete(key);
    byMessage.set(key, a);
  }
  const notes = [...byMessage.values()];
  const warnings = capped(
    notes.filter((a) => !a.startsWith('PromQL info:')),
    'warning',
  );
  const infos = capped(
    notes.filter((a) => a.startsWith('PromQL info:')),
    'info',
  );
  return ok({ data: queryData(r.value.value), ...(warnings.length === 0 ? {} : { warnings }), ...(infos.length === 0 ? {} : { infos }) });
}

function capped(notes: readonly string[], kind: 'warning' | 'info'): string[] {
  if (notes.length <= maxAnnotations) return [...notes];
  return [...notes.slice(0, maxAnnotations), `${notes.length - maxAnnotations} more ${kind} annotations omitted`];
}

/** `match[]` selectors → their matchers. */
function selectorsOf(params: PromParams): Result<LabelMatcher[][], PromError> {
  const out: LabelMatcher[][] = [];
  for (const text of params.all('match[]')) {
    const parsed = parsePromqlQuery(text);
    if (!parsed.ok) return fail(badData(`invalid parameter "match[]": ${parsed.error.message}`));
    const e = parsed.value.expr;
    if (e.kind !== 'vector') return fail(badData(`invalid parameter "match[]": "${text}" is not a series selector`));
    if (e.offsetMs !== 0 || e.at !== undefined) return fail(badData('invalid parameter "match[]": offset and @ are not allowed in a series selector'));
    out.push([...e.matchers]);
  }
  return ok(out);
}

/** The window of a series browser request: start/end (default: the tenant's maxQueryDays up to now). */
function browseWindow(deps: RouteDeps, scan: TenantScan, params: PromParams): Result<Window, PromError> {
  const settings = deps.settings.effective(scan.tenantId);
  const end = timeParam(params, 'end', nowMs(deps));
  if (!end.ok) return end;
  const start = timeParam(params, 'start', end.value - settings.limits.maxQueryDays * 86_400_000);
  if (!start.ok) return start;
  const visible = tenantLimits(scan, start.value, end.value);
  if (!visible.ok) return visible;
  return ok({ scan, fromMs: start.value, toMs: end.value, visibleFromMs: visible.value });
}

function limitParam(params: PromParams): Result<number, PromError> {
  const text = params.get('limit');
  if (text === undefined || text === '') return ok(0);
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) return fail(badData(`invalid parameter "limit": cannot parse "${text}" to a valid limit`));
  return ok(n);
}

const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** What every handler is given: the routes' dependencies, the API's series index and sample caches, the request's scan of its tenant's metrics. */
interface Ctx {
  readonly deps: RouteDeps;
  readonly index: SeriesIndexCache;
  readonly samples: SampleCache;
  readonly scan: TenantScan;
}

type Handler = (c: Ctx, params: PromParams, ctx: CompatContext) => Promise<Result<Answered, PromError>>;

/** format_query and parse_query: the query parsed, then printed as Prometheus prettifies it, or as its syntax tree. */
function parsedOnly(
  params: PromParams,
  answer: (query: NonNullable<ReturnType<typeof parsePromqlQuery> & { ok: true }>['value']) => unknown,
): Promise<Result<{ data: unknown }, PromError>> {
  const parsed = parsePromqlQuery(params.get('query') ?? '');
  return Promise.resolve(parsed.ok ? ok({ data: answer(parsed.value) }) : parsed);
}

const handlers: Readonly<Record<string, Handler>> = {
  '/api/v1/query': async (c, params) => instantQuery(c, params),
  '/api/v1/query_range': async (c, params) => rangeQuery(c, params),
  '/api/v1/format_query': (_c, params) => parsedOnly(params, (q) => prettifyExpr(q.expr)),
  '/api/v1/parse_query': (_c, params) => parsedOnly(params, (q) => parsedTree(q.expr)),
  '/api/v1/labels': async ({ deps, index, scan }, params) => {
    const w = browseWindow(deps, scan, params);
    const sel = selectorsOf(params);
    const limit = limitParam(params);
    if (!w.ok) return w;
    if (!sel.ok) return sel;
    if (!limit.ok) return limit;
    return listed(await labelNames(deps, index, w.value, sel.value, limit.value || Infinity));
  },
  '/api/v1/label/:name/values': async ({ deps, index, scan }, params, ctx) => {
    const name = ctx.params['name'] ?? '';
    if (!labelNamePattern.test(name)) return fail(badData(`invalid label name: "${name}"`));
    const w = browseWindow(deps, scan, params);
    const sel = selectorsOf(params);
    const limit = limitParam(params);
    if (!w.ok) return w;
    if (!sel.ok) return sel;
    if (!limit.ok) return limit;
    return listed(await labelValues(deps, index, w.value, name, sel.value, limit.value || Infinity));
  },
  '/api/v1/series': async ({ deps, index, scan }, params) => {
    const sel = selectorsOf(params);
    if (!sel.ok) return sel;
    if (sel.value.length === 0) return fail(badData('no match[] parameter provided'));
    const w = browseWindow(deps, scan, params);
    const limit = limitParam(params);
    if (!w.ok) return w;
    if (!limit.ok) return limit;
    return listed(await seriesSets(deps, index, w.value, sel.value, limit.value || Infinity));
  },
  '/api/v1/metadata': async ({ deps, scan }, params) => {
    const limit = limitParam(params);
    if (!limit.ok) return limit;
    const to = nowMs(deps);
    const visible = tenantLimits(scan, to - 86_400_000, to);
    if (!visible.ok) return visible;
    const data = await metadata(deps, scan, Math.max(visible.value, to - 86_400_000), to, params.get('metric'), limit.value);
    return data.ok ? ok({ data: data.value }) : data;
  },
  '/api/v1/status/buildinfo': () =>
    Promise.resolve(
      ok({
        data: { version: compatibleVersion, revision: 'tenantry', branch: 'tenantry', buildUser: 'tenantry', buildDate: '', goVersion: '' },
      }),
    ),
  // What Grafana's data source also asks: no exemplars, rules or alerts are kept.
  '/api/v1/query_exemplars': () => Promise.resolve(ok({ data: [] })),
  '/api/v1/rules': () => Promise.resolve(ok({ data: { groups: [] } })),
  '/api/v1/alerts': () => Promise.resolve(ok({ data: { alerts: [] } })),
};

function listed(r: Result<{ items: unknown[]; warnings: string[] }, PromError>): Result<{ data: unknown; warnings: string[] }, PromError> {
  return r.ok ? ok({ data: r.value.items, warnings: r.value.warnings }) : r;
}

function register(router: CompatRouter, deps: RouteDeps): void {
  // One cache of series indexes for this API, keyed by tenant inside (series-index.ts).
  const index = new SeriesIndexCache(deps.writes === undefined ? {} : { writes: deps.writes });
  // One cache of recent samples, likewise keyed by tenant (sample-cache.ts).
  const samples = new SampleCache(deps.writes === undefined ? {} : { writes: deps.writes, followWrites: true });
  for (const [path, handler] of Object.entries(handlers)) {
    const route = async (ctx: CompatContext): Promise<void> => {
      // match[] repeats; any other parameter given twice is refused (docs/api.md).
      const params = await readRequestParams(ctx, new Set(['match[]']));
      if (!params.ok) {
        writeStatus(ctx, errorStatus[params.error.code], params.error.message);
        return;
      }
      const r = await handler({ deps, index, samples, scan: TenantScan.open(deps, ctx.state.caller, 'metrics') }, params.value, ctx);
      if (r.ok) writeSuccess(ctx, r.value.data, r.value.warnings, r.value.infos);
      else writeError(ctx, r.error);
    };
    router.get(path, route);
    router.post(path, route);
  }
}

export const prometheusApi: CompatApi = {
  prefix: '/prometheus',
  register,
  fail: writeStatus,
};
