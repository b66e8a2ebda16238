// The ClickHouse adapter of the PromQL engine's SampleSource
// (engine/sample-source.ts). A select resolves the selector's series from
// the tenant's cached series index (series-index.ts: only series with rows
// on the days the range touches), applies the matchers
// (series-matchers.ts), then reads the samples of exactly those series in
// one statement (sample-reader.ts; through the API's cache of recent
// samples, sample-cache.ts, when it has one) over [max(minT, visibleFromMs), maxT]
// (the selectors of a query over one range: one statement for them all),
// and turns each stored row into the samples of the Prometheus series it
// appears as: its value, sum or count, one bucket or quantile, or the row as
// a native histogram (stored-histogram.ts).
// Bounded twice, so one selector cannot take the process' memory: at most
// `maxSeries` series (checked before any sample is read) and `maxSamples`
// samples (cut inside ClickHouse).
import type { SchemaTarget } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { QueryRunner } from '../../query/query-runner.ts';
import type { TenantScan } from '../../query/tenant-scan.ts';
import type { SampleSource, SelectRequest, StoredSeries } from './engine/sample-source.ts';
import type { PromError } from './prom-envelope.ts';
import { execution, fromApiError } from './prom-envelope.ts';
import { staleMarkerBits } from '../../../src/prometheus/remote-write-scope.ts';
import type { FloatHistogram } from './engine/sample-source.ts';
import { readSamples } from './sample-reader.ts';
import type { SampleCache } from './sample-cache.ts';
import type { SeriesRows } from './sample-reader.ts';
import type { ExposedSeries } from './series-labels.ts';
import { countPart, firstIndexedPart, otlpNativePart, partMask, sumPart, valuePart } from './series-labels.ts';
import { labelValue } from './series-matchers.ts';
import { nativeHistogram } from './stored-histogram.ts';
import type { IndexedSeries, TenantSeries } from './series-index.ts';
import type { SeriesIndexCache } from './series-index.ts';
import { dayOf } from './series-index.ts';
import { applyMatchers } from './series-matchers.ts';
import { abortError } from './engine/evaluator.ts';

/** Series one select may read unless the caller says otherwise. */
export const defaultMaxSeries = 50_000;

/** Prometheus' words for a query over its sample limit (--query.max-samples). */
export const tooManySamples = 'query processing would load too many samples into memory in query execution';

export interface PromSampleSourceOptions {
  readonly runner: QueryRunner;
  readonly schema: SchemaTarget;
  /** The query's scan of its tenant's metrics: every statement's tenant and budget. */
  readonly scan: TenantScan;
  /** No sample before this (Unix ms) is read: the start of the tenant's metrics retention. */
  readonly visibleFromMs: number;
  /** The query's sample budget: one select reading more is an execution error. */
  readonly maxSamples: number;
  readonly maxSeries?: number;
  /** The API's cache of tenants' series indexes (one per API, keyed by tenant inside). */
  readonly index: SeriesIndexCache;
  /** The API's cache of recent samples (one per API, keyed by tenant inside); absent: every read is a statement. */
  readonly samples?: SampleCache;
}

interface Chosen {
  readonly s: IndexedSeries;
  readonly e: ExposedSeries;
}

const cancelled = (): PromError => ({ type: 'canceled', message: 'query was canceled' });

/**
 * Read through a call: TypeScript would otherwise narrow `signal.aborted` across awaits. An aborted read
 * answers as the signal's reason says (abortError: timeout, or canceled when the client went away).
 */
const aborted = (signal: AbortSignal): boolean => signal.aborted;

