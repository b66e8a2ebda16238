// A stored exponential histogram row as the native histogram Prometheus 3
// holds for it. Rows keep OpenTelemetry's layout (sample-reader.ts reads
// them): a scale, an offset and dense bucket counts per side, where bucket
// i is (base^i, base^(i+1)]; Prometheus' bucket i is (base^(i-1), base^i],
// so indexes move up by one. Remote-written rows are as sent (their schema
// was already Prometheus', gaps stored as zeros). OTLP rows are converted
// as Prometheus' OTLP receiver converts them: a scale above 8 merged down
// to 8, below -4 not representable (the sample is dropped, as the receiver
// refuses it), and the zero threshold its fixed 1e-128 (it ignores
// OpenTelemetry's). Zero runs longer than two buckets become span gaps, as
// Prometheus' clients lay spans out.
import type { BucketSpan, FloatHistogram } from './engine/sample-source.ts';

/** One stored exponential histogram row, bucket counts as doubles. */
export interface ExponentialRow {
  readonly scale: number;
  readonly zeroCount: number;
  readonly zeroThreshold: number;
  readonly count: number;
  readonly sum: number;
  readonly positiveOffset: number;
  readonly positiveCounts: readonly number[];
  readonly negativeOffset: number;
  readonly negativeCounts: readonly number[];
}

/** The zero threshold Prometheus' OTLP receiver gives every histogram. */
export const otlpZeroThreshold = 1e-128;

const maxSchema = 8;
const minSchema = -4;

/**
 * Spans and absolute counts of one side. A remote-written side is kept as
 * stored: densely from its first to its last bucket, empty ones included, as
 * Prometheus' TSDB keeps the layout it was sent (whether a side has buckets
 * at all, even empty ones, decides where histogram_quantile and
 * histogram_fraction let the zero bucket start). An OTLP side is laid out as
 * the OTLP receiver does: OpenTelemetry bucket k + offset merged `down`
 * scales, the first span starting at the side's offset, empty buckets left
 * out except in gaps of at most two and the last, which is always written.
 */
function side(offset: number, counts: readonly number[], down: number, otlp: boolean): { spans: BucketSpan[]; buckets: number[] } {
  if (counts.length === 0) return { spans: [], buckets: [] };
  if (!otlp) return { spans: [{ offset: offset + 1, length: counts.length }], buckets: [...counts] };
  // Arithmetic shift: floor division by 2^down, negative indexes included, then +1 for Prometheus' numbering.
  const indexOf = (k: number): number => ((offset + k) >> down) + 1;
  const first = indexOf(0);
  const spans: { offset: number; length: number }[] = [{ offset: first, length: 0 }];
  const buckets: number[] = [];
  let last = first - 1; // Prometheus index of the last bucket written
  const write = (index: number, c: number): void => {
    const gap = index - last - 1;
    if (gap > 2) spans.push({ offset: gap, length: 0 });
    else for (let j = 0; j < gap; j++) buckets.push(0);
    const open = spans[spans.length - 1];
    if (open !== undefined) open.length += gap > 2 ? 1 : gap + 1;
    buckets.push(c);
    last = index;
  };
  for (let k = 0; k < counts.length;) {
    const index = indexOf(k);
    let c = 0;
    for (; k < counts.length && indexOf(k) === index; k++) c += counts[k] ?? 0;
    if (c !== 0 || k === counts.length) write(index, c);
  }
  return { spans, buckets };
}

/** The native histogram of a row (undefined when Prometheus cannot hold its scale); `otlp`: converted as the OTLP receiver does. */
export function nativeHistogram(row: ExponentialRow, otlp: boolean): FloatHistogram | undefined {
  if (row.scale < minSchema) return undefined;
  const down = otlp && row.scale > maxSchema ? row.scale - maxSchema : 0;
  if (!otlp && row.scale > maxSchema) return undefined;
  const positive = side(row.positiveOffset, row.positiveCounts, down, otlp);
  const negative = side(row.negativeOffset, row.negativeCounts, down, otlp);
  return {
    counterResetHint: 'unknown',
    schema: row.scale - down,
    zeroThreshold: otlp ? otlpZeroThreshold : row.zeroThreshold,
    zeroCount: row.zeroCount,
    count: row.count,
    sum: row.sum,
    positiveSpans: positive.spans,
    positiveBuckets: positive.buckets,
    negativeSpans: negative.spans,
    negativeBuckets: negative.buckets,
  };
}
