// The Prometheus HTTP API under /prometheus (DESIGN.md section 9, issue 16):
// instant and range queries of PromQL evaluated in ClickHouse, the series
// browser (labels, label values, series), metadata and build information,
// each as GET or POST with a form body, with Prometheus' envelope and error
// types. The compatibility mount has already selected the tenant and runs
// this under its query limits.
import type { CompatApi, CompatContext, CompatRouter } from '../compat-api.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { RouteDeps } from '../../v1/deps.ts';
import { tenantWindow } from '../../v1/query/tenant-window.ts';
import { effectiveSettings } from '../../v1/tenants/tenant-settings-view.ts';
import { nsPerDay, oldestVisibleNs } from '../../../src/tenant/settings/tenant-settings.ts';
import type { PromError } from './prom-envelope.ts';
import { badData, writeError, writeStatus, writeSuccess } from './prom-envelope.ts';
import type { RequestParams as PromParams } from '../request-params.ts';
import { readParams } from '../request-params.ts';
import { parseDurationParam, parseTimeParam } from './prom-time.ts';
import type { Expr, LabelMatcher } from './promql-ast.ts';
import { parsePromql } from './promql-parser.ts';
import { evaluateMatrix, evaluateSteps } from './promql-engine.ts';
import type { QueryData } from './promql-engine.ts';
import { labelNames, labelValues, metadata, seriesSets } from './label-queries.ts';
import type { Window } from './label-queries.ts';

/** Prometheus' limit on the points of one series in a range query. */
export const maxPointsPerSeries = 11_000;
/** Prometheus' default lookback delta (staleness). */
export const defaultLookbackMs = 300_000;
/** The Prometheus version whose behaviour this API follows (docs/prometheus.md). */
export const compatibleVersion = '2.42.0';

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

function durationCheck(params: PromParams, name: string): Result<undefined, PromError> {
  const text = params.get(name);
  if (text === undefined || text === '') return ok(undefined);
  const d = parseDurationParam(text, name);
  return d.ok ? ok(undefined) : fail(badData(d.error));
}

/** The tenant's retention start (Unix ms), and a 400 when [startMs, endMs] spans more than limits.maxQueryDays. */
function tenantLimits(deps: RouteDeps, tenantId: string, startMs: number, endMs: number): Result<number, PromError> {
  const settings = effectiveSettings(deps, tenantId);
  const now = deps.now();
  const visibleFromMs = Number(oldestVisibleNs(settings, 'metrics', now) / 1_000_000n);
  const range = { startNs: BigInt(Math.round(startMs)) * 1_000_000n, endNs: BigInt(Math.round(Math.max(startMs, endMs))) * 1_000_000n };
  const checked = tenantWindow(range, settings, 'metrics', now);
  if (!checked.ok) {
    const days = Number((range.endNs - (range.startNs > oldestVisibleNs(settings, 'metrics', now) ? range.startNs : oldestVisibleNs(settings, 'metrics', now))) * 10n / nsPerDay) / 10;
    return fail(badData(`the query time range spans ${days} days, more than this tenant's limits.maxQueryDays (${settings.limits.maxQueryDays}): narrow start/end`));
  }
  return ok(visibleFromMs);
}

/** What instant and range queries read beside their times: lookback_delta, timeout (checked; the tenant's limit applies), the query. */
function queryOf(params: PromParams): Result<{ lookbackMs: number; expr: Expr }, PromError> {
  const lb = lookback(params);
  if (!lb.ok) return lb;
  const timeout = durationCheck(params, 'timeout');
  if (!timeout.ok) return timeout;
  const parsed = parsePromql(params.get('query') ?? '');
  return parsed.ok ? ok({ lookbackMs: lb.value, expr: parsed.value }) : fail(badData(parsed.error.message));
}

async function instantQuery(deps: RouteDeps, tenantId: string, params: PromParams): Promise<Result<QueryData, PromError>> {
  const t = timeParam(params, 'time', nowMs(deps));
  if (!t.ok) return t;
  const q = queryOf(params);
  if (!q.ok) return q;
  const visible = tenantLimits(deps, tenantId, t.value, t.value);
  if (!visible.ok) return visible;
  const ev = { tenantId, visibleFromMs: visible.value };
  const e = q.value.expr;
  if (e.kind === 'matrix') return evaluateMatrix(deps, ev, e, t.value);
  const order = e.kind === 'aggregate' && (e.op === 'topk' || e.op === 'bottomk') ? (e.op === 'topk' ? 'desc' : 'asc') : undefined;
  return evaluateSteps(deps, ev, e, { startMs: t.value, stepMs: 1000, count: 1, lookbackMs: q.value.lookbackMs }, true, order);
}

async function rangeQuery(deps: RouteDeps, tenantId: string, params: PromParams): Promise<Result<QueryData, PromError>> {
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
  if (q.value.expr.kind === 'matrix') return fail(badData('invalid expression type "range vector" for range query, must be Scalar or instant Vector'));
  const visible = tenantLimits(deps, tenantId, start.value, end.value);
  if (!visible.ok) return visible;
  const count = Math.floor((end.value - start.value) / step.value) + 1;
  return evaluateSteps(deps, { tenantId, visibleFromMs: visible.value }, q.value.expr, { startMs: start.value, stepMs: step.value, count, lookbackMs: q.value.lookbackMs }, false);
}

