// Instant and range queries of /prometheus: the query parsed by the
// engine, every range it will read checked against the tenant's limits
// before anything is read (retention clamps it, limits.maxQueryDays refuses
// it, range selectors, subqueries and offsets included), then evaluated in
// process over the samples the tenant's ClickHouse source selects, within
// the tenant's time limit and sample budget, and cancelled when the client
// goes away.
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { RouteDeps } from '../../query/deps.ts';
import type { TenantScan } from '../../query/tenant-scan.ts';
import { instantQuery, parseQuery, rangeQuery, selectRanges } from './engine/engine.ts';
import type { ParsedQuery, QueryAnswer } from './engine/engine.ts';
import type { PromError } from './prom-envelope.ts';
import { badData } from './prom-envelope.ts';
import { createPromSampleSource } from './prom-sample-store.ts';
import type { SeriesIndexCache } from './series-index.ts';
import type { SampleCache } from './sample-cache.ts';

/** Prometheus' limit on the points of one series in a range query. */
export const maxPointsPerSeries = 11_000;

/**
 * Samples one query may hold at once (Prometheus' --query.max-samples, 50 M
 * there). An engine sample costs Tenantry about ten times a Go one, so the
 * budget is a tenth: 5 M samples, some 400 MB at most for one query.
 */
export const maxQuerySamples = 5_000_000;

/** What a query is: its text, lookback and the evaluation times (Unix ms). */
export type QueryRequest =
  | { readonly kind: 'instant'; readonly query: ParsedQuery; readonly lookbackMs: number; readonly timeoutMs?: number; readonly t: number }
  | {
      readonly kind: 'range';
      readonly query: ParsedQuery;
      readonly lookbackMs: number;
      readonly timeoutMs?: number;
      readonly start: number;
      readonly end: number;
      readonly step: number;
    };

/** What the engine needs of the API around it. */
export interface PromqlContext {
  readonly deps: RouteDeps;
  readonly index: SeriesIndexCache;
  /** The API's cache of recent samples (keyed by tenant inside). */
  readonly samples?: SampleCache;
  /** The request's scan of its tenant's metrics: every range read goes through its window, every statement carries its budget. */
  readonly scan: TenantScan;
}

/** Parsed queries kept by their text: a dashboard sends the same texts on every refresh. */
const parsedCacheSize = 512;
/** Longer texts are parsed each time (a cache entry's size is bounded by its text's). */
const maxCachedQueryChars = 8192;
const parsedByText = new Map<string, ParsedQuery>();

/**
 * Parses a query, a 400 bad_data naming what is wrong or unsupported. A
 * parsed query is a tree of read-only nodes that evaluation never changes,
 * so one parse serves every request with the same text: the last 512
 * distinct texts are kept (least recently used dropped), which saves the
 * parse (0.05-0.2 ms) on a refreshed dashboard's every request.
 */
export function parsePromqlQuery(text: string): Result<ParsedQuery, PromError> {
  const kept = parsedByText.get(text);
  if (kept !== undefined) {
    // Map order is insertion order: moved to the end, it is the most recently used.
    parsedByText.delete(text);
    parsedByText.set(text, kept);
    return ok(kept);
  }
  const parsed = parseQuery(text);
  if (parsed.ok && text.length <= maxCachedQueryChars) {
    parsedByText.set(text, parsed.value);
    if (parsedByText.size > parsedCacheSize) parsedByText.delete(parsedByText.keys().next().value ?? '');
  }
  return parsed;
}

/**
 * The start of what the query may read (the tenant's metrics retention), or
 * a 400 when what it reads spans more than limits.maxQueryDays: from the
 * earliest sample any selector needs (range selectors, subqueries and
 * offsets included, but not the lookback of instant selectors) to the latest.
 */
function readWindow(c: PromqlContext, r: QueryRequest): Result<number, PromError> {
  const visibleFromMs = Number(c.scan.visibleFromNs / 1_000_000n);
  const [start, end] = r.kind === 'instant' ? [r.t, r.t] : [r.start, r.end];
  const ranges = selectRanges(r.query, start, end, r.lookbackMs);
  if (ranges.length === 0) return ok(visibleFromMs);
  const ns = (ms: number): bigint => BigInt(Math.round(ms)) * 1_000_000n;
  const from = Math.min(...ranges.map((s) => s.request.minT));
  const to = Math.max(...ranges.map((s) => s.request.maxT));
  const read = c.scan.window(
    { startNs: ns(Math.min(from, to)), endNs: ns(to) },
    { graceNs: ns(r.lookbackMs), what: 'the query reads (its range selectors, subqueries and offsets included) ', narrow: 'the range or the time window' },
  );
  if (!read.ok) return fail(badData(read.error.message));
  return ok(visibleFromMs);
}

/** The reason a query's signal carries at its time limit: the evaluator answers `timeout` for it. */
const timedOut = (): DOMException => new DOMException('The operation was aborted due to timeout', 'TimeoutError');

/**
 * Runs `query` with the signal it stops on: its client gone, or its time limit (the tenant's, or the request's
 * `timeout` if shorter) reached. One controller and one timer, both released when the query ends: a timeout
 * signal and a composite one per request would each outlive it (their timer until it fires, tens of seconds).
 */
async function withQuerySignal<T>(scan: TenantScan, r: QueryRequest, query: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const limits = [scan.budget.timeoutMs, r.timeoutMs].filter((ms): ms is number => ms !== undefined && ms > 0);
  const client = scan.budget.abort;
  if (limits.length === 0) return query(client ?? new AbortController().signal);
  const controller = new AbortController();
  const timer = setTimeout(
    () => {
      controller.abort(timedOut());
    },
    Math.min(...limits),
  );
  const onClientGone = (): void => {
    controller.abort(client?.reason);
  };
  if (client?.aborted === true) onClientGone();
  else client?.addEventListener('abort', onClientGone, { once: true });
  try {
    return await query(controller.signal);
  } finally {
    clearTimeout(timer);
    client?.removeEventListener('abort', onClientGone);
  }
}

/** Runs an instant or range query for the tenant. */
export async function runPromql(c: PromqlContext, r: QueryRequest): Promise<Result<QueryAnswer, PromError>> {
  const visible = readWindow(c, r);
  if (!visible.ok) return visible;
  const source = createPromSampleSource({
    runner: c.deps.runner,
    schema: c.deps.schema,
    scan: c.scan,
    visibleFromMs: visible.value,
    maxSamples: maxQuerySamples,
    index: c.index,
    ...(c.samples === undefined ? {} : { samples: c.samples }),
  });
  return withQuerySignal(c.scan, r, (signal) => {
    const options = { lookbackMs: r.lookbackMs, maxSamples: maxQuerySamples, signal };
    return r.kind === 'instant' ? instantQuery(source, r.query, r.t, options) : rangeQuery(source, r.query, r.start, r.end, r.step, options);
  });
}
