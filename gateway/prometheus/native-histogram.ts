// A Prometheus native histogram (prompb.Histogram) read from its wire bytes
// and written as the exponential histogram columns of a metrics row. The
// schema is OpenTelemetry's scale (both split each power of two into 2^n
// buckets); Prometheus' bucket i is (base^(i-1), base^i] and OpenTelemetry's
// is (base^i, base^(i+1)], so offsets move down by one. Spans and deltas (or
// float counts) are flattened to an offset and dense counts, gaps as zeros.
import { RangeList, WireError, WireReader, WireType } from '../protobuf/wire-reader.ts';
import type { RowWriter } from '../rowbinary/row-writer.ts';
import { noBuckets, noQuantiles, noValue } from '../convert/metrics/metric-columns.ts';

/** Dense buckets one side of a histogram may expand to: beyond, the histogram is rejected (its spans would cost far more than its bytes). */
export const maxDenseBuckets = 4096;

/** The schemas that are exponential (custom-bucket schema -53 is not). */
const minSchema = -4;
const maxSchema = 8;

const twoTo32 = 4_294_967_296;
const zigzag32 = (v: number): number => ((v >>> 1) ^ -(v & 1)) | 0;

/** A signed 64-bit zigzag varint given as unsigned halves, as a double (exact below 2^53). */
function zigzag64(lo: number, hi: number): number {
  const n = hi * twoTo32 + lo;
  return lo % 2 === 0 ? n / 2 : -(n + 1) / 2;
}

/** A float count as an unsigned integer count (rounded; negatives and NaN as 0). */
const wholeCount = (v: number): number => (v > 0 ? Math.min(Math.round(v), Number.MAX_SAFE_INTEGER) : 0);

/** One side's spans and counts (deltas for integer histograms, absolute counts for float ones). */
class Side {
  readonly spans = new RangeList();
  readonly deltas = new RangeList();
  readonly counts = new RangeList();
  /** Index of the first and last bucket (Prometheus numbering), and how many buckets the spans describe. */
  first = 0;
  last = -1;
  described = 0;

  clear(): void {
    this.spans.clear();
    this.deltas.clear();
    this.counts.clear();
    this.first = 0;
    this.last = -1;
    this.described = 0;
  }

  /** Resolves the spans to the first and last index; throws WireError on a span past 32 bits. */
  measure(buf: Buffer): void {
    const it = new WireReader(buf);
    let end = 0;
    let any = false;
    for (let i = 0; i < this.spans.count; i++) {
      const [offset, length] = readSpan(it, this.spans.starts[i] ?? 0, this.spans.ends[i] ?? 0);
      if (i > 0 && offset < 0) throw new WireError('native histogram spans overlap (a negative offset after the first span)');
      const start = i === 0 ? offset : end + offset;
      end = start + length;
      if (Math.abs(end) > 2 ** 31) throw new WireError('native histogram bucket index out of range');
      this.described += length;
      if (length === 0) continue;
      if (!any) this.first = start;
      any = true;
      this.last = end - 1;
    }
  }

  /** Dense buckets the side expands to. */
  get width(): number {
    return this.last - this.first + 1;
  }

  /** exp_*_offset and exp_*_bucket_counts. */
  write(w: RowWriter, buf: Buffer, float: boolean): void {
    if (this.width <= 0) {
      w.i32(0);
      w.varint(0);
      return;
    }
    w.i32(this.first - 1);
    w.varint(this.width);
    const values = new ValueCursor(buf, float ? this.counts : this.deltas, float);
    const it = new WireReader(buf);
    let running = 0;
    let next = this.first;
    let end = 0;
    for (let i = 0; i < this.spans.count; i++) {
      const [offset, length] = readSpan(it, this.spans.starts[i] ?? 0, this.spans.ends[i] ?? 0);
      const start = i === 0 ? offset : end + offset;
      end = start + length;
      if (length === 0) continue;
      for (; next < start; next++) w.u64(0);
      for (let k = 0; k < length; k++, next++) {
        const v = values.next();
        if (float) w.u64(wholeCount(v));
        else {
          running += v;
          w.u64(running > 0 ? running : 0);
        }
      }
    }
  }
}

