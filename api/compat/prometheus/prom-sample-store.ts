// The ClickHouse adapter of the PromQL engine's SampleSource
// (engine/sample-source.ts). A select resolves the selector's series from
// the tenant's cached series index (series-index.ts: only series with rows
// on the days the range touches), applies the matchers
// (series-matchers.ts), then reads the samples of exactly those series in
// one statement (sample-reader.ts) over [max(minT, visibleFromMs), maxT].
// Bounded twice, so one selector cannot take the process' memory: at most
// `maxSeries` series (checked before any sample is read) and `maxSamples`
// samples (cut inside ClickHouse).
import type { SchemaTarget } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { QueryRunner } from '../../v1/query/query-runner.ts';
import type { SampleSource, SelectRequest, StoredSeries } from './engine/sample-source.ts';
import type { PromError } from './prom-envelope.ts';
import { execution, fromApiError } from './prom-envelope.ts';
import { readSamples } from './sample-reader.ts';
import type { PartSamples } from './sample-reader.ts';
import type { ExposedSeries } from './series-labels.ts';
import { compareUtf8, partMask } from './series-labels.ts';
import type { IndexedSeries, TenantSeries } from './series-index.ts';
import { SeriesIndexCache, dayOf } from './series-index.ts';
import { applyMatchers } from './series-matchers.ts';

/** Series one select may read unless the caller says otherwise. */
export const defaultMaxSeries = 50_000;

/** Prometheus' words for a query over its sample limit (--query.max-samples). */
export const tooManySamples = 'query processing would load too many samples into memory in query execution';

export interface PromSampleSourceOptions {
  readonly runner: QueryRunner;
  readonly schema: SchemaTarget;
  readonly tenantId: string;
  /** No sample before this (Unix ms) is read: the start of the tenant's metrics retention. */
  readonly visibleFromMs: number;
  /** The query's sample budget: one select reading more is an execution error. */
  readonly maxSamples: number;
  readonly maxSeries?: number;
  /** The process's index cache (a shared one when absent). */
  readonly index?: SeriesIndexCache;
}

let sharedIndex: SeriesIndexCache | undefined;

/** The process-wide series index cache, created on first use with the default bounds. */
export function defaultSeriesIndex(): SeriesIndexCache {
  sharedIndex ??= new SeriesIndexCache();
  return sharedIndex;
}

interface Chosen { readonly s: IndexedSeries; readonly e: ExposedSeries }

const cancelled = (): PromError => ({ type: 'canceled', message: 'query was canceled' });

/** Read through a call: TypeScript would otherwise narrow `signal.aborted` across awaits. */
const aborted = (signal: AbortSignal): boolean => signal.aborted;