/** A SampleSource reading one tenant's series from ClickHouse. */
export function createPromSampleSource(o: PromSampleSourceOptions): SampleSource {
  const index = o.index;
  const maxSeries = o.maxSeries ?? defaultMaxSeries;
  // The query begins here (before its series are looked up): a listing of parts the cache starts after this may answer it.
  o.samples?.begin(o.scan);
  const source: SampleSource = {
    async select(request: SelectRequest, signal: AbortSignal): Promise<Result<readonly StoredSeries[], PromError>> {
      const all = await source.selectAll?.([request], signal);
      if (all === undefined) return fail(cancelled());
      return all.ok ? ok(all.value[0] ?? []) : all;
    },

    async selectAll(requests: readonly SelectRequest[], signal: AbortSignal): Promise<Result<(readonly StoredSeries[])[], PromError>> {
      const out: (readonly StoredSeries[])[] = requests.map(() => []);
      const ranges = requests.map((r) => ({ fromMs: Math.max(r.minT, o.visibleFromMs), toMs: r.maxT }));
      if (ranges.every((r) => r.fromMs > r.toMs || !Number.isFinite(r.fromMs) || !Number.isFinite(r.toMs))) return ok(out);
      const tenant = await index.get(o.runner, o.schema, o.scan, dayOf(o.visibleFromMs));
      if (!tenant.ok) return fail(fromApiError(tenant.error));
      if (aborted(signal)) return fail(abortError(signal));
      // Selectors over the same time range (the usual case: every selector of a dashboard query) share one statement.
      const byRange = new Map<string, { fromMs: number; toMs: number; members: { at: number; chosen: Chosen[] }[] }>();
      for (const [at, request] of requests.entries()) {
        const { fromMs, toMs } = ranges[at] ?? { fromMs: 0, toMs: -1 };
        if (fromMs > toMs || !Number.isFinite(fromMs) || !Number.isFinite(toMs)) continue;
        const chosen = await choose(tenant.value, request, fromMs, toMs);
        if (!chosen.ok) return chosen;
        if (aborted(signal)) return fail(abortError(signal));
        if (chosen.value.length > maxSeries) {
          return fail(
            execution(
              `the selector matches ${chosen.value.length} series, more than the ${maxSeries} one selector may read: add label matchers or narrow the range`,
            ),
          );
        }
        if (chosen.value.length === 0) continue;
        const key = `${fromMs}:${toMs}`;
        const group = byRange.get(key) ?? { fromMs, toMs, members: [] };
        byRange.set(key, group);
        group.members.push({ at, chosen: chosen.value });
      }
      const ranks = tenant.value.ranks();
      for (const g of byRange.values()) {
        const answer = await read(
          g.members.flatMap((m) => m.chosen),
          g.fromMs,
          g.toMs,
          signal,
        );
        if (!answer.ok) return answer;
        for (const m of g.members) {
          const built = build(m.chosen, answer.value, ranks);
          if (!built.ok) return built;
          out[m.at] = built.value;
        }
      }
      // The statements are done: the index's look for new series starts once the event loop is free again, which for a
      // short query is after its answer is written (the look's start blocks the thread about a millisecond in the
      // embedded store), and within milliseconds in any case.
      setImmediate(() => {
        index.refreshInBackground(o.scan);
      });
      return ok(out);
    },
  };
  return source;

  /** The exposed series the matchers select among those with rows on the range's days. */
  async function choose(tenant: TenantSeries, request: SelectRequest, fromMs: number, toMs: number): Promise<Result<Chosen[], PromError>> {
    const fromDay = dayOf(fromMs);
    const toDay = dayOf(toMs);
    const named = request.matchers.find((m) => m.name === '__name__' && m.op === '=');
    const pool = named !== undefined ? (tenant.byName().get(named.value) ?? []) : [...tenant.byName().values()].flat();
    const live = pool.filter((c) => c.s.maxDay >= fromDay && c.s.minDay <= toDay);
    return applyMatchers(o.runner, o.scan, live, (c) => c.e.labels, request.matchers, tenant.regexMemo);
  }

  /** The rows of the chosen series over [fromMs, toMs], in one statement; `position` finds a stored series' rows. */
  async function read(chosen: readonly Chosen[], fromMs: number, toMs: number, signal: AbortSignal): Promise<Result<ReadAnswer, PromError>> {
    const position = new Map<string, number>();
    const ids: string[] = [];
    const names = new Set<string>();
    let mask = 0;
    for (const { s, e } of chosen) {
      if (!position.has(s.id)) {
        position.set(s.id, ids.length);
        ids.push(s.id);
      }
      mask |= partMask(e.part);
      names.add(s.metricName);
    }
    const r = { schema: o.schema, scan: o.scan, ids, mask, metricNames: [...names], fromMs, toMs, maxRows: o.maxSamples };
    const answer = o.samples !== undefined ? await o.samples.read(o.runner, r) : await readSamples(o.runner, r);
    if (aborted(signal)) return fail(abortError(signal));
    if (!answer.ok) return fail(fromApiError(answer.error));
    if (answer.value.overBudget) return fail(execution(tooManySamples));
    return ok({ rows: answer.value.series, position });
  }

  /** One selector's series out of the rows read. */
  function build(chosen: readonly Chosen[], answer: ReadAnswer, ranks: ReadonlyMap<ExposedSeries, number>): Result<StoredSeries[], PromError> {
    // Stored series that map to one label set (e.g. resources differing only in attributes that are not labels) are one Prometheus series.
    const byLabels = new Map<string, { e: ExposedSeries; parts: Sampled[] }>();
    let total = 0;
    for (const { s, e } of chosen) {
      const rows = answer.rows[answer.position.get(s.id) ?? -1];
      if (rows === undefined) continue;
      const sampled = samplesOf(rows, e);
      if (sampled.times.length === 0) continue;
      total += sampled.times.length;
      const group = byLabels.get(e.key);
      if (group === undefined) byLabels.set(e.key, { e, parts: [sampled] });
      else group.parts.push(sampled);
    }
    if (total > o.maxSamples) return fail(execution(tooManySamples));
    // In Prometheus' order of label sets: the index's ranks (exposed series of equal labels are one group here).
    const groups = [...byLabels.values()].sort((a, b) => (ranks.get(a.e) ?? 0) - (ranks.get(b.e) ?? 0));
    return ok(groups.map(({ e, parts }): StoredSeries => ({ labels: e.labels, ...merged(parts) })));
  }
}

