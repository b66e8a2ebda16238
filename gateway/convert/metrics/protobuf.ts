// Protobuf ExportMetricsServiceRequest → RowBinary rows of the metrics table,
// straight from the wire bytes (docs/adr/0002-byte-level-converters.md);
// writes exactly what metrics/json.ts writes for the same request in
// OTLP/JSON (held together by a property test). Fixed64 counts and double
// bounds are little-endian on both sides, so repeated ones are copied as is.
import { fail } from '../../../src/result.ts';
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import { RangeList, WireError, WireReader, WireType, nextDelimited, readWire } from '../../protobuf/wire-reader.ts';
import { RowWriter, ScratchWriter } from '../../rowbinary/row-writer.ts';
import { clampInt, writeNanosParts } from '../common/otlp-values.ts';
import { AnyValueView, Found, Lookup, attributeMapOf, lookupAttributesOf } from '../common/protobuf-attributes.ts';
import { boundRejection, enumRejection } from '../common/field-checks.ts';
import type { ItemRejection } from '../common/item-tally.ts';
import { RequestLimits } from '../common/item-limits.ts';
import type { ItemLimits } from '../common/item-limits.ts';
import type { TenantSettingsView } from '../../../src/tenant/settings/tenant-settings.ts';
import { forEachScope } from '../common/protobuf-resource-scope.ts';
import type { RowConverter } from '../common/row-converter.ts';
import type { Resolution, TenantResolver } from '../common/tenant-resolver.ts';
import { metricType, noBuckets, noCountSum, noExponential, noQuantiles, noValue } from './metric-columns.ts';

type MetricType = (typeof metricType)[keyof typeof metricType];

/** Metric field number of each data type (the `data` oneof). */
const dataField: Readonly<Record<number, MetricType>> = {
  5: metricType.gauge,
  7: metricType.sum,
  9: metricType.histogram,
  10: metricType.exponentialHistogram,
  11: metricType.summary,
};

const zigzag = (v: number): number => ((v >>> 1) ^ -(v & 1)) | 0;

/** Ranges of packed or single fixed64/double values, and their element count. */
class FixedList {
  readonly ranges = new RangeList();
  count = 0;

  clear(): void {
    this.ranges.clear();
    this.count = 0;
  }

  /** Adds the field at r.pos of wire type `type`: packed (bytes) or one value (fixed64). */
  add(r: WireReader, type: number): void {
    if (type === WireType.bytes) {
      const e = r.delimited();
      if ((e - r.pos) % 8 !== 0) throw new WireError('packed fixed64 field of a length not a multiple of 8');
      this.ranges.push(r.pos, e);
      this.count += (e - r.pos) / 8;
      r.pos = e;
    } else if (type === WireType.fixed64) {
      if (r.pos + 8 > r.end) throw new WireError('truncated fixed64');
      this.ranges.push(r.pos, r.pos + 8);
      this.count++;
      r.pos += 8;
    } else {
      r.skip(type);
    }
  }

  /** The rejection of the first value that is not a finite double (the list holds doubles), or undefined. */
  notFinite(buf: Buffer): ItemRejection | undefined {
    const { starts, ends, count } = this.ranges;
    for (let i = 0; i < count; i++) {
      for (let at = starts[i] ?? 0; at < (ends[i] ?? 0); at += 8) {
        const rejection = boundRejection(buf.readDoubleLE(at));
        if (rejection !== undefined) return rejection;
      }
    }
    return undefined;
  }

  /** An Array(UInt64) or Array(Float64): the count, then the little-endian values as they are. */
  write(w: RowWriter, buf: Buffer): void {
    w.varint(this.count);
    const { starts, ends, count } = this.ranges;
    for (let i = 0; i < count; i++) w.bytes(buf.subarray(starts[i] ?? 0, ends[i] ?? 0));
  }
}

