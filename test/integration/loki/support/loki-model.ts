// The expected side of the conformance test: the fixture's records as Loki's
// documentation says they look through the Loki API, and the answers LogQL's
// documented rules give over them. Nothing here asks Tenantry or reuses its
// code; each rule cites the page it comes from (grafana.com/docs/loki/latest/…).
import type { AttributeValue } from '@opentelemetry/api';
import type { FixtureRecord } from './log-fixture.ts';
import { scope } from './log-fixture.ts';

/** A label set. */
export type Labels = Record<string, string>;

/** One log line as the Loki API shows it: time (ns), line, stream labels, structured metadata, parsed labels. */
export interface Entry {
  readonly tsNs: bigint;
  readonly line: string;
  readonly stream: Labels;
  readonly metadata: Labels;
  readonly parsed: Labels;
}

/**
 * The resource attributes Loki 3 indexes as stream labels by default
 * (send-data/otel "Format considerations"; COMPAT-APIS.md "How Loki 3 maps
 * OTLP logs"); every other attribute is structured metadata.
 */
const streamResourceAttributes = new Set([
  'service.name',
  'service.namespace',
  'service.instance.id',
  'deployment.environment',
  'deployment.environment.name',
  'cloud.region',
  'cloud.availability_zone',
  'k8s.cluster.name',
  'k8s.namespace.name',
  'k8s.pod.name',
  'k8s.container.name',
  'container.name',
  'k8s.replicaset.name',
  'k8s.deployment.name',
  'k8s.statefulset.name',
  'k8s.daemonset.name',
  'k8s.cronjob.name',
  'k8s.job.name',
]);

/** An attribute name as a label name (send-data/otel: characters other than letters, digits and `_` become `_`; a leading digit gets `key_`). */
export function sanitise(key: string): string {
  const name = key.replace(/[^a-zA-Z0-9_]/g, '_').replace(/_+/g, '_');
  return /^[0-9]/.test(name) ? `key_${name}` : name;
}

const text = (v: AttributeValue | undefined): string => (v === undefined ? '' : String(v));

/** detected_level from the OTLP severity number (send-data/otel: the level of a record is its severity, lower-cased). */
function level(severityNumber: number): string {
  if (severityNumber === 0) return 'unknown';
  const names = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
  return names[Math.floor((severityNumber - 1) / 4)] ?? 'unknown';
}

/** Labels without empty values (a label with an empty value is no label: query/log_queries#label-filter-expression). */
const nonEmpty = (labels: Labels): Labels => Object.fromEntries(Object.entries(labels).filter(([, v]) => v !== ''));

/** A fixture record as Loki stores an OTLP record (send-data/otel; COMPAT-APIS.md "How Loki 3 maps OTLP logs"). */
export function entryOf(r: FixtureRecord): Entry {
  const stream: Labels = {};
  const metadata: Labels = {};
  for (const [key, value] of Object.entries(r.resource)) (streamResourceAttributes.has(key) ? stream : metadata)[sanitise(key)] = text(value);
  for (const [key, value] of Object.entries(r.attributes)) metadata[sanitise(key)] = text(value);
  Object.assign(metadata, {
    scope_name: scope.name,
    scope_version: scope.version,
    observed_timestamp: (BigInt(r.observedMs) * 1_000_000n).toString(),
    severity_number: String(r.severityNumber),
    severity_text: r.severityText,
    detected_level: level(r.severityNumber),
    ...(r.trace === undefined ? {} : { trace_id: r.trace.traceId, span_id: r.trace.spanId, flags: String(r.trace.flags) }),
  });
  return { tsNs: BigInt(r.timestampMs) * 1_000_000n, line: r.body, stream: nonEmpty(stream), metadata: nonEmpty(metadata), parsed: {} };
}

/** Every label of an entry, as a stream without categorize-labels shows them (reference/loki-http-api "categorize-labels"). */
export const labelsOf = (e: Entry): Labels => ({ ...e.stream, ...e.metadata, ...e.parsed });

/** Parsed labels added to an entry: a key already a label becomes `<key>_extracted` (query/log_queries#json, #logfmt). */
function withParsed(e: Entry, pairs: readonly (readonly [string, string])[]): Entry {
  const existing = { ...e.stream, ...e.metadata };
  const parsed: Labels = { ...e.parsed };
  for (const [rawKey, value] of pairs) {
    const key = sanitise(rawKey);
    parsed[key in existing ? `${key}_extracted` : key] = value;
  }
  return { ...e, parsed: nonEmpty(parsed) };
}

