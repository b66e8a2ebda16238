// The Prometheus series a stored series (one row of the series index,
// src/clickhouse/schema/metric-series.ts) appears as: its names decided by
// series-names.ts, its labels by docs/prometheus.md ("Names"), each with the
// part of the stored row its samples come from (the sample reader's `part`).
import type { Labels } from './engine/sample-source.ts';
import { compareUtf8 } from './engine/label-order.ts';
import { formatSampleValue } from './prom-float.ts';
import type { StoredMetric } from './series-names.ts';
import { exposedNames } from './series-names.ts';

/** One stored series as the index holds it. */
export interface IndexedIdentity extends StoredMetric {
  readonly jobName: string;
  readonly jobNamespace: string;
  readonly instance: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly bounds: readonly number[];
  readonly quantiles: readonly number[];
}

/**
 * Which values of a stored row a Prometheus series reads: 0 value, 1 sum,
 * 2 count, 3 + i bucket or quantile i; a negative part is the row as a
 * native histogram, -1 as remote write sent it, -2 as Prometheus' OTLP
 * receiver converts an exponential histogram.
 */
export type Part = number;
export const valuePart = 0;
export const sumPart = 1;
export const countPart = 2;
export const firstIndexedPart = 3;
export const remoteWriteNativePart = -1;
export const otlpNativePart = -2;

/** The reader's mask bits: one per column group a part needs. */
export const maskBits = { value: 1, sum: 2, count: 4, indexed: 8, native: 16 } as const;

/** The bit of the reader's mask that asks for a part (parts from 3 on share one, native histograms another). */
export const partMask = (part: Part): number => (part < 0 ? maskBits.native : part >= firstIndexedPart ? maskBits.indexed : 1 << part);

export interface ExposedSeries {
  readonly part: Part;
  readonly name: string;
  /** Sorted by name in UTF-8 byte order, empty values dropped. */
  readonly labels: Labels;
  /** The labels as one string, to find equal label sets. */
  readonly key: string;
}

/**
 * A label name as Prometheus' OTLP translator writes it: each character
 * outside [a-zA-Z0-9_] (each code point) becomes "_", "key_" goes before a
 * leading digit and "key" before a single leading "_".
 */
export function sanitizeLabelName(name: string): string {
  let out = '';
  for (const ch of name) out += /^[a-zA-Z0-9_]$/.test(ch) ? ch : '_';
  if (/^[0-9]/.test(out)) return `key_${out}`;
  if (out.startsWith('_') && !out.startsWith('__')) return `key${out}`;
  return out;
}

/** The label set of name, extra and own pairs: the first of two equal names wins, empty values are dropped, sorted. */
function labelSet(pairs: readonly (readonly [string, string])[]): Labels {
  const seen = new Set<string>();
  const out: (readonly [string, string])[] = [];
  for (const [k, v] of pairs) {
    if (seen.has(k)) continue;
    seen.add(k);
    if (v !== '') out.push([k, v]);
  }
  return out.sort((x, y) => compareUtf8(x[0], y[0]));
}

/** The label set as a string key (names and values cannot contain \xff in valid UTF-8 text). */
export const labelsKey = (labels: Labels): string => labels.map(([k, v]) => `${k}\xfe${v}`).join('\xff');

/** The series' own labels: job and instance first (they win over attributes of the same name), then its attributes. */
function ownLabels(s: IndexedIdentity): (readonly [string, string])[] {
  const attrs = Object.entries(s.attributes);
  if (s.remoteWrite) return [['job', s.jobName], ['instance', s.instance], ...attrs];
  const job = s.jobNamespace !== '' ? `${s.jobNamespace}/${s.jobName}` : s.jobName;
  return [['job', job], ['instance', s.instance], ...attrs.map(([k, v]) => [sanitizeLabelName(k), v] as const)];
}

/** Every Prometheus series a stored series appears as (none when it is not exposed, e.g. delta temporality). */
export function exposedSeries(s: IndexedIdentity): ExposedSeries[] {
  const own = ownLabels(s);
  const out: ExposedSeries[] = [];
  const add = (name: string, part: Part, extra: readonly (readonly [string, string])[]): void => {
    const labels = labelSet([['__name__', name], ...extra, ...own]);
    out.push({ part, name, labels, key: labelsKey(labels) });
  };
  for (const e of exposedNames(s)) {
    switch (e.role) {
      case 'value':
        add(e.name, valuePart, []);
        break;
      case 'sum':
        add(e.name, sumPart, []);
        break;
      case 'count':
        add(e.name, countPart, []);
        break;
      case 'bucket':
        for (let i = 0; i <= s.bounds.length; i++)
          add(e.name, firstIndexedPart + i, [['le', i < s.bounds.length ? formatSampleValue(s.bounds[i] ?? 0) : '+Inf']]);
        break;
      case 'quantile':
        s.quantiles.forEach((q, i) => {
          add(e.name, firstIndexedPart + i, [['quantile', formatSampleValue(q)]]);
        });
        break;
      case 'native':
        add(e.name, s.remoteWrite ? remoteWriteNativePart : otlpNativePart, []);
        break;
    }
  }
  return out;
}
