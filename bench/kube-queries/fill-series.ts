// Optional filler for the metrics the chart's queries read that the
// synthetic cluster (kube-shapes.ts) does not export: without them most
// queries are answered with no series by both systems, which checks only
// that both parse them. Each query is parsed with Tenantry's own parser, and
// every metric a selector names that the cluster lacks gets a few
// deterministic series: one per node of the synthetic cluster, with the
// cluster's usual labels (cluster, node, instance, namespace, pod,
// container, job) overlaid by values that satisfy the selector's matchers
// (so `job="kubelet", metrics_path="/metrics"` finds them), counters for
// `_total`/`_count`/`_sum`/`_bucket` names (buckets growing with their bound, jittered, over a few
// `le`), gauges otherwise. Values carry no meaning; both systems get the same
// bytes, so any difference is the engine's.
import { parseExpr } from '../../api/compat/prometheus/engine/parse.ts';
import { functionTable } from '../../api/compat/prometheus/engine/functions/function-table.ts';
import type { SampleSpec, SeriesSpec } from '../../support/remote-write-request.ts';
import { kubeSpanMs, kubeStepMs } from '../../test/integration/prometheus/support/kube-shapes.ts';
import { seeded } from '../../test/integration/prometheus/support/synthetic-series.ts';

interface Matcher {
  readonly name: string;
  readonly op: string;
  readonly value: string;
}

interface Selector {
  readonly name: string;
  readonly matchers: readonly Matcher[];
}

/** Per node of the synthetic cluster: the labels a series there usually carries. */
const entities: ReadonlyArray<Readonly<Record<string, string>>> = [
  { cluster: 'c1', node: 'node-a', instance: '10.0.0.1:9100', namespace: 'default', pod: 'web-7d9f-q5r7t', container: 'app', job: 'filler', service: 'web' },
  {
    cluster: 'c1',
    node: 'node-b',
    instance: '10.0.0.2:9100',
    namespace: 'kube-system',
    pod: 'coredns-6f4d-a1b2c',
    container: 'coredns',
    job: 'filler',
    service: 'kube-dns',
  },
  {
    cluster: 'c1',
    node: 'node-c',
    instance: '10.0.0.3:9100',
    namespace: 'monitoring',
    pod: 'prometheus-0',
    container: 'prometheus',
    job: 'filler',
    service: 'prometheus',
  },
];

const bucketBounds = ['0.005', '0.05', '0.5', '5', '+Inf'];
const variantsPerMetric = 12;