/** The rows of one statement: per stored series position, and each stored series' position. */
interface ReadAnswer {
  readonly rows: readonly (SeriesRows | undefined)[];
  readonly position: ReadonlyMap<string, number>;
}

/** The samples of one exposed series: times, float values (or bits of a marker) and native histograms where it has them. */
interface Sampled {
  readonly times: Float64Array;
  readonly values: Float64Array;
  readonly histograms?: readonly (FloatHistogram | undefined)[];
}

/** Prometheus' stale marker as little-endian words (written as words: a NaN read into a number need not keep its payload). */
const staleWords = [Number(staleMarkerBits & 0xffffffffn), Number(staleMarkerBits >> 32n)] as const;

/** What an exposed series reads from its stored series' rows. */
function samplesOf(rows: SeriesRows, e: ExposedSeries): Sampled {
  const empty = new Float64Array(0);
  if (e.part === valuePart) return { times: rows.times, values: rows.value ?? empty };
  if (e.part === sumPart) return { times: rows.times, values: rows.sum ?? empty };
  if (e.part === countPart) return { times: rows.times, values: rows.count ?? empty };
  if (e.part >= firstIndexedPart) return indexedSamples(rows, e);
  return nativeSamples(rows, e.part === otlpNativePart);
}

/** Bucket or quantile `part - 3` of each row; a histogram row without buckets has only its +Inf bucket (its count). */
function indexedSamples(rows: SeriesRows, e: ExposedSeries): Sampled {
  const j = e.part - firstIndexedPart;
  const n = rows.times.length;
  const { values: flat, starts } = rows.indexed ?? { values: new Float64Array(0), starts: new Uint32Array(n + 1) };
  const width = (x: number): number => (starts[x + 1] ?? 0) - (starts[x] ?? 0);
  let every = true;
  for (let x = 0; x < n && every; x++) every = width(x) > j;
  if (every) {
    // The common case: every row has the bucket, so the series shares the rows' times.
    const values = new Float64Array(n);
    for (let x = 0; x < n; x++) values[x] = flat[(starts[x] ?? 0) + j] ?? 0;
    return { times: rows.times, values };
  }
  const inf = labelValue(e.labels, 'le') === '+Inf';
  const times: number[] = [];
  const values: number[] = [];
  for (let x = 0; x < n; x++) {
    const w = width(x);
    const v = j < w ? flat[(starts[x] ?? 0) + j] : w === 0 && inf ? rows.count?.[x] : undefined;
    if (v === undefined) continue;
    times.push(rows.times[x] ?? 0);
    values.push(v);
  }
  return { times: Float64Array.from(times), values: Float64Array.from(values) };
}