/** `| logfmt`: every `key=value` pair of the line, quoted values unquoted (query/log_queries#logfmt). */
export function logfmt(e: Entry): Entry {
  const pairs = [...e.line.matchAll(/([^\s=]+)=("((?:[^"\\]|\\.)*)"|\S*)/g)].map((m) => [m[1] ?? '', m[3] ?? m[2] ?? ''] as const);
  return withParsed(e, pairs);
}

function flatten(value: unknown, prefix: string): (readonly [string, string])[] {
  if (Array.isArray(value)) return [];
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => flatten(v, prefix === '' ? k : `${prefix}_${k}`));
  return [[prefix, typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '']];
}

/** `| json`: every field of a JSON line, nested objects joined with `_`, arrays skipped; a line that is not JSON adds nothing (query/log_queries#json). */
export function json(e: Entry): Entry {
  let parsed: unknown;
  try {
    parsed = JSON.parse(e.line);
  } catch {
    return e;
  }
  return withParsed(e, flatten(parsed, ''));
}

/** `| drop a, b`: those labels removed, from whichever category holds them (query/log_queries#drop-labels-expression). */
export function drop(e: Entry, names: readonly string[]): Entry {
  const without = (l: Labels): Labels => Object.fromEntries(Object.entries(l).filter(([k]) => !names.includes(k)));
  return { ...e, stream: without(e.stream), metadata: without(e.metadata), parsed: without(e.parsed) };
}

const labelKey = (labels: Labels): string => JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

/**
 * A log query's answer (reference/loki-http-api#query-logs-within-a-range-of-time):
 * the first `limit` lines in `direction` (backward: newest first), grouped
 * into streams by their labels; with categorize-labels the stream is the
 * stream labels and each entry carries its metadata and parsed labels.
 */
export function streamsBody(entries: readonly Entry[], options: { direction?: 'forward' | 'backward'; limit?: number; categorize?: boolean } = {}): unknown {
  const sign = options.direction === 'forward' ? 1 : -1;
  const chosen = [...entries].sort((a, b) => sign * (a.tsNs < b.tsNs ? -1 : a.tsNs > b.tsNs ? 1 : 0)).slice(0, options.limit ?? 1000);
  const streams = new Map<string, { stream: Labels; values: unknown[] }>();
  for (const e of chosen) {
    const stream = options.categorize === true ? e.stream : labelsOf(e);
    const key = labelKey(stream);
    const extra = {
      ...(Object.keys(e.metadata).length > 0 ? { structuredMetadata: e.metadata } : {}),
      ...(Object.keys(e.parsed).length > 0 ? { parsed: e.parsed } : {}),
    };
    const value = options.categorize === true ? [e.tsNs.toString(), e.line, extra] : [e.tsNs.toString(), e.line];
    const found = streams.get(key) ?? { stream, values: [] };
    found.values.push(value);
    streams.set(key, found);
  }
  return {
    status: 'success',
    data: { resultType: 'streams', ...(options.categorize === true ? { encodingFlags: ['categorize-labels'] } : {}), result: [...streams.values()] },
  };
}

/** A series: its labels and a value per evaluation time (ns). */
export interface Series {
  readonly metric: Labels;
  readonly points: ReadonlyMap<bigint, number>;
}

const nsPerSecond = 1_000_000_000n;

/**
 * The evaluation times of a range query: from start to end every step, start
 * rounded down and end rounded up to a multiple of the step (the query
 * frontend's step alignment; docs/loki.md "Conformance").
 */
export function steps(startNs: bigint, endNs: bigint, stepSeconds: number): bigint[] {
  const step = BigInt(stepSeconds) * nsPerSecond;
  const first = (startNs / step) * step;
  const last = ((endNs + step - 1n) / step) * step;
  const times: bigint[] = [];
  for (let t = first; t <= last; t += step) times.push(t);
  return times;
}

/** The log range aggregations (query/metric_queries#log-range-aggregations). */
export type RangeFunction = 'count_over_time' | 'rate' | 'bytes_over_time' | 'bytes_rate';

/**
 * A range aggregation: per label set (all labels of the line), per time t,
 * over the lines in (t - range, t]; a time without lines has no point
 * (query/metric_queries#log-range-aggregations).
 */
