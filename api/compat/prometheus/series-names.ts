// How stored metrics appear as Prometheus series (docs/prometheus.md,
// "Names"). Remote-written rows keep their Prometheus name. OTLP metrics
// follow the OpenTelemetry → Prometheus compatibility rules (the
// specification's prometheus_and_openmetrics.md and Prometheus'
// otlptranslator with suffixes): the name split into alphanumeric tokens,
// the unit's Prometheus word appended ("s" → seconds, "By" → bytes, "a/b" →
// a_per_b, annotations in braces dropped), "_total" for monotonic cumulative
// sums, "_ratio" for gauges of unit "1", a leading digit prefixed with "_";
// histograms as _bucket{le}/_sum/_count, summaries as {quantile} series and
// _sum/_count. Exponential histograms are native histograms, as Prometheus
// 3 stores them: one series under the metric's own name (remote write) or
// its translated name without a suffix (OTLP, as Prometheus' OTLP receiver
// writes them). Delta temporality has no Prometheus form: such metrics are
// not exposed.

/** A distinct stored metric: what decides its Prometheus name. */
export interface StoredMetric {
  readonly name: string;
  readonly type: 'gauge' | 'sum' | 'histogram' | 'exponential_histogram' | 'summary';
  readonly unit: string;
  readonly monotonic: boolean;
  readonly temporality: 'unspecified' | 'delta' | 'cumulative';
  /** Written through Prometheus remote write (its name is already Prometheus'). */
  readonly remoteWrite: boolean;
}

/** Which column or part of a stored row a series reads ('native': the row as a native histogram). */
export type SeriesRole = 'value' | 'bucket' | 'sum' | 'count' | 'quantile' | 'native';

export interface ExposedName {
  readonly name: string;
  readonly role: SeriesRole;
}

const mainUnits: Readonly<Record<string, string>> = {
  d: 'days',
  h: 'hours',
  min: 'minutes',
  s: 'seconds',
  ms: 'milliseconds',
  us: 'microseconds',
  ns: 'nanoseconds',
  By: 'bytes',
  KiBy: 'kibibytes',
  MiBy: 'mebibytes',
  GiBy: 'gibibytes',
  TiBy: 'tibibytes',
  KBy: 'kilobytes',
  MBy: 'megabytes',
  GBy: 'gigabytes',
  TBy: 'terabytes',
  m: 'meters',
  V: 'volts',
  A: 'amperes',
  J: 'joules',
  W: 'watts',
  g: 'grams',
  Cel: 'celsius',
  Hz: 'hertz',
  '1': '',
  '%': 'percent',
};

const perUnits: Readonly<Record<string, string>> = { s: 'second', m: 'minute', h: 'hour', d: 'day', w: 'week', mo: 'month', y: 'year' };

const tokens = (text: string): string[] => text.split(/[^A-Za-z0-9]+/).filter((t) => t !== '');

const cleanUp = (text: string): string => tokens(text).join('_');

/** The unit's words to append ([] when it has none or is an annotation like "{request}"). */
function unitTokens(unit: string, nameTokens: readonly string[]): string[] {
  const [main = '', per] = unit.split('/', 2).map((u) => u.trim());
  const out: string[] = [];
  if (main !== '' && !/[{}]/.test(main)) {
    const word = cleanUp(mainUnits[main] ?? main);
    if (word !== '' && !nameTokens.includes(word)) out.push(word);
  }
  if (per !== undefined && per !== '' && !/[{}]/.test(per)) {
    const word = cleanUp(perUnits[per] ?? per);
    if (word !== '' && !nameTokens.includes(word)) out.push('per', word);
  }
  return out;
}

/** The Prometheus name of an OTLP metric (before _bucket/_sum/_count). */
export function otlpMetricName(m: Pick<StoredMetric, 'name' | 'type' | 'unit' | 'monotonic'>): string {
  let parts = tokens(m.name);
  parts = [...parts, ...unitTokens(m.unit, parts)];
  if (m.type === 'sum' && m.monotonic) parts = [...parts.filter((t) => t !== 'total'), 'total'];
  if (m.unit === '1' && m.type === 'gauge') parts = [...parts.filter((t) => t !== 'ratio'), 'ratio'];
  const joined = parts.join('_');
  return /^[0-9]/.test(joined) ? `_${joined}` : joined;
}

/** The Prometheus series names a stored metric appears under (none: not exposed). */
export function exposedNames(m: StoredMetric): readonly ExposedName[] {
  if (m.remoteWrite) {
    if (m.type === 'exponential_histogram') return [{ name: m.name, role: 'native' }];
    return m.type === 'gauge' || m.type === 'sum' ? [{ name: m.name, role: 'value' }] : [];
  }
  if (m.temporality === 'delta') return [];
  const base = otlpMetricName(m);
  if (base === '') return [];
  switch (m.type) {
    case 'gauge':
    case 'sum':
      return [{ name: base, role: 'value' }];
    case 'histogram':
      return [
        { name: `${base}_bucket`, role: 'bucket' },
        { name: `${base}_sum`, role: 'sum' },
        { name: `${base}_count`, role: 'count' },
      ];
    case 'summary':
      return [
        { name: base, role: 'quantile' },
        { name: `${base}_sum`, role: 'sum' },
        { name: `${base}_count`, role: 'count' },
      ];
    case 'exponential_histogram':
      return [{ name: base, role: 'native' }];
  }
}

/** The Prometheus metric type of a stored metric, for /api/v1/metadata. */
export function prometheusType(m: StoredMetric): string {
  if (m.type === 'sum') return m.monotonic ? 'counter' : 'gauge';
  if (m.type === 'exponential_histogram') return 'histogram';
  return m.type;
}
