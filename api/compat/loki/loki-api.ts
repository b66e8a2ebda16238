// The Loki HTTP API under /loki (DESIGN.md section 9, docs/loki.md): the
// query, label, series and index endpoints Grafana's Loki data source calls,
// with Loki's parameters, response shapes and text/plain errors. The mount
// (../compat-api.ts) has already chosen the tenant and applies its limits.
import type Koa from 'koa';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { errorStatus } from '../../http/api-error.ts';
import type { RouteDeps } from '../../v1/deps.ts';
import type { CompatApi, CompatContext, CompatRouter, CompatState } from '../compat-api.ts';
import { setRetryAfter } from '../compat-api.ts';
import type { RequestParams } from '../request-params.ts';
import { readParams } from '../request-params.ts';
import type { LogQuery, Matcher, MetricExpr } from './logql-ast.ts';
import { parseLogql } from './logql-ast.ts';
import type { Form } from './loki-params.ts';
import { parseBounds, parseDirection, parseLimit, parseStep, parseTimestamp } from './loki-params.ts';
import { checkQuery, checkSelector, detectedLabels, formatValue, indexStats, labelNames, labelValues, querySamples, queryStreams, series, statsSummary, visibleWindow, volume } from './loki-queries.ts';

/** The version Tenantry answers as (the Loki release whose documented API it follows). */
export const lokiVersion = '3.7.8';

function writeError(ctx: Koa.ParameterizedContext<CompatState>, status: number, message: string): void {
  ctx.status = status;
  ctx.type = 'text/plain; charset=utf-8';
  ctx.body = `${message}\n`;
}

function success(ctx: CompatContext, data: unknown): void {
  ctx.status = 200;
  ctx.body = { status: 'success', data };
}

function apiFailure(ctx: CompatContext, error: ApiError): void {
  setRetryAfter(ctx, error);
  writeError(ctx, errorStatus[error.code], error.message);
}

/** A selector parameter (`query`, `match[]`) as matchers; a pipeline or metric there is refused. */
function selectorParam(text: string | undefined): Result<Matcher[], string> {
  if (text === undefined || text === '') return ok([]);
  const parsed = parseLogql(text);
  if (!parsed.ok) return fail(parsed.error.message);
  if (parsed.value.kind !== 'logs') return fail('only a stream selector is accepted here');
  return ok([...parsed.value.selector.matchers]);
}

type Handler = (ctx: CompatContext, form: RequestParams, deps: RouteDeps) => Promise<void>;

/** Reads the form, runs the handler; a bad form is a 400. */
function route(deps: RouteDeps, handler: Handler): (ctx: CompatContext) => Promise<void> {
  return async (ctx) => {
    const form = await readParams(ctx);
    if (!form.ok) {
      writeError(ctx, 400, form.error);
      return;
    }
    await handler(ctx, form.value, deps);
  };
}

/** The parsed, checked query of a request, or the 400 already written. */
function queryOf(ctx: CompatContext, form: Form): LogQuery | undefined {
  const parsed = parseLogql(form('query') ?? '');
  if (!parsed.ok) {
    writeError(ctx, 400, parsed.error.message);
    return undefined;
  }
  const problem = checkQuery(parsed.value);
  if (problem !== undefined) {
    writeError(ctx, 400, problem);
    return undefined;
  }
  return parsed.value;
}

/** The longest [range] of a metric expression. */
function longestRange(expr: MetricExpr): bigint {
  if (expr.kind === 'constant') return 0n;
  return expr.kind === 'range' ? expr.rangeNs : longestRange(expr.inner);
}

const categorizeFlag = 'categorize-labels';

/** Whether the client asked for labels split into stream labels, structured metadata and parsed labels (Grafana does). */
function categorizeLabels(ctx: CompatContext): boolean {
  return (ctx.get('x-loki-response-encoding-flags')).split(',').some((f) => f.trim() === categorizeFlag);
}

/** Loki's metric query splitter aligns a range query to its step: start rounded down, end rounded up (so a point may fall after end). */
function alignToStep(bounds: { startNs: bigint; endNs: bigint }, stepNs: bigint): { startNs: bigint; endNs: bigint } {
  const over = bounds.endNs % stepNs;
  return { startNs: bounds.startNs - (bounds.startNs % stepNs), endNs: over === 0n ? bounds.endNs : bounds.endNs + stepNs - over };
}