/** Exponential histogram buckets (offset = 1 sint32, bucket_counts = 2 packed or single uint64). */
class BucketsFields {
  present = false;
  offset = 0;
  readonly counts = new RangeList();

  clear(): void {
    this.present = false;
    this.offset = 0;
    this.counts.clear();
  }

  read(r: WireReader, start: number, end: number): void {
    this.present = true;
    this.offset = 0;
    this.counts.clear();
    const it = new WireReader(r.buf, start, end);
    while (it.more()) {
      const tag = it.tag();
      if (tag === ((1 << 3) | WireType.varint)) this.offset = zigzag(it.uint32());
      else if (tag === ((2 << 3) | WireType.bytes)) {
        const e = it.delimited();
        this.counts.push(it.pos, e);
        it.pos = e;
      } else if (tag === ((2 << 3) | WireType.varint)) {
        const s = it.pos;
        it.varint64();
        this.counts.push(s, it.pos);
      } else it.skip(tag & 7);
    }
  }

  /** exp_*_offset and exp_*_bucket_counts; an absent Buckets message has offset -2^31, as metrics/json.ts writes it. */
  write(w: RowWriter, buf: Buffer): void {
    w.i32(this.present ? this.offset : -2147483648);
    const { starts, ends, count } = this.counts;
    let n = 0;
    for (let i = 0; i < count; i++) for (let p = starts[i] ?? 0; p < (ends[i] ?? 0); p++) if ((buf[p] ?? 0) < 0x80) n++;
    w.varint(n);
    const it = new WireReader(buf);
    for (let i = 0; i < count; i++) {
      it.pos = starts[i] ?? 0;
      it.end = ends[i] ?? 0;
      while (it.more()) {
        it.varint64();
        w.u64Parts(it.lo, it.hi);
      }
    }
  }
}

/** The fields of one data point of any type, reset per point (absent fields read as the generated decoder's defaults). */
class PointFields {
  readonly attributes = new RangeList();
  startLo = 0;
  startHi = 0;
  timeLo = 0;
  timeHi = 0;
  flags = 0;
  /** Gauge and sum: as_double (4) or as_int (6), whichever the oneof holds. */
  value = 0;
  countLo = 0;
  countHi = 0;
  sum = 0;
  hasMin = false;
  min = 0;
  hasMax = false;
  max = 0;
  readonly bucketCounts = new FixedList();
  readonly explicitBounds = new FixedList();
  scale = 0;
  zeroLo = 0;
  zeroHi = 0;
  zeroThreshold = 0;
  readonly positive = new BucketsFields();
  readonly negative = new BucketsFields();
  readonly quantiles = new RangeList();

  reset(): void {
    this.attributes.clear();
    this.startLo = this.startHi = this.timeLo = this.timeHi = this.flags = this.value = 0;
    this.countLo = this.countHi = this.sum = this.min = this.max = this.scale = this.zeroLo = this.zeroHi = this.zeroThreshold = 0;
    this.hasMin = this.hasMax = false;
    this.bucketCounts.clear();
    this.explicitBounds.clear();
    this.positive.clear();
    this.negative.clear();
    this.quantiles.clear();
  }