export function rangeAggregation(fn: RangeFunction, entries: readonly Entry[], rangeSeconds: number, times: readonly bigint[]): Series[] {
  const range = BigInt(rangeSeconds) * nsPerSecond;
  const groups = new Map<string, { metric: Labels; entries: Entry[] }>();
  for (const e of entries) {
    const metric = labelsOf(e);
    const key = labelKey(metric);
    const group = groups.get(key) ?? { metric, entries: [] };
    group.entries.push(e);
    groups.set(key, group);
  }
  return [...groups.values()]
    .map(({ metric, entries: own }) => {
      const points = new Map<bigint, number>();
      for (const t of times) {
        const inRange = own.filter((e) => e.tsNs > t - range && e.tsNs <= t);
        if (inRange.length === 0) continue;
        const bytes = inRange.reduce((n, e) => n + Buffer.byteLength(e.line), 0);
        const value = { count_over_time: inRange.length, rate: inRange.length / rangeSeconds, bytes_over_time: bytes, bytes_rate: bytes / rangeSeconds }[fn];
        points.set(t, value);
      }
      return { metric, points };
    })
    .filter((s) => s.points.size > 0);
}

/** Grouping of a vector aggregation: `by (…)` keeps those labels, `without (…)` drops them (query/metric_queries#built-in-aggregation-operators). */
export type Grouping = { readonly by: readonly string[] } | { readonly without: readonly string[] } | undefined;

function groupLabels(metric: Labels, grouping: Grouping): Labels {
  if (grouping === undefined) return {};
  if ('by' in grouping) return Object.fromEntries(Object.entries(metric).filter(([k]) => grouping.by.includes(k)));
  return Object.fromEntries(Object.entries(metric).filter(([k]) => !grouping.without.includes(k)));
}

/** sum, avg, min, max, count over the series of each group, per time (query/metric_queries#built-in-aggregation-operators). */
export function aggregate(op: 'sum' | 'avg' | 'min' | 'max' | 'count', series: readonly Series[], grouping?: Grouping): Series[] {
  const groups = new Map<string, { metric: Labels; values: Map<bigint, number[]> }>();
  for (const s of series) {
    const metric = groupLabels(s.metric, grouping);
    const key = labelKey(metric);
    const group = groups.get(key) ?? { metric, values: new Map<bigint, number[]>() };
    for (const [t, v] of s.points) group.values.set(t, [...(group.values.get(t) ?? []), v]);
    groups.set(key, group);
  }
  const reduce = (vs: number[]): number => {
    const sum = vs.reduce((a, b) => a + b, 0);
    return { sum, avg: sum / vs.length, min: Math.min(...vs), max: Math.max(...vs), count: vs.length }[op];
  };
  return [...groups.values()].map(({ metric, values }) => ({ metric, points: new Map([...values].map(([t, vs]) => [t, reduce(vs)])) }));
}

/** topk: at each time the k series with the largest values, each keeping its labels (query/metric_queries#built-in-aggregation-operators). */
export function topk(k: number, series: readonly Series[]): Series[] {
  const times = new Set(series.flatMap((s) => [...s.points.keys()]));
  const kept = series.map((s) => ({ metric: s.metric, points: new Map<bigint, number>() }));
  for (const t of times) {
    const ranked = kept
      .map((s, i) => ({ i, v: series[i]?.points.get(t) }))
      .filter((r): r is { i: number; v: number } => r.v !== undefined)
      .sort((a, b) => b.v - a.v);
    for (const { i, v } of ranked.slice(0, k)) kept[i]?.points.set(t, v);
  }
  return kept.filter((s) => s.points.size > 0);
}

/** Seconds of a time in ns, as Loki writes sample times (reference/loki-http-api: `[<unix epoch seconds>, "<value>"]`). */
export const seconds = (ns: bigint): number => Number(ns) / 1e9;

/** A range query's matrix answer. */
export function matrixBody(series: readonly Series[]): unknown {
  return {
    status: 'success',
    data: {
      resultType: 'matrix',
      result: series.map((s) => ({ metric: s.metric, values: [...s.points].sort(([a], [b]) => (a < b ? -1 : 1)).map(([t, v]) => [seconds(t), String(v)]) })),
    },
  };
}

/** An instant query's vector answer at `timeNs`. */
export function vectorBody(series: readonly Series[], timeNs: bigint): unknown {
  return {
    status: 'success',
    data: {
      resultType: 'vector',
      result: series.flatMap((s) => {
        const v = s.points.get(timeNs);
        return v === undefined ? [] : [{ metric: s.metric, value: [seconds(timeNs), String(v)] }];
      }),
    },
  };
}