const queryRange: Handler = async (ctx, form, deps) => {
  const started = performance.now();
  const query = queryOf(ctx, form.get);
  if (query === undefined) return;
  const bounds = parseBounds(form.get, deps.now());
  if (!bounds.ok) { writeError(ctx, 400, bounds.error); return; }
  if (bounds.value.endNs < bounds.value.startNs) { writeError(ctx, 400, 'end timestamp must not be before or equal to start time'); return; }
  const tenantId = ctx.state.tenantId;
  if (query.kind === 'logs') {
    const limit = parseLimit(form.get);
    if (!limit.ok) { writeError(ctx, 400, limit.error); return; }
    const direction = parseDirection(form.get);
    if (!direction.ok) { writeError(ctx, 400, direction.error); return; }
    const window = visibleWindow(deps, tenantId, bounds.value.startNs, bounds.value.endNs);
    if (!window.ok) { apiFailure(ctx, window.error); return; }
    const categorize = categorizeLabels(ctx);
    const result = await queryStreams(deps, tenantId, query.selector, window.value, limit.value, direction.value, categorize);
    if (!result.ok) { apiFailure(ctx, result.error); return; }
    success(ctx, { resultType: 'streams', ...(categorize ? { encodingFlags: [categorizeFlag] } : {}), result: result.value.streams, stats: statsSummary(result.value.lines, result.value.bytes, (performance.now() - started) / 1000) });
    return;
  }
  const step = parseStep(form.get, bounds.value);
  if (!step.ok) { writeError(ctx, 400, step.error); return; }
  const grid = alignToStep(bounds.value, step.value);
  // The rows read reach one range back from the first point; retention and maxQueryDays apply to all of it.
  const window = visibleWindow(deps, tenantId, grid.startNs - longestRange(query.expr), grid.endNs);
  if (!window.ok) { apiFailure(ctx, window.error); return; }
  // Points from start to end inclusive; retention only narrows what rows are read, the grid stays the asked one.
  const points = Number((grid.endNs - grid.startNs) / step.value) + 1;
  const result = await querySamples(deps, tenantId, query.expr, { startNs: grid.startNs, stepNs: step.value, points, notBeforeNs: window.value.startNs });
  if (!result.ok) { apiFailure(ctx, result.error); return; }
  success(ctx, { resultType: 'matrix', ...(categorizeLabels(ctx) ? { encodingFlags: [categorizeFlag] } : {}), result: result.value, stats: statsSummary(0, 0, (performance.now() - started) / 1000) });
};

const instantQuery: Handler = async (ctx, form, deps) => {
  const started = performance.now();
  const query = queryOf(ctx, form.get);
  if (query === undefined) return;
  if (query.kind === 'logs') {
    writeError(ctx, 400, 'log queries are not supported as an instant query type, please change your query to a range query type');
    return;
  }
  const timeText = form.get('time');
  const time = timeText === undefined || timeText === '' ? deps.now() : parseTimestamp(timeText);
  if (time === undefined) { writeError(ctx, 400, `could not parse 'time' parameter: cannot parse "${timeText}" to a valid timestamp`); return; }
  const window = visibleWindow(deps, ctx.state.tenantId, time - longestRange(query.expr), time);
  if (!window.ok) { apiFailure(ctx, window.error); return; }
  const result = await querySamples(deps, ctx.state.tenantId, query.expr, { startNs: time, stepNs: 1_000_000_000n, points: 1, notBeforeNs: window.value.startNs });
  if (!result.ok) { apiFailure(ctx, result.error); return; }
  if (query.expr.kind === 'constant' && query.expr.scalar) {
    // The documented format is the Prometheus API's: [<unix time in seconds>, "<value>"], as a vector's (docs/loki.md, "Conformance").
    success(ctx, { resultType: 'scalar', result: [Number(time) / 1e9, formatValue(query.expr.value)], stats: statsSummary(0, 0, (performance.now() - started) / 1000) });
    return;
  }
  const vector = result.value.flatMap((s) => s.values.map((v) => ({ metric: s.metric, value: v })));
  success(ctx, { resultType: 'vector', result: vector, stats: statsSummary(0, 0, (performance.now() - started) / 1000) });
};