  read(r: WireReader, type: MetricType, start: number, end: number): void {
    this.reset();
    r.pos = start;
    r.end = end;
    // as_double and as_int are a oneof: the generated decoder's getter answers the member whose first occurrence came last.
    let doubleSeen = -1;
    let intSeen = -1;
    let asDouble = 0;
    let asInt = 0;
    let field = 0;
    const attributesField = type === metricType.exponentialHistogram ? 1 : type === metricType.histogram ? 9 : 7;
    const flagsField = type === metricType.histogram || type === metricType.exponentialHistogram ? 10 : 8;
    while (r.more()) {
      const tag = r.tag();
      const wire = tag & 7;
      const number = tag >>> 3;
      field++;
      if (number === 2 && wire === WireType.fixed64) {
        r.fixed64();
        this.startLo = r.lo;
        this.startHi = r.hi;
        continue;
      }
      if (number === 3 && wire === WireType.fixed64) {
        r.fixed64();
        this.timeLo = r.lo;
        this.timeHi = r.hi;
        continue;
      }
      if (number === attributesField && wire === WireType.bytes) {
        const e = r.delimited();
        this.attributes.push(r.pos, e);
        r.pos = e;
        continue;
      }
      if (number === flagsField && wire === WireType.varint) {
        this.flags = r.uint32();
        continue;
      }
      if (type === metricType.gauge || type === metricType.sum) {
        if (number === 4 && wire === WireType.fixed64) {
          asDouble = r.double();
          if (doubleSeen < 0) doubleSeen = field;
          continue;
        }
        if (number === 6 && wire === WireType.fixed64) {
          r.fixed64();
          asInt = (r.hi | 0) * 4_294_967_296 + r.lo;
          if (intSeen < 0) intSeen = field;
          continue;
        }
      } else {
        if (number === 4 && wire === WireType.fixed64) {
          r.fixed64();
          this.countLo = r.lo;
          this.countHi = r.hi;
          continue;
        }
        if (number === 5 && wire === WireType.fixed64) {
          this.sum = r.double();
          continue;
        }
        if (type === metricType.histogram) {
          if (number === 6) {
            this.bucketCounts.add(r, wire);
            continue;
          }
          if (number === 7) {
            this.explicitBounds.add(r, wire);
            continue;
          }
          if (number === 11 && wire === WireType.fixed64) {
            this.hasMin = true;
            this.min = r.double();
            continue;
          }
          if (number === 12 && wire === WireType.fixed64) {
            this.hasMax = true;
            this.max = r.double();
            continue;
          }
        } else if (type === metricType.exponentialHistogram) {
          if (number === 6 && wire === WireType.varint) {
            this.scale = zigzag(r.uint32());
            continue;
          }
          if (number === 7 && wire === WireType.fixed64) {
            r.fixed64();
            this.zeroLo = r.lo;
            this.zeroHi = r.hi;
            continue;
          }
          if ((number === 8 || number === 9) && wire === WireType.bytes) {
            const e = r.delimited();
            (number === 8 ? this.positive : this.negative).read(r, r.pos, e);
            r.pos = e;
            continue;
          }
          if (number === 12 && wire === WireType.fixed64) {
            this.hasMin = true;
            this.min = r.double();
            continue;
          }
          if (number === 13 && wire === WireType.fixed64) {
            this.hasMax = true;
            this.max = r.double();
            continue;
          }
          if (number === 14 && wire === WireType.fixed64) {
            this.zeroThreshold = r.double();
            continue;
          }
        } else if (number === 6 && wire === WireType.bytes) {
          const e = r.delimited();
          this.quantiles.push(r.pos, e);
          r.pos = e;
          continue;
        }
      }
      r.skip(wire);
    }
    this.value = doubleSeen < 0 && intSeen < 0 ? 0 : intSeen > doubleSeen ? asInt : asDouble;
  }