/** A SampleSource reading one tenant's series from ClickHouse. */
export function createPromSampleSource(o: PromSampleSourceOptions): SampleSource {
  const index = o.index ?? defaultSeriesIndex();
  const maxSeries = o.maxSeries ?? defaultMaxSeries;
  return {
    async select(request: SelectRequest, signal: AbortSignal): Promise<Result<readonly StoredSeries[], PromError>> {
      const fromMs = Math.max(request.minT, o.visibleFromMs);
      const toMs = request.maxT;
      if (fromMs > toMs || !Number.isFinite(fromMs) || !Number.isFinite(toMs)) return ok([]);
      const tenant = await index.get(o.runner, o.schema, o.tenantId, dayOf(o.visibleFromMs));
      if (!tenant.ok) return fail(fromApiError(tenant.error));
      if (aborted(signal)) return fail(cancelled());
      const chosen = await choose(tenant.value, request, fromMs, toMs);
      if (!chosen.ok) return chosen;
      if (aborted(signal)) return fail(cancelled());
      if (chosen.value.length > maxSeries) {
        return fail(execution(`the selector matches ${chosen.value.length} series, more than the ${maxSeries} one selector may read: add label matchers or narrow the range`));
      }
      if (chosen.value.length === 0) return ok([]);
      return read(chosen.value, fromMs, toMs, signal);
    },
  };

  /** The exposed series the matchers select among those with rows on the range's days. */
  async function choose(tenant: TenantSeries, request: SelectRequest, fromMs: number, toMs: number): Promise<Result<Chosen[], PromError>> {
    const fromDay = dayOf(fromMs);
    const toDay = dayOf(toMs);
    const named = request.matchers.find((m) => m.name === '__name__' && m.op === '=');
    const pool = named !== undefined ? (tenant.byName().get(named.value) ?? []) : [...tenant.byName().values()].flat();
    const live = pool.filter((c) => c.s.maxDay >= fromDay && c.s.minDay <= toDay);
    return applyMatchers(o.runner, live, (c) => c.e.labels, request.matchers, tenant.regexMemo);
  }

  async function read(chosen: readonly Chosen[], fromMs: number, toMs: number, signal: AbortSignal): Promise<Result<readonly StoredSeries[], PromError>> {
    const masks = new Map<string, number>();
    const names = new Set<string>();
    const wanted = new Map<string, ExposedSeries>();
    for (const { s, e } of chosen) {
      masks.set(s.id, (masks.get(s.id) ?? 0) | partMask(e.part));
      names.add(s.metricName);
      wanted.set(`${s.id}:${e.part}`, e);
    }
    const answer = await readSamples(o.runner, {
      schema: o.schema, tenantId: o.tenantId, ids: [...masks.keys()], masks: [...masks.values()], metricNames: [...names],
      fromMs, toMs, maxSamples: o.maxSamples,
    });
    if (aborted(signal)) return fail(cancelled());
    if (!answer.ok) return fail(fromApiError(answer.error));
    if (answer.value.overBudget) return fail(execution(tooManySamples));
    // Stored series that map to one label set (e.g. resources differing only in attributes that are not labels) are one Prometheus series.
    const byLabels = new Map<string, { e: ExposedSeries; parts: PartSamples[] }>();
    for (const part of answer.value.parts) {
      const e = wanted.get(`${part.id}:${part.part}`);
      if (e === undefined) continue;
      const group = byLabels.get(e.key);
      if (group === undefined) byLabels.set(e.key, { e, parts: [part] });
      else group.parts.push(part);
    }
    const out: StoredSeries[] = [];
    for (const { e, parts } of byLabels.values()) out.push({ labels: e.labels, ...merged(parts) });
    return ok(out.sort((a, b) => compareLabelSets(a.labels, b.labels)));
  }
}

/** The samples of one or more parts as one series: sorted by time, one sample per timestamp (the first read). */
function merged(parts: readonly PartSamples[]): { times: Float64Array; values: Float64Array } {
  const only = parts[0];
  if (parts.length === 1 && only !== undefined && strictlyAscending(only.times)) return { times: only.times, values: only.values };
  const order: [number, number, number][] = [];
  parts.forEach((p, pi) => { p.times.forEach((t, i) => { order.push([t, pi, i]); }); });
  order.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const times: number[] = [];
  const bytes: Uint8Array[] = [];
  for (const [t, pi, i] of order) {
    if (times.length > 0 && times[times.length - 1] === t) continue;
    times.push(t);
    const values = parts[pi]?.values;
    if (values !== undefined) bytes.push(new Uint8Array(values.buffer, values.byteOffset + i * 8, 8));
  }
  // Values are copied as bytes, so a staleness marker keeps its bits.
  const values = new Float64Array(times.length);
  const view = new Uint8Array(values.buffer);
  bytes.forEach((b, i) => { view.set(b, i * 8); });
  return { times: Float64Array.from(times), values };
}

function strictlyAscending(times: Float64Array): boolean {
  for (let i = 1; i < times.length; i++) if ((times[i] ?? 0) <= (times[i - 1] ?? 0)) return false;
  return true;
}

function compareLabelSets(a: StoredSeries['labels'], b: StoredSeries['labels']): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const [ak, av] = a[i] ?? ['', ''];
    const [bk, bv] = b[i] ?? ['', ''];
    const c = compareUtf8(ak, bk) || compareUtf8(av, bv);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}
