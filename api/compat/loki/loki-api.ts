// The Loki HTTP API under /loki (DESIGN.md section 9, docs/loki.md): the
// query, label, series and index endpoints Grafana's Loki data source calls,
// with Loki's parameters, response shapes and text/plain errors. The mount
// (../compat-api.ts) has already chosen the tenant and applies its limits.
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import type { RouteDeps } from '../../query/deps.ts';
import { TenantScan } from '../../query/tenant-scan.ts';
import type { CompatApi, CompatContext, CompatRouter } from '../compat-api.ts';
import type { RequestParams } from '../request-params.ts';
import { readRequestParams } from '../request-params.ts';
import type { LogQuery, Matcher, MetricExpr } from './logql-ast.ts';
import { parseLogql } from './logql-ast.ts';
import type { Form } from './loki-params.ts';
import { parseBounds, parseDirection, parseInterval, parseLimit, parseStep, parseTime, parseVolumeLimit, parseVolumeStep } from './loki-params.ts';
import {
  checkQuery,
  checkSelector,
  detectedLabels,
  formatValue,
  indexStats,
  labelNames,
  labelValues,
  querySamples,
  queryStreams,
  series,
  statsSummary,
  visibleWindow,
  volume,
} from './loki-queries.ts';
import type { LokiError } from './loki-reply.ts';
import { badRequest, fromApiError, successBody, writeError, writeStatus, writeSuccess } from './loki-reply.ts';

/** The version Tenantry answers as (the Loki release whose documented API it follows). */
export const lokiVersion = '3.7.8';

/** What a handler answers: the 200's body, or a refusal the adapter writes in Loki's shape. */
type Answer = Result<unknown, LokiError>;

type Handler = (ctx: CompatContext, form: RequestParams, deps: RouteDeps) => Promise<Answer>;

/** The request's scan of its tenant's logs. */
const logsOf = (ctx: CompatContext, deps: RouteDeps): TenantScan => TenantScan.open(deps, ctx.state.caller, 'logs');

/** A parameter's Result with its message as a 400. */
function param<T>(r: Result<T, string>): Result<T, LokiError> {
  return r.ok ? r : fail(badRequest(r.error));
}

/** The shared query path's Result in Loki's terms. */
function queried<T>(r: Result<T, ApiError>): Result<T, LokiError> {
  return r.ok ? r : fail(fromApiError(r.error));
}

/** A selector parameter (`query`, `match[]`) as matchers; a pipeline or metric there is refused. */
function selectorParam(text: string | undefined): Result<Matcher[], LokiError> {
  if (text === undefined || text === '') return ok([]);
  const parsed = parseLogql(text);
  if (!parsed.ok) return fail(badRequest(parsed.error.message));
  if (parsed.value.kind !== 'logs') return fail(badRequest('only a stream selector is accepted here'));
  return ok([...parsed.value.selector.matchers]);
}

/** Series' and the other list parameters Loki reads besides `match[]`. */
const listParams: ReadonlySet<string> = new Set(['match']);

/**
 * The one adapter between Koa and a handler: reads the parameters, runs the
 * handler, writes its answer. What a handler throws is a bug: logged, and
 * answered as a 500 in Loki's shape.
 */
function route(deps: RouteDeps, handler: Handler): (ctx: CompatContext) => Promise<void> {
  return async (ctx) => {
    let answer: Answer;
    try {
      const form = await readRequestParams(ctx, listParams);
      answer = form.ok ? await handler(ctx, form.value, deps) : fail(fromApiError(form.error));
    } catch (error) {
      deps.log?.error('request failed', { requestId: ctx.state.requestId, error });
      answer = fail({ status: 500, message: 'internal error; the request id identifies it in the server logs' });
    }
    if (answer.ok) writeSuccess(ctx, answer.value);
    else writeError(ctx, answer.error);
  };
}

/** The parsed, checked query of a request. */
function queryOf(form: Form): Result<LogQuery, LokiError> {
  const parsed = parseLogql(form('query') ?? '');
  if (!parsed.ok) return fail(badRequest(parsed.error.message));
  const problem = checkQuery(parsed.value);
  return problem === undefined ? ok(parsed.value) : fail(badRequest(problem));
}

/** The longest [range] of a metric expression. */
function longestRange(expr: MetricExpr): bigint {
  if (expr.kind === 'constant') return 0n;
  return expr.kind === 'range' ? expr.rangeNs : longestRange(expr.inner);
}