  /** count, sum, min, max (a summary has no min or max: NULL). */
  #aggregate(w: RowWriter): void {
    w.u64Parts(this.countLo, this.countHi);
    w.f64(this.sum);
    if (this.hasMin) {
      w.u8(0);
      w.f64(this.min);
    } else w.u8(1);
    if (this.hasMax) {
      w.u8(0);
      w.f64(this.max);
    } else w.u8(1);
  }

  /** value … quantile_values for a point of `type`. */
  write(w: RowWriter, type: MetricType, buf: Buffer): void {
    switch (type) {
      case metricType.gauge:
      case metricType.sum:
        w.f64(this.value);
        w.bytes(noCountSum);
        w.bytes(noBuckets);
        w.bytes(noExponential);
        w.bytes(noQuantiles);
        return;
      case metricType.histogram:
        w.bytes(noValue);
        this.#aggregate(w);
        this.bucketCounts.write(w, buf);
        this.explicitBounds.write(w, buf);
        w.bytes(noExponential);
        w.bytes(noQuantiles);
        return;
      case metricType.exponentialHistogram:
        w.bytes(noValue);
        this.#aggregate(w);
        w.bytes(noBuckets);
        w.i32(this.scale);
        w.u64Parts(this.zeroLo, this.zeroHi);
        w.f64(this.zeroThreshold);
        this.positive.write(w, buf);
        this.negative.write(w, buf);
        w.bytes(noQuantiles);
        return;
      case metricType.summary:
        w.bytes(noValue);
        this.hasMin = this.hasMax = false;
        this.#aggregate(w);
        w.bytes(noBuckets);
        w.bytes(noExponential);
        this.#quantiles(w, buf, 1);
        this.#quantiles(w, buf, 2);
        return;
    }
  }

  /** One Array(Float64) of ValueAtQuantile field `field` (quantile = 1, value = 2); absent is 0. */
  #quantiles(w: RowWriter, buf: Buffer, field: number): void {
    const { starts, ends, count } = this.quantiles;
    w.varint(count);
    const it = new WireReader(buf);
    for (let i = 0; i < count; i++) {
      it.pos = starts[i] ?? 0;
      it.end = ends[i] ?? 0;
      let v = 0;
      while (it.more()) {
        const tag = it.tag();
        if (tag === ((field << 3) | WireType.fixed64)) v = it.double();
        else it.skip(tag & 7);
      }
      w.f64(v);
    }
  }
}

/** Writes metric_name … is_monotonic of the Metric at [start, end) and returns its type and data range, or undefined without data. */
function metricHead(
  r: WireReader,
  start: number,
  end: number,
  head: RowWriter,
): { type: MetricType; start: number; end: number; invalid: ItemRejection | undefined } | undefined {
  let name = -1;
  let nameEnd = 0;
  let description = -1;
  let descriptionEnd = 0;
  let unit = -1;
  let unitEnd = 0;
  let type: MetricType | undefined;
  let dataStart = 0;
  let dataEnd = 0;
  let dataSeen = -1;
  const firstSeen = new Int32Array(12).fill(-1);
  const lastStart = new Int32Array(12);
  const lastEnd = new Int32Array(12);
  const it = new WireReader(r.buf, start, end);
  let field = 0;
  while (it.more()) {
    const tag = it.tag();
    const number = tag >>> 3;
    field++;
    if ((tag & 7) !== WireType.bytes || number > 11) {
      it.skip(tag & 7);
      continue;
    }
    const e = it.delimited();
    if (number === 1) {
      name = it.pos;
      nameEnd = e;
    } else if (number === 2) {
      description = it.pos;
      descriptionEnd = e;
    } else if (number === 3) {
      unit = it.pos;
      unitEnd = e;
    } else if (dataField[number] !== undefined) {
      if ((firstSeen[number] ?? -1) < 0) firstSeen[number] = field;
      lastStart[number] = it.pos;
      lastEnd[number] = e;
    }
    it.pos = e;
  }
  // The oneof holds the member whose first occurrence came last, as the generated decoder's getter answers.
  for (const number of [5, 7, 9, 10, 11]) {
    const seen = firstSeen[number] ?? -1;
    if (seen > dataSeen) {
      dataSeen = seen;
      type = dataField[number];
      dataStart = lastStart[number] ?? 0;
      dataEnd = lastEnd[number] ?? 0;
    }
  }
  if (type === undefined) return undefined;
  let temporality = 0;
  let monotonic = false;
  const data = new WireReader(r.buf, dataStart, dataEnd);
  while (data.more()) {
    const tag = data.tag();
    if (tag === ((2 << 3) | WireType.varint)) temporality = data.uint32() | 0;
    else if (tag === ((3 << 3) | WireType.varint)) monotonic = data.uint32() !== 0;
    else data.skip(tag & 7);
  }
  head.pos = 0;
  head.field(r.buf, name, nameEnd);
  head.u8(type);
  head.field(r.buf, description, descriptionEnd);
  head.field(r.buf, unit, unitEnd);
  const hasTemporality = type === metricType.sum || type === metricType.histogram || type === metricType.exponentialHistogram;
  head.u8(hasTemporality ? clampInt(temporality, 0, 2) : 0);
  head.u8(type === metricType.sum && monotonic ? 1 : 0);
  return { type, start: dataStart, end: dataEnd, invalid: hasTemporality ? enumRejection('aggregation temporality', temporality) : undefined };
}