/**
 * Each row as a native histogram: a stale marker where the stored sum is
 * one (remote write) or the point has no recorded value (OTLP's flag, which
 * Prometheus' OTLP receiver turns into a marker); a row Prometheus cannot
 * hold (a scale below -4) is no sample.
 */
function nativeSamples(rows: SeriesRows, otlp: boolean): Sampled {
  const times: number[] = [];
  const histograms: (FloatHistogram | undefined)[] = [];
  const stale: number[] = [];
  const rowsOf = rows.exponential ?? [];
  for (let x = 0; x < rows.times.length; x++) {
    const r = rowsOf[x];
    if (r === undefined) continue;
    if (r.staleSum || (otlp && (r.flags & noRecordedValue) !== 0)) {
      stale.push(times.length);
      times.push(rows.times[x] ?? 0);
      histograms.push(undefined);
      continue;
    }
    const h = nativeHistogram(r, otlp);
    if (h === undefined) continue;
    times.push(rows.times[x] ?? 0);
    histograms.push(h);
  }
  const values = new Float64Array(times.length);
  const words = new Uint32Array(values.buffer);
  for (const at of stale) words.set(staleWords, 2 * at);
  return { times: Float64Array.from(times), values, histograms };
}

/** OpenTelemetry's DataPointFlags bit: the point has no recorded value. */
const noRecordedValue = 1;

/** The samples of one or more parts as one series: sorted by time, one sample per timestamp (the first read). */
function merged(parts: readonly Sampled[]): Sampled {
  const only = parts[0];
  if (parts.length === 1 && only !== undefined && strictlyAscending(only.times)) return only;
  const order: [number, number, number][] = [];
  parts.forEach((p, pi) => {
    p.times.forEach((t, i) => {
      order.push([t, pi, i]);
    });
  });
  order.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const kept = order.filter((x, k) => k === 0 || order[k - 1]?.[0] !== x[0]);
  // Values are copied as words, so a staleness marker keeps its bits.
  const values = new Float64Array(kept.length);
  const out = new Uint32Array(values.buffer);
  const histograms: (FloatHistogram | undefined)[] = [];
  for (const [k, [, pi, i]] of kept.entries()) {
    const p = parts[pi];
    if (p === undefined) continue;
    const words = new Uint32Array(p.values.buffer, p.values.byteOffset, p.values.length * 2);
    out[2 * k] = words[2 * i] ?? 0;
    out[2 * k + 1] = words[2 * i + 1] ?? 0;
    histograms.push(p.histograms?.[i]);
  }
  const anyHistogram = histograms.some((h) => h !== undefined);
  return { times: Float64Array.from(kept, ([t]) => t), values, ...(anyHistogram ? { histograms } : {}) };
}

function strictlyAscending(times: Float64Array): boolean {
  for (let i = 1; i < times.length; i++) if ((times[i] ?? 0) <= (times[i - 1] ?? 0)) return false;
  return true;
}