const categorizeFlag = 'categorize-labels';

/** Whether the client asked for labels split into stream labels, structured metadata and parsed labels (Grafana does). */
function categorizeLabels(ctx: CompatContext): boolean {
  return ctx
    .get('x-loki-response-encoding-flags')
    .split(',')
    .some((f) => f.trim() === categorizeFlag);
}

/** Loki's metric query splitter aligns a range query to its step: start rounded down, end rounded up (so a point may fall after end). */
function alignToStep(bounds: { startNs: bigint; endNs: bigint }, stepNs: bigint): { startNs: bigint; endNs: bigint } {
  const over = bounds.endNs % stepNs;
  return { startNs: bounds.startNs - (bounds.startNs % stepNs), endNs: over === 0n ? bounds.endNs : bounds.endNs + stepNs - over };
}

const secondsSince = (started: number): number => (performance.now() - started) / 1000;

const queryRange: Handler = async (ctx, form, deps) => {
  const started = performance.now();
  const query = queryOf(form.get);
  if (!query.ok) return query;
  const bounds = param(parseBounds(form.get, deps.now()));
  if (!bounds.ok) return bounds;
  if (bounds.value.endNs < bounds.value.startNs) return fail(badRequest('end timestamp must not be before or equal to start time'));
  // Loki checks step and interval on every range query, a log query's too.
  const step = param(parseStep(form.get, bounds.value));
  if (!step.ok) return step;
  const interval = param(parseInterval(form.get));
  if (!interval.ok) return interval;
  const scan = logsOf(ctx, deps);
  if (query.value.kind === 'logs') {
    const limit = param(parseLimit(form.get));
    if (!limit.ok) return limit;
    const direction = param(parseDirection(form.get));
    if (!direction.ok) return direction;
    const window = queried(visibleWindow(scan, bounds.value.startNs, bounds.value.endNs));
    if (!window.ok) return window;
    const categorize = categorizeLabels(ctx);
    const result = queried(await queryStreams(deps, scan, query.value.selector, window.value, limit.value, direction.value, categorize));
    if (!result.ok) return result;
    return ok(
      successBody({
        resultType: 'streams',
        ...(categorize ? { encodingFlags: [categorizeFlag] } : {}),
        result: result.value.streams,
        stats: statsSummary(result.value.lines, result.value.bytes, secondsSince(started)),
      }),
    );
  }
  const grid = alignToStep(bounds.value, step.value);
  // The rows read reach one range back from the first point; retention and maxQueryDays apply to all of it.
  const window = queried(visibleWindow(scan, grid.startNs - longestRange(query.value.expr), grid.endNs));
  if (!window.ok) return window;
  // Points from start to end inclusive; retention only narrows what rows are read, the grid stays the asked one.
  const points = Number((grid.endNs - grid.startNs) / step.value) + 1;
  const result = queried(
    await querySamples(deps, scan, query.value.expr, { startNs: grid.startNs, stepNs: step.value, points, notBeforeNs: window.value.startNs }),
  );
  if (!result.ok) return result;
  return ok(
    successBody({
      resultType: 'matrix',
      ...(categorizeLabels(ctx) ? { encodingFlags: [categorizeFlag] } : {}),
      result: result.value,
      stats: statsSummary(0, 0, secondsSince(started)),
    }),
  );
};

const instantQuery: Handler = async (ctx, form, deps) => {
  const started = performance.now();
  const query = queryOf(form.get);
  if (!query.ok) return query;
  if (query.value.kind === 'logs')
    return fail(badRequest('log queries are not supported as an instant query type, please change your query to a range query type'));
  const time = param(parseTime(form.get, deps.now()));
  if (!time.ok) return time;
  // limit and direction apply to log queries only, which are refused above; still checked, as Loki reads them.
  const limit = param(parseLimit(form.get));
  if (!limit.ok) return limit;
  const direction = param(parseDirection(form.get));
  if (!direction.ok) return direction;
  const expr = query.value.expr;
  const scan = logsOf(ctx, deps);
  const window = queried(visibleWindow(scan, time.value - longestRange(expr), time.value));
  if (!window.ok) return window;
  const result = queried(await querySamples(deps, scan, expr, { startNs: time.value, stepNs: 1_000_000_000n, points: 1, notBeforeNs: window.value.startNs }));
  if (!result.ok) return result;
  if (expr.kind === 'constant' && expr.scalar) {
    // The documented format is the Prometheus API's: [<unix time in seconds>, "<value>"], as a vector's (docs/loki.md, "Conformance").
    return ok(
      successBody({ resultType: 'scalar', result: [Number(time.value) / 1e9, formatValue(expr.value)], stats: statsSummary(0, 0, secondsSince(started)) }),
    );
  }
  const vector = result.value.flatMap((s) => s.values.map((v) => ({ metric: s.metric, value: v })));
  return ok(successBody({ resultType: 'vector', result: vector, stats: statsSummary(0, 0, secondsSince(started)) }));
};