const scratch = new ScratchWriter(1 << 20);

/** Converts an encoded ExportMetricsServiceRequest; throws WireError on malformed input. */
function metricRows(body: Buffer, resolver: TenantResolver, limits: RequestLimits): RowBatch {
  const w = scratch.take();
  const head = new RowWriter(256);
  const value = new AnyValueView();
  const point = new PointFields();
  const r = new WireReader(body);
  let rowCount = 0;
  forEachScope(r, value, limits, false, (resource, scope, smStart, smEnd) => {
    const metrics = new WireReader(body, smStart, smEnd);
    for (let mEnd = nextDelimited(metrics, 2); mEnd >= 0; mEnd = nextDelimited(metrics, 2)) {
      const data = metricHead(r, metrics.pos, mEnd, head);
      metrics.pos = mEnd;
      if (data === undefined) continue;
      const metricPart = head.result();
      const points = new WireReader(body, data.start, data.end);
      for (let pEnd = nextDelimited(points, 1); pEnd >= 0; pEnd = nextDelimited(points, 1)) {
        point.read(r, data.type, points.pos, pEnd);
        points.pos = pEnd;
        let found: Resolution | undefined = resource.tenant;
        const item = new Found();
        if (found === undefined && point.attributes.count > 0) {
          lookupAttributesOf(r, point.attributes, Lookup.tenant, item, value, limits);
          found = item.tenant(r, value);
        }
        const tenant = resolver.authorize(found ?? fail({ reason: 'missing_tenant' }));
        if (!tenant.ok) {
          limits.reject(tenant.error);
          continue;
        }
        const invalid = data.invalid ?? (data.type === metricType.histogram ? point.explicitBounds.notFinite(body) : undefined);
        const rejection = limits.rejectionBefore(tenant.value, point.timeLo, point.timeHi, w.pos, resource.tooDeep || scope.tooDeep, invalid);
        if (rejection !== undefined) {
          limits.reject(rejection);
          continue;
        }
        // In rowColumns.metrics order.
        const rowStart = limits.beginRow(w);
        w.text(tenant.value);
        w.bytes(metricPart);
        w.bytes(resource.bytes);
        w.bytes(scope.bytes);
        attributeMapOf(r, point.attributes, 0, item, w, value, limits);
        writeNanosParts(w, point.startLo, point.startHi);
        writeNanosParts(w, point.timeLo, point.timeHi);
        w.u32(point.flags);
        point.write(w, data.type, body);
        if (limits.endRow(w, rowStart, undefined)) rowCount++;
      }
    }
  });
  return { table: 'metrics', rows: w.copy(), rowCount, rejected: limits.tally };
}

/** Protobuf metrics (OTLP/HTTP and gRPC) under `limits`, at `now()` (ms). */
export function metricsFromProtobuf(limits: ItemLimits, now: () => number, settings?: TenantSettingsView): RowConverter {
  return {
    convert(body, tenants) {
      const batch = readWire(() => metricRows(body, tenants, new RequestLimits(limits, 'metrics', now(), body.length, settings)));
      return batch;
    },
  };
}
