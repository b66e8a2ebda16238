// An in-memory SampleSource (a fake at the engine's port) loaded from a
// compact notation: `metric{a="b"}` and values "0+10x4" (0, 10, 20, 30, 40),
// "1x3" (1 four times), "_" (no sample), "stale" (a staleness marker),
// "5 _ stale 7" one by one, one sample every `intervalSec` seconds from 0.
import type { Result } from '../../../../../../../src/result.ts';
import { ok } from '../../../../../../../src/result.ts';
import type { PromError } from '../../../../../../../api/compat/prometheus/prom-envelope.ts';
import type {
  FloatHistogram,
  LabelMatcher,
  Labels,
  SampleSource,
  SelectRequest,
  StoredSeries,
} from '../../../../../../../api/compat/prometheus/engine/sample-source.ts';
import { compareUtf8 } from '../../../../../../../api/compat/prometheus/engine/label-order.ts';

const staleBits = (): number => new Float64Array(new BigUint64Array([0x7ff0000000000002n]).buffer)[0] ?? NaN;

/** `name{a="b", "c.d"="e"}` → sorted label pairs. */
export function labelsOf(text: string): Labels {
  const m = /^([^{]*)(?:\{(.*)\})?$/.exec(text.trim());
  const pairs: [string, string][] = [];
  if (m?.[1] !== undefined && m[1] !== '') pairs.push(['__name__', m[1]]);
  for (const part of (m?.[2] ?? '').matchAll(/("(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*)\s*=\s*("(?:[^"\\]|\\.)*")/g)) {
    const name = part[1] ?? '';
    pairs.push([name.startsWith('"') ? (JSON.parse(name) as string) : name, JSON.parse(part[2] ?? '""') as string]);
  }
  return pairs.sort((a, b) => compareUtf8(a[0], b[0]));
}

type Value = number | 'stale' | undefined | FloatHistogram;

function expand(spec: string): Value[] {
  const out: Value[] = [];
  for (const token of spec.trim().split(/\s+/)) {
    const series = /^(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|-?Inf|NaN)([+-][\d.]+)?x(\d+)$/.exec(token);
    if (token === '_') out.push(undefined);
    else if (token === 'stale') out.push('stale');
    else if (series !== null) {
      const start = Number(series[1]?.replace('Inf', 'Infinity'));
      const inc = Number(series[2] ?? 0);
      for (let i = 0; i <= Number(series[3]); i++) out.push(start + inc * i);
    } else out.push(Number(token.replace('Inf', 'Infinity')));
  }
  return out;
}

function matches(m: LabelMatcher, value: string): boolean {
  const re = (): RegExp => new RegExp(`^(?:${m.value})$`, 'su');
  switch (m.op) {
    case '=':
      return value === m.value;
    case '!=':
      return value !== m.value;
    case '=~':
      return re().test(value);
    case '!~':
      return !re().test(value);
  }
}

/** A fake store: series loaded by the test, every select recorded. */
export class MemorySource implements SampleSource {
  readonly series: StoredSeries[] = [];
  readonly requests: SelectRequest[] = [];

  /** Loads `metric{…}` with `values` one every `intervalSec` seconds from `startSec`. */
  load(selector: string, values: string, intervalSec = 60, startSec = 0): this {
    return this.loadValues(selector, expand(values), intervalSec, startSec);
  }

  /** Loads explicit values (histograms included). */
  loadValues(selector: string, values: readonly Value[], intervalSec = 60, startSec = 0): this {
    const times: number[] = [];
    const floats: number[] = [];
    const histograms: (FloatHistogram | undefined)[] = [];
    values.forEach((v, i) => {
      if (v === undefined) return;
      times.push((startSec + i * intervalSec) * 1000);
      floats.push(v === 'stale' ? staleBits() : typeof v === 'number' ? v : 0);
      histograms.push(typeof v === 'object' ? v : undefined);
    });
    const f = new Float64Array(floats.length);
    floats.forEach((x, i) => {
      f[i] = x;
    });
    // Markers keep their exact bits: written through the integer view.
    const words = new BigUint64Array(f.buffer);
    values
      .filter((v) => v !== undefined)
      .forEach((v, i) => {
        if (v === 'stale') words[i] = 0x7ff0000000000002n;
      });
    this.series.push({
      labels: labelsOf(selector),
      times: Float64Array.from(times),
      values: f,
      ...(histograms.some((h) => h !== undefined) ? { histograms } : {}),
    });
    return this;
  }

  select(request: SelectRequest): Promise<Result<readonly StoredSeries[], PromError>> {
    this.requests.push(request);
    const out = this.series
      .filter((s) => request.matchers.every((m) => matches(m, s.labels.find(([n]) => n === m.name)?.[1] ?? '')))
      .map((s) => {
        const keep = [...s.times]
          .map((t, i) => [t, i] as const)
          .filter(([t]) => t >= request.minT && t <= request.maxT)
          .map(([, i]) => i);
        const values = new Float64Array(keep.length);
        const from = new BigUint64Array(s.values.buffer);
        const to = new BigUint64Array(values.buffer);
        keep.forEach((i, j) => {
          to[j] = from[i] ?? 0n;
        });
        return {
          labels: s.labels,
          times: Float64Array.from(keep.map((i) => s.times[i] ?? 0)),
          values,
          ...(s.histograms === undefined ? {} : { histograms: keep.map((i) => s.histograms?.[i]) }),
        };
      });
    return Promise.resolve(ok(out));
  }
}