/** `match[]` selectors → their matchers. */
function selectorsOf(params: PromParams): Result<LabelMatcher[][], PromError> {
  const out: LabelMatcher[][] = [];
  for (const text of params.all('match[]')) {
    const parsed = parsePromql(text);
    if (!parsed.ok) return fail(badData(`invalid parameter "match[]": ${parsed.error.message}`));
    if (parsed.value.kind !== 'vector') return fail(badData(`invalid parameter "match[]": "${text}" is not a series selector`));
    if (parsed.value.offsetMs !== 0) return fail(badData('invalid parameter "match[]": offset is not allowed in a series selector'));
    out.push([...parsed.value.matchers]);
  }
  return ok(out);
}

/** The window of a series browser request: start/end (default: the tenant's maxQueryDays up to now). */
function browseWindow(deps: RouteDeps, tenantId: string, params: PromParams): Result<Window, PromError> {
  const settings = effectiveSettings(deps, tenantId);
  const end = timeParam(params, 'end', nowMs(deps));
  if (!end.ok) return end;
  const start = timeParam(params, 'start', end.value - settings.limits.maxQueryDays * 86_400_000);
  if (!start.ok) return start;
  const visible = tenantLimits(deps, tenantId, start.value, end.value);
  if (!visible.ok) return visible;
  return ok({ tenantId, fromMs: start.value, toMs: end.value, visibleFromMs: visible.value });
}

function limitParam(params: PromParams): Result<number, PromError> {
  const text = params.get('limit');
  if (text === undefined || text === '') return ok(0);
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) return fail(badData(`invalid parameter "limit": cannot parse "${text}" to a valid limit`));
  return ok(n);
}

const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

type Handler = (deps: RouteDeps, tenantId: string, params: PromParams, ctx: CompatContext) => Promise<Result<{ data: unknown; warnings?: string[] }, PromError>>;

const handlers: Readonly<Record<string, Handler>> = {
  '/api/v1/query': async (deps, tenantId, params) => wrap(await instantQuery(deps, tenantId, params)),
  '/api/v1/query_range': async (deps, tenantId, params) => wrap(await rangeQuery(deps, tenantId, params)),
  '/api/v1/labels': async (deps, tenantId, params) => {
    const w = browseWindow(deps, tenantId, params);
    const sel = selectorsOf(params);
    const limit = limitParam(params);
    if (!w.ok) return w;
    if (!sel.ok) return sel;
    if (!limit.ok) return limit;
    return listed(await labelNames(deps, w.value, sel.value, limit.value || Infinity));
  },
  '/api/v1/label/:name/values': async (deps, tenantId, params, ctx) => {
    const name = ctx.params['name'] ?? '';
    if (!labelNamePattern.test(name)) return fail(badData(`invalid label name: "${name}"`));
    const w = browseWindow(deps, tenantId, params);
    const sel = selectorsOf(params);
    const limit = limitParam(params);
    if (!w.ok) return w;
    if (!sel.ok) return sel;
    if (!limit.ok) return limit;
    return listed(await labelValues(deps, w.value, name, sel.value, limit.value || Infinity));
  },
  '/api/v1/series': async (deps, tenantId, params) => {
    const sel = selectorsOf(params);
    if (!sel.ok) return sel;
    if (sel.value.length === 0) return fail(badData('no match[] parameter provided'));
    const w = browseWindow(deps, tenantId, params);
    const limit = limitParam(params);
    if (!w.ok) return w;
    if (!limit.ok) return limit;
    return listed(await seriesSets(deps, w.value, sel.value, limit.value || Infinity));
  },
  '/api/v1/metadata': async (deps, tenantId, params) => {
    const limit = limitParam(params);
    if (!limit.ok) return limit;
    const to = nowMs(deps);
    const visible = tenantLimits(deps, tenantId, to - 86_400_000, to);
    if (!visible.ok) return visible;
    const data = await metadata(deps, tenantId, Math.max(visible.value, to - 86_400_000), to, params.get('metric'), limit.value);
    return data.ok ? ok({ data: data.value }) : data;
  },
  '/api/v1/status/buildinfo': () => Promise.resolve(ok({
    data: { version: compatibleVersion, revision: 'tenantry', branch: 'tenantry', buildUser: 'tenantry', buildDate: '', goVersion: '' },
  })),
  // What Grafana's data source also asks: no exemplars, rules or alerts are kept.
  '/api/v1/query_exemplars': () => Promise.resolve(ok({ data: [] })),
  '/api/v1/rules': () => Promise.resolve(ok({ data: { groups: [] } })),
  '/api/v1/alerts': () => Promise.resolve(ok({ data: { alerts: [] } })),
};

function wrap(r: Result<QueryData, PromError>): Result<{ data: unknown }, PromError> {
  return r.ok ? ok({ data: r.value }) : r;
}

function listed(r: Result<{ items: unknown[]; warnings: string[] }, PromError>): Result<{ data: unknown; warnings: string[] }, PromError> {
  return r.ok ? ok({ data: r.value.items, warnings: r.value.warnings }) : r;
}

function register(router: CompatRouter, deps: RouteDeps): void {
  for (const [path, handler] of Object.entries(handlers)) {
    const route = async (ctx: CompatContext): Promise<void> => {
      const params = await readParams(ctx);
      if (!params.ok) { writeError(ctx, badData(params.error)); return; }
      const r = await handler(deps, ctx.state.tenantId, params.value, ctx);
      if (r.ok) writeSuccess(ctx, r.value.data, r.value.warnings);
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