/** offset and length of the BucketSpan at [start, end). */
function readSpan(it: WireReader, start: number, end: number): [number, number] {
  it.pos = start;
  it.end = end;
  let offset = 0;
  let length = 0;
  while (it.more()) {
    const tag = it.tag();
    if (tag === ((1 << 3) | WireType.varint)) offset = zigzag32(it.uint32());
    else if (tag === ((2 << 3) | WireType.varint)) length = it.uint32();
    else it.skip(tag & 7);
  }
  if (length > maxDenseBuckets) throw new WireError(`native histogram span of ${length} buckets (at most ${maxDenseBuckets})`);
  return [offset, length];
}

/** Reads packed or single sint64 deltas (or doubles) from ranges, in order. */
class ValueCursor {
  readonly #it: WireReader;
  readonly #ranges: RangeList;
  readonly #float: boolean;
  #range = -1;

  constructor(buf: Buffer, ranges: RangeList, float: boolean) {
    this.#it = new WireReader(buf, 0, 0);
    this.#ranges = ranges;
    this.#float = float;
  }

  next(): number {
    while (!this.#it.more()) {
      this.#range++;
      if (this.#range >= this.#ranges.count) throw new WireError('native histogram has fewer bucket counts than its spans describe');
      this.#it.pos = this.#ranges.starts[this.#range] ?? 0;
      this.#it.end = this.#ranges.ends[this.#range] ?? 0;
    }
    if (this.#float) return this.#it.double();
    this.#it.varint64();
    return zigzag64(this.#it.lo, this.#it.hi);
  }
}

/** Counts the values in ranges of packed varints or doubles. */
function valueCount(buf: Buffer, ranges: RangeList, float: boolean): number {
  let n = 0;
  for (let i = 0; i < ranges.count; i++) {
    const start = ranges.starts[i] ?? 0;
    const end = ranges.ends[i] ?? 0;
    if (float) n += (end - start) / 8;
    else for (let p = start; p < end; p++) if ((buf[p] ?? 0) < 0x80) n++;
  }
  return n;
}

/** The fields of one Histogram message, reset per histogram. */
export class NativeHistogram {
  countLo = 0;
  countHi = 0;
  countFloat = -1;
  /** Positions of the raw 8 bytes of sum and zero_threshold (kept bit-exact: a stale histogram's sum is the stale NaN), -1 when absent. */
  sumAt = -1;
  zeroThresholdAt = -1;
  zeroLo = 0;
  zeroHi = 0;
  zeroFloat = -1;
  schema = 0;
  timeLo = 0;
  timeHi = 0;
  /** Float histograms carry absolute counts (count_float, *_counts) instead of integers and deltas. */
  float = false;
  readonly positive = new Side();
  readonly negative = new Side();

  /** Reads the Histogram at buf[start, end); throws WireError when it is malformed. */
  read(buf: Buffer, start: number, end: number): void {
    this.countLo = this.countHi = this.zeroLo = this.zeroHi = this.schema = this.timeLo = this.timeHi = 0;
    this.countFloat = this.zeroFloat = this.sumAt = this.zeroThresholdAt = -1;
    this.float = false;
    this.positive.clear();
    this.negative.clear();
    const r = new WireReader(buf, start, end);
    while (r.more()) {
      const tag = r.tag();
      const wire = tag & 7;
      const field = tag >>> 3;
      if (field === 1 && wire === WireType.varint) {
        r.varint64();
        this.countLo = r.lo;
        this.countHi = r.hi;
        this.countFloat = -1;
        continue;
      }
      if (field === 2 && wire === WireType.fixed64) {
        this.countFloat = wholeCount(r.double());
        this.float = true;
        continue;
      }
      if ((field === 3 || field === 5) && wire === WireType.fixed64) {
        if (field === 3) this.sumAt = r.pos;
        else this.zeroThresholdAt = r.pos;
        r.fixed64();
        continue;
      }
      if (field === 4 && wire === WireType.varint) {
        this.schema = zigzag32(r.uint32());
        continue;
      }
      if (field === 6 && wire === WireType.varint) {
        r.varint64();
        this.zeroLo = r.lo;
        this.zeroHi = r.hi;
        this.zeroFloat = -1;
        continue;
      }
      if (field === 7 && wire === WireType.fixed64) {
        this.zeroFloat = wholeCount(r.double());
        continue;
      }
      if (field === 15 && wire === WireType.varint) {
        r.varint64();
        this.timeLo = r.lo;
        this.timeHi = r.hi;
        continue;
      }
      const side = field === 8 || field === 9 || field === 10 ? this.negative : field === 11 || field === 12 || field === 13 ? this.positive : undefined;
      if (side !== undefined) {
        const kind = (field - 8) % 3; // 0 spans, 1 deltas, 2 counts
        if (kind === 0 && wire === WireType.bytes) {
          const e = r.delimited();
          side.spans.push(r.pos, e);
          r.pos = e;
          continue;
        }
        if (kind === 1 && (wire === WireType.bytes || wire === WireType.varint)) {
          if (wire === WireType.bytes) {
            const e = r.delimited();
            side.deltas.push(r.pos, e);
            r.pos = e;
          } else {
            const s = r.pos;
            r.varint64();
            side.deltas.push(s, r.pos);
          }
          continue;
        }
        if (kind === 2 && (wire === WireType.bytes || wire === WireType.fixed64)) {
          const e = wire === WireType.bytes ? r.delimited() : r.pos + 8;
          if (wire === WireType.bytes && (e - r.pos) % 8 !== 0) throw new WireError('packed double field of a length not a multiple of 8');
          if (e > r.end) throw new WireError('truncated double');
          side.counts.push(r.pos, e);
          r.pos = e;
          this.float = true;
          continue;
        }
      }
      r.skip(wire);
    }
    for (const side of [this.positive, this.negative]) {
      side.measure(buf);
      const given = this.float ? valueCount(buf, side.counts, true) : valueCount(buf, side.deltas, false);
      if (given !== side.described) throw new WireError(`native histogram spans describe ${side.described} buckets but carry ${given} counts`);
    }
  }

  /** Whether the schema is exponential (-4..8): custom-bucket histograms (schema -53) are not stored. */
  get exponential(): boolean {
    return this.schema >= minSchema && this.schema <= maxSchema;
  }

  /** Whether flattening it would write more than maxDenseBuckets counts on a side. */
  get tooWide(): boolean {
    return this.positive.width > maxDenseBuckets || this.negative.width > maxDenseBuckets;
  }

  /** value … quantile_values of an exponential_histogram row (min and max unknown: NULL). */
  write(w: RowWriter, buf: Buffer): void {
    w.bytes(noValue);
    if (this.countFloat >= 0) w.u64(this.countFloat);
    else w.u64Parts(this.countLo, this.countHi);
    rawDouble(w, buf, this.sumAt);
    w.u8(1); // min NULL
    w.u8(1); // max NULL
    w.bytes(noBuckets);
    w.i32(this.schema);
    if (this.zeroFloat >= 0) w.u64(this.zeroFloat);
    else w.u64Parts(this.zeroLo, this.zeroHi);
    rawDouble(w, buf, this.zeroThresholdAt);
    this.positive.write(w, buf, this.float);
    this.negative.write(w, buf, this.float);
    w.bytes(noQuantiles);
  }
}

/** The 8 bytes of a double field as they were sent (as two integers: NaN payloads kept), or 0 when absent (at < 0). */
export function rawDouble(w: RowWriter, buf: Buffer, at: number): void {
  if (at < 0) w.f64(0);
  else w.u64Parts(buf.readUInt32LE(at), buf.readUInt32LE(at + 4));
}