/** Every named vector selector in an expression tree (any node with kind 'vector'). */
function selectorsOf(node: unknown, out: Selector[]): void {
  if (Array.isArray(node)) {
    for (const n of node) selectorsOf(n, out);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const n = node as { kind?: unknown; name?: unknown; matchers?: unknown };
  if (n.kind === 'vector' && typeof n.name === 'string' && Array.isArray(n.matchers)) {
    // A matcher on a dashboard variable ($cluster) takes whatever the data offers: it does not constrain the filler.
    out.push({ name: n.name, matchers: (n.matchers as Matcher[]).filter((m) => m.name !== '__name__' && !m.value.includes('$')) });
    return;
  }
  for (const v of Object.values(node)) selectorsOf(v, out);
}

const fullMatch = (regex: string, value: string): boolean => {
  try {
    return new RegExp(`^(?:${regex})$`).test(value);
  } catch {
    return false;
  }
};

const satisfies = (m: Matcher, value: string): boolean => {
  switch (m.op) {
    case '=':
      return value === m.value;
    case '!=':
      return value !== m.value;
    case '=~':
      return fullMatch(m.value, value);
    default:
      return !fullMatch(m.value, value);
  }
};

/** A value a regex matcher accepts: one of its alternatives, the regex with its wildcards filled, or one distinct per entity. */
function regexValue(m: Matcher, distinct: string): string | undefined {
  const plain = (s: string): string =>
    s
      .replace(/\.\*/g, '')
      .replace(/\.\+/g, distinct)
      .replace(/[\\^$()[\]?*+{}]/g, '');
  const candidates = [...m.value.split('|').map(plain), plain(m.value), distinct];
  return candidates.find((c) => fullMatch(m.value, c));
}

/** The entity's labels overlaid so that every matcher holds, or undefined when that cannot be done. */
function labelsFor(selector: Selector, entity: Readonly<Record<string, string>>, index: number): Record<string, string> | undefined {
  let labels: Record<string, string> = { ...entity };
  for (const m of selector.matchers) {
    if (m.name === 'le') continue;
    const current = labels[m.name] ?? '';
    if (satisfies(m, current)) continue;
    // Distinct per entity, so that `on (container_id)` finds one series per side, not three.
    const distinct = `${m.name}-${index}`;
    const value = m.op === '=' ? m.value : m.op === '=~' ? regexValue(m, distinct) : m.value === '' || fullMatch(m.value, '') ? distinct : '';
    if (value === undefined) return undefined;
    labels = value === '' ? Object.fromEntries(Object.entries(labels).filter(([k]) => k !== m.name)) : { ...labels, [m.name]: value };
  }
  return selector.matchers.every((m) => m.name === 'le' || satisfies(m, labels[m.name] ?? '')) ? labels : undefined;
}

function hashOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

const isCounter = (name: string): boolean => /(_total|_count|_sum|_bucket)$/.test(name);

function samplesOf(key: string, counter: boolean, startMs: number): SampleSpec[] {
  const rand = seeded(hashOf(key));
  const points = kubeSpanMs / kubeStepMs + 1;
  const out: SampleSpec[] = [];
  let v = Math.round(rand() * 1000);
  for (let i = 0; i < points; i++) {
    v = counter ? v + Math.round(rand() * 10) : Math.round(rand() * 1000) / 10;
    out.push({ value: v, timestampMs: startMs + i * kubeStepMs });
  }
  return out;
}

/**
 * A classic bucket's counter: the histogram's shared increments, 2 % more per
 * bound's rank, plus the bucket's own jitter: rates over a window are now and
 * then not monotonic across bounds, as scraped buckets are, so
 * histogram_quantile's monotonicity fix and its info are exercised.
 */
function bucketSamples(histogramKey: string, bucketKey: string, rank: number, startMs: number): SampleSpec[] {
  const shared = seeded(hashOf(histogramKey));
  const own = seeded(hashOf(bucketKey));
  const points = kubeSpanMs / kubeStepMs + 1;
  const grow = 1 + 0.02 * rank;
  const out: SampleSpec[] = [];
  let v = Math.round(shared() * 1000 * grow);
  for (let i = 0; i < points; i++) {
    v += Math.round(shared() * 10 * grow + own() * 4);
    out.push({ value: v, timestampMs: startMs + i * kubeStepMs });
  }
  return out;
}

/** What the filler added: its series, how many metrics, and how many queries it could not parse. */
export interface Filler {
  readonly series: SeriesSpec[];
  readonly metrics: number;
  readonly unparsed: number;
}

/** Whether some series of `present` already answers the selector. */
function covered(s: Selector, present: ReadonlyMap<string, readonly Readonly<Record<string, string>>[]>): boolean {
  return (present.get(s.name) ?? []).some((labels) => s.matchers.every((m) => m.name === 'le' || satisfies(m, labels[m.name] ?? '')));
}

/** Series for every selector of the queries that no series of `present` answers (a metric it lacks, or `up` of another job). */
export function fillerSeries(queries: readonly string[], present: readonly SeriesSpec[], startMs: number): Filler {
  const have = new Map<string, Readonly<Record<string, string>>[]>();
  for (const p of present) {
    const name = p.labels['__name__'] ?? '';
    have.set(name, [...(have.get(name) ?? []), p.labels]);
  }
  const variants = new Map<string, Map<string, Record<string, string>[]>>();
  let unparsed = 0;
  for (const q of queries) {
    const parsed = parseExpr(q, functionTable);
    if (!parsed.ok) {
      unparsed += 1;
      continue;
    }
    const selectors: Selector[] = [];
    selectorsOf(parsed.value, selectors);
    for (const s of selectors) {
      if (covered(s, have)) continue;
      const byMetric = variants.get(s.name) ?? new Map<string, Record<string, string>[]>();
      variants.set(s.name, byMetric);
      if (byMetric.size >= variantsPerMetric) continue;
      const sets = entities.map((e, i) => labelsFor(s, e, i)).filter((l): l is Record<string, string> => l !== undefined);
      if (sets.length > 0) byMetric.set(JSON.stringify(sets), sets);
    }
  }
  const seen = new Set<string>();
  const series: SeriesSpec[] = [];
  const add = (labels: Record<string, string>, counter: boolean, rank?: number): void => {
    const key = JSON.stringify(Object.entries(labels).sort());
    if (seen.has(key)) return;
    seen.add(key);
    const histogramKey = JSON.stringify(Object.entries(labels).filter(([k]) => k !== 'le'));
    series.push({ labels, samples: rank === undefined ? samplesOf(key, counter, startMs) : bucketSamples(histogramKey, key, rank, startMs) });
  };
  for (const [name, byMetric] of variants) {
    for (const sets of byMetric.values()) {
      for (const labels of sets) {
        if (name.endsWith('_bucket')) {
          for (const [i, le] of bucketBounds.entries()) add({ __name__: name, ...labels, le }, true, i);
        } else add({ __name__: name, ...labels }, isCounter(name));
      }
    }
  }
  return { series, metrics: [...variants.values()].filter((v) => v.size > 0).length, unparsed };
}