/** The window and selector of a label endpoint, or the 400 already written. */
function labelArgs(ctx: CompatContext, form: Form, deps: RouteDeps, selectorName = 'query'): { window: { startNs: bigint; endNs: bigint }; matchers: Matcher[] } | undefined {
  const bounds = parseBounds(form, deps.now());
  if (!bounds.ok) { writeError(ctx, 400, bounds.error); return undefined; }
  const window = visibleWindow(deps, ctx.state.tenantId, bounds.value.startNs, bounds.value.endNs);
  if (!window.ok) { apiFailure(ctx, window.error); return undefined; }
  const matchers = selectorParam(form(selectorName));
  if (!matchers.ok) { writeError(ctx, 400, matchers.error); return undefined; }
  return { window: window.value, matchers: matchers.value };
}

const labels: Handler = async (ctx, form, deps) => {
  const args = labelArgs(ctx, form.get, deps);
  if (args === undefined) return;
  const names = await labelNames(deps, ctx.state.tenantId, args.window, args.matchers);
  if (!names.ok) { apiFailure(ctx, names.error); return; }
  success(ctx, names.value);
};

const values: Handler = async (ctx, form, deps) => {
  const args = labelArgs(ctx, form.get, deps);
  if (args === undefined) return;
  const name = (ctx.params as Record<string, string | undefined>)['name'] ?? '';
  const result = await labelValues(deps, ctx.state.tenantId, name, args.window, args.matchers);
  if (!result.ok) { apiFailure(ctx, result.error); return; }
  success(ctx, result.value);
};

const seriesRoute: Handler = async (ctx, form, deps) => {
  const args = labelArgs(ctx, form.get, deps, 'unused');
  if (args === undefined) return;
  const selectors: Matcher[][] = [];
  for (const text of form.all('match[]').concat(form.all('match'))) {
    const matchers = selectorParam(text);
    if (!matchers.ok) { writeError(ctx, 400, matchers.error); return; }
    const problem = checkSelector(matchers.value);
    if (problem !== undefined) { writeError(ctx, 400, problem); return; }
    selectors.push(matchers.value);
  }
  const result = await series(deps, ctx.state.tenantId, args.window, selectors);
  if (!result.ok) { apiFailure(ctx, result.error); return; }
  success(ctx, result.value);
};

const stats: Handler = async (ctx, form, deps) => {
  const args = labelArgs(ctx, form.get, deps);
  if (args === undefined) return;
  const result = await indexStats(deps, ctx.state.tenantId, args.window, args.matchers);
  if (!result.ok) { apiFailure(ctx, result.error); return; }
  ctx.status = 200;
  ctx.body = result.value;
};

const volumeRoute: Handler = async (ctx, form, deps) => {
  const args = labelArgs(ctx, form.get, deps);
  if (args === undefined) return;
  const targets = (form.get('targetLabels') ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  const limitText = form.get('limit');
  const limit = limitText === undefined || limitText === '' ? 100 : Number(limitText);
  if (!Number.isInteger(limit) || limit <= 0) { writeError(ctx, 400, `invalid limit ${limitText ?? ''}`); return; }
  const result = await volume(deps, ctx.state.tenantId, args.window, args.matchers, targets, limit);
  if (!result.ok) { apiFailure(ctx, result.error); return; }
  success(ctx, { resultType: 'vector', result: result.value });
};

const detectedLabelsRoute: Handler = async (ctx, form, deps) => {
  const args = labelArgs(ctx, form.get, deps);
  if (args === undefined) return;
  const result = await detectedLabels(deps, ctx.state.tenantId, args.window, args.matchers);
  if (!result.ok) { apiFailure(ctx, result.error); return; }
  ctx.status = 200;
  ctx.body = { detectedLabels: result.value };
};

const buildInfo = (ctx: CompatContext): void => {
  ctx.status = 200;
  ctx.body = { version: lokiVersion, revision: 'tenantry', branch: 'tenantry', buildUser: '', buildDate: '', goVersion: '' };
};

export const lokiApi: CompatApi = {
  prefix: '/loki',
  register: (router: CompatRouter, deps: RouteDeps) => {
    const both = (path: string, handler: Handler): void => {
      router.get(path, route(deps, handler));
      router.post(path, route(deps, handler));
    };
    both('/api/v1/query_range', queryRange);
    both('/api/v1/query', instantQuery);
    both('/api/v1/labels', labels);
    both('/api/v1/label', labels);
    both('/api/v1/label/:name/values', values);
    both('/api/v1/series', seriesRoute);
    both('/api/v1/index/stats', stats);
    both('/api/v1/index/volume', volumeRoute);
    both('/api/v1/detected_labels', detectedLabelsRoute);
    router.get('/api/v1/status/buildinfo', buildInfo);
  },
  fail: writeError,
};