interface LabelArgs {
  readonly scan: TenantScan;
  readonly window: { startNs: bigint; endNs: bigint };
  readonly matchers: Matcher[];
}

/** The window and selector of a label endpoint. */
function labelArgs(ctx: CompatContext, form: Form, deps: RouteDeps, selectorName = 'query'): Result<LabelArgs, LokiError> {
  const bounds = param(parseBounds(form, deps.now()));
  if (!bounds.ok) return bounds;
  const scan = logsOf(ctx, deps);
  const window = queried(visibleWindow(scan, bounds.value.startNs, bounds.value.endNs));
  if (!window.ok) return window;
  const matchers = selectorParam(form(selectorName));
  if (!matchers.ok) return matchers;
  return ok({ scan, window: window.value, matchers: matchers.value });
}

const labels: Handler = async (ctx, form, deps) => {
  const args = labelArgs(ctx, form.get, deps);
  if (!args.ok) return args;
  const names = queried(await labelNames(deps, args.value.scan, args.value.window, args.value.matchers));
  return names.ok ? ok(successBody(names.value)) : names;
};

const values: Handler = async (ctx, form, deps) => {
  const args = labelArgs(ctx, form.get, deps);
  if (!args.ok) return args;
  const name = (ctx.params as Record<string, string | undefined>)['name'] ?? '';
  const result = queried(await labelValues(deps, args.value.scan, name, args.value.window, args.value.matchers));
  return result.ok ? ok(successBody(result.value)) : result;
};

const seriesRoute: Handler = async (ctx, form, deps) => {
  const args = labelArgs(ctx, form.get, deps, 'unused');
  if (!args.ok) return args;
  const selectors: Matcher[][] = [];
  for (const text of form.all('match[]').concat(form.all('match'))) {
    const matchers = selectorParam(text);
    if (!matchers.ok) return matchers;
    const problem = checkSelector(matchers.value);
    if (problem !== undefined) return fail(badRequest(problem));
    selectors.push(matchers.value);
  }
  const result = queried(await series(deps, args.value.scan, args.value.window, selectors));
  return result.ok ? ok(successBody(result.value)) : result;
};

const stats: Handler = async (ctx, form, deps) => {
  const args = labelArgs(ctx, form.get, deps);
  if (!args.ok) return args;
  // Index stats answer the bare object, without the success envelope.
  return queried(await indexStats(deps, args.value.scan, args.value.window, args.value.matchers));
};

const volumeRoute: Handler = async (ctx, form, deps) => {
  const args = labelArgs(ctx, form.get, deps);
  if (!args.ok) return args;
  const targets = (form.get('targetLabels') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const limit = param(parseVolumeLimit(form.get));
  if (!limit.ok) return limit;
  const step = param(parseVolumeStep(form.get));
  if (!step.ok) return step;
  const result = queried(await volume(deps, args.value.scan, args.value.window, args.value.matchers, targets, limit.value));
  return result.ok ? ok(successBody({ resultType: 'vector', result: result.value })) : result;
};

const detectedLabelsRoute: Handler = async (ctx, form, deps) => {
  const args = labelArgs(ctx, form.get, deps);
  if (!args.ok) return args;
  const result = queried(await detectedLabels(deps, args.value.scan, args.value.window, args.value.matchers));
  return result.ok ? ok({ detectedLabels: result.value }) : result;
};

const buildInfo: Handler = () =>
  Promise.resolve(ok({ version: lokiVersion, revision: 'tenantry', branch: 'tenantry', buildUser: '', buildDate: '', goVersion: '' }));

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
    router.get('/api/v1/status/buildinfo', route(deps, buildInfo));
  },
  fail: writeStatus,
};
