// prompb.WriteRequest (remote write 1.0) → RowBinary rows of the metrics
// table, straight from the wire bytes like the OTLP converters
// (docs/gateway.md, "Prometheus remote write"): one row per sample, a gauge
// named by __name__ as sent; one exponential_histogram row per native
// histogram; job and instance become the resource's service.name and
// service.instance.id, every other label an attribute as named; values are
// copied bit-exactly (staleness markers are a NaN payload). Exemplars are
// skipped; metadata is returned beside the rows. A series without __name__
// or with a label name Prometheus would refuse (labelNameProblem) makes the
// request malformed: 400, nothing stored, as Prometheus and Mimir answer.
import { isUtf8 } from 'node:buffer';
import type { Result } from '../../src/result.ts';
import { ok } from '../../src/result.ts';
import type { RowBatch } from '../rowbinary/row-batch.ts';
import { RangeList, WireError, WireReader, WireType, readWire } from '../protobuf/wire-reader.ts';
import { RowWriter, ScratchWriter } from '../rowbinary/row-writer.ts';
import { RequestLimits } from '../convert/common/item-limits.ts';
import type { ItemLimits } from '../convert/common/item-limits.ts';
import type { TenantResolver } from '../convert/common/tenant-resolver.ts';
import { metricType, noBuckets, noCountSum, noExponential, noQuantiles } from '../convert/metrics/metric-columns.ts';
import type { TenantSettingsView } from '../../src/tenant/settings/tenant-settings.ts';
import { NativeHistogram, rawDouble } from './native-histogram.ts';
import { instanceAttribute, jobAttribute, remoteWriteScope } from '../../src/prometheus/remote-write-scope.ts';

/** One MetricMetadata of the request: the family's type (Prometheus' lower-case name), help and unit. */
export interface MetricMetadata {
  readonly metricFamily: string;
  readonly type: string;
  readonly help: string;
  readonly unit: string;
}

export interface RemoteWriteBatch {
  readonly batch: RowBatch;
  readonly metadata: readonly MetricMetadata[];
  /** Native histograms not stored: custom-bucket schemas (not exponential). */
  readonly skippedHistograms: number;
}

/** MetricMetadata.MetricType by number, as Prometheus' API names them. */
export const metadataTypes: readonly string[] = ['unknown', 'counter', 'gauge', 'histogram', 'gaugehistogram', 'summary', 'info', 'stateset'];

const temporality = { unspecified: 0, cumulative: 2 } as const;
const nameLabel = Buffer.from('__name__');
const jobLabel = Buffer.from('job');
const instanceLabel = Buffer.from('instance');

/** Whether buf[start, end) holds exactly the bytes of `literal`. */
function isLabel(buf: Buffer, start: number, end: number, literal: Buffer): boolean {
  if (end - start !== literal.length) return false;
  for (let i = 0; i < literal.length; i++) if (buf[start + i] !== literal[i]) return false;
  return true;
}

/**
 * Why buf[start, end) is not a label name Prometheus accepts, or undefined:
 * empty, not UTF-8, or holding a control character (C0, DEL or C1), which no
 * query could name and no text format could print.
 */
export function labelNameProblem(buf: Buffer, start: number, end: number): string | undefined {
  if (end <= start) return 'a label name is empty';
  let ascii = true;
  for (let i = start; i < end; i++) {
    const b = buf[i] ?? 0;
    if (b < 0x20 || b === 0x7f || (b === 0xc2 && (buf[i + 1] ?? 0) >= 0x80 && (buf[i + 1] ?? 0) <= 0x9f)) {
      return `label name ${JSON.stringify(buf.toString('utf8', start, end))} contains a control character`;
    }
    if (b >= 0x80) ascii = false;
  }
  if (!ascii && !isUtf8(buf.subarray(start, end))) return `label name ${JSON.stringify(buf.toString('utf8', start, end))} is not valid UTF-8`;
  return undefined;
}

/** metric_type … is_monotonic of a sample row and of a native histogram row. */
function typePart(type: number, temporalityValue: number): Buffer {
  const w = new RowWriter(16);
  w.u8(type);
  w.empty(); // description
  w.empty(); // unit
  w.u8(temporalityValue);
  w.u8(0); // is_monotonic
  return Buffer.from(w.result());
}
const sampleType = typePart(metricType.gauge, temporality.unspecified);
const histogramType = typePart(metricType.exponentialHistogram, temporality.cumulative);

/** count … quantile_values of a sample row. */
const sampleTail = Buffer.concat([noCountSum, noBuckets, noExponential, noQuantiles]);

/** The labels of one series: ranges of names and values, and where __name__, job and instance are. */
class SeriesLabels {
  readonly names = new RangeList();
  readonly values = new RangeList();
  metricName = -1;
  job = -1;
  instance = -1;

  readonly #it: WireReader;
  readonly #label: WireReader;

  /** For the series of one request's body. */
  constructor(body: Buffer) {
    this.#it = new WireReader(body, 0, 0);
    this.#label = new WireReader(body, 0, 0);
  }

  read(start: number, end: number): void {
    this.names.clear();
    this.values.clear();
    this.metricName = this.job = this.instance = -1;
    const it = this.#it;
    const label = this.#label;
    const buf = it.buf;
    it.pos = start;
    it.end = end;
    while (it.more()) {
      const tag = it.tag();
      if (tag !== ((1 << 3) | WireType.bytes)) {
        it.skip(tag & 7);
        continue;
      }
      const e = it.delimited();
      label.pos = it.pos;
      label.end = e;
      let ns = 0;
      let ne = 0;
      let vs = 0;
      let ve = 0;
      while (label.more()) {
        const t = label.tag();
        if (t === ((1 << 3) | WireType.bytes)) {
          const le = label.delimited();
          ns = label.pos;
          ne = le;
          label.pos = le;
        } else if (t === ((2 << 3) | WireType.bytes)) {
          const le = label.delimited();
          vs = label.pos;
          ve = le;
          label.pos = le;
        } else label.skip(t & 7);
      }
      it.pos = e;
      const problem = labelNameProblem(buf, ns, ne);
      if (problem !== undefined) throw new WireError(problem);
      const index = this.names.count;
      if (isLabel(buf, ns, ne, nameLabel)) this.metricName = index;
      else if (isLabel(buf, ns, ne, jobLabel)) this.job = index;
      else if (isLabel(buf, ns, ne, instanceLabel)) this.instance = index;
      this.names.push(ns, ne);
      this.values.push(vs, ve);
    }
  }

  /** metric_name (the tenant is written before it). */
  writeName(w: RowWriter, buf: Buffer): void {
    w.string(buf, this.values.starts[this.metricName] ?? 0, this.values.ends[this.metricName] ?? 0);
  }

  /** A label value as an attribute value (at most maxAttributeValueBytes). */
  #value(w: RowWriter, buf: Buffer, i: number, limits: RequestLimits): void {
    limits.writeSlice(w, buf, this.values.starts[i] ?? 0, this.values.ends[i] ?? 0, limits.limits.maxAttributeValueBytes, 'attribute_value_bytes');
  }

  /** service_name … start_timestamp: the series' resource, scope and attributes, the same for each of its points. */
  writeSeries(w: RowWriter, buf: Buffer, limits: RequestLimits): void {
    const { job, instance, metricName } = this;
    if (job >= 0) this.#value(w, buf, job, limits);
    else w.empty(); // service_name
    w.empty(); // resource_schema_url
    w.varint((job >= 0 ? 1 : 0) + (instance >= 0 ? 1 : 0));
    if (job >= 0) {
      w.bytes(jobKey);
      this.#value(w, buf, job, limits);
    }
    if (instance >= 0) {
      w.bytes(instanceKey);
      this.#value(w, buf, instance, limits);
    }
    w.bytes(scopePart);
    const others = this.names.count - (metricName >= 0 ? 1 : 0) - (job >= 0 ? 1 : 0) - (instance >= 0 ? 1 : 0);
    const kept = limits.keep(others, limits.limits.maxAttributes, 'attribute_count');
    w.varint(kept);
    let written = 0;
    for (let i = 0; i < this.names.count && written < kept; i++) {
      if (i === metricName || i === job || i === instance) continue;
      limits.writeSlice(w, buf, this.names.starts[i] ?? 0, this.names.ends[i] ?? 0, limits.limits.maxAttributeKeyBytes, 'attribute_key_bytes');
      this.#value(w, buf, i, limits);
      written++;
    }
    w.u64Parts(0, 0); // start_timestamp: remote write has none
  }
}

/** Constant parts of every row: the resource attribute keys, and scope_name, scope_version, scope_attributes. */
function rendered(write: (w: RowWriter) => void): Buffer {
  const w = new RowWriter(128);
  write(w);
  return Buffer.from(w.result());
}
const jobKey = rendered((w) => {
  w.text(jobAttribute);
});
const instanceKey = rendered((w) => {
  w.text(instanceAttribute);
});
const scopePart = rendered((w) => {
  w.text(remoteWriteScope.name);
  w.text(remoteWriteScope.version);
  w.varint(0);
});

const twoTo32 = 4_294_967_296;

/** Unix ns as unsigned 32-bit halves, set by toNanos (one per conversion: no allocation per sample). */
class Nanos {
  lo = 0;
  hi = 0;

  /** A Prometheus timestamp (int64 ms as unsigned varint halves); before 1970 is 0 (too old), past 2262 the largest value. */
  set(lo: number, hi: number): void {
    if (hi >= 0x80000000) {
      this.lo = this.hi = 0;
      return;
    }
    const ms = hi * twoTo32 + lo;
    if (ms >= 9_223_372_036_854) {
      this.lo = 0xffffffff;
      this.hi = 0x7fffffff;
      return;
    }
    const low = (ms % twoTo32) * 1e6; // < 2^53: exact
    this.lo = low % twoTo32;
    this.hi = Math.floor(ms / twoTo32) * 1e6 + Math.floor(low / twoTo32);
  }
}

/** msToNanos as a pair (tests). */
export function msToNanos(lo: number, hi: number): [number, number] {
  const ns = new Nanos();
  ns.set(lo, hi);
  return [ns.lo, ns.hi];
}

/** The samples of a TimeSeries: raw value positions and timestamps. */
class Samples {
  readonly valueAt: number[] = [];
  readonly timeLo: number[] = [];
  readonly timeHi: number[] = [];
  count = 0;

  clear(): void {
    this.count = 0;
  }

  readonly #it: WireReader;

  /** For the samples of one request's body. */
  constructor(body: Buffer) {
    this.#it = new WireReader(body, 0, 0);
  }

  add(start: number, end: number): void {
    const it = this.#it;
    it.pos = start;
    it.end = end;
    let at = -1;
    let lo = 0;
    let hi = 0;
    while (it.more()) {
      const tag = it.tag();
      if (tag === ((1 << 3) | WireType.fixed64)) {
        at = it.pos;
        it.fixed64();
      } else if (tag === ((2 << 3) | WireType.varint)) {
        it.varint64();
        lo = it.lo;
        hi = it.hi;
      } else it.skip(tag & 7);
    }
    this.valueAt[this.count] = at;
    this.timeLo[this.count] = lo;
    this.timeHi[this.count] = hi;
    this.count++;
  }
}

function readMetadata(r: WireReader, start: number, end: number, maxHelp: number): MetricMetadata {
  const it = new WireReader(r.buf, start, end);
  let type = 0;
  let family = '';
  let help = '';
  let unit = '';
  const text = (e: number, max = e - it.pos): string => r.buf.toString('utf8', it.pos, Math.min(e, it.pos + max));
  while (it.more()) {
    const tag = it.tag();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === WireType.varint) {
      type = it.uint32();
      continue;
    }
    if ((tag & 7) === WireType.bytes && (field === 2 || field === 4 || field === 5)) {
      const e = it.delimited();
      if (field === 2) family = text(e);
      else if (field === 4) help = text(e, maxHelp);
      else unit = text(e, maxHelp);
      it.pos = e;
      continue;
    }
    it.skip(tag & 7);
  }
  return { metricFamily: family, type: metadataTypes[type] ?? 'unknown', help, unit };
}

const scratch = new ScratchWriter(1 << 20);

/** Converts a decompressed WriteRequest for `tenant`; throws WireError on malformed input. */
function writeRequestRows(body: Buffer, tenant: string, resolver: TenantResolver, limits: RequestLimits): RemoteWriteBatch {
  const w = scratch.take();
  const tenantPart = new RowWriter(256);
  tenantPart.text(tenant);
  const head = tenantPart.result();
  const labels = new SeriesLabels(body);
  const samples = new Samples(body);
  const histograms = new RangeList();
  const histogram = new NativeHistogram();
  const metadata: MetricMetadata[] = [];
  const ns = new Nanos();
  const r = new WireReader(body);
  const it = new WireReader(body, 0, 0);
  let rowCount = 0;
  let skippedHistograms = 0;
  while (r.more()) {
    const tag = r.tag();
    if (tag === ((3 << 3) | WireType.bytes)) {
      const e = r.delimited();
      metadata.push(readMetadata(r, r.pos, e, limits.limits.maxAttributeValueBytes));
      r.pos = e;
      continue;
    }
    if (tag !== ((1 << 3) | WireType.bytes)) {
      r.skip(tag & 7);
      continue;
    }
    const seriesEnd = r.delimited();
    const seriesStart = r.pos;
    r.pos = seriesEnd;
    samples.clear();
    histograms.clear();
    it.pos = seriesStart;
    it.end = seriesEnd;
    while (it.more()) {
      const t = it.tag();
      if ((t & 7) !== WireType.bytes) {
        it.skip(t & 7);
        continue;
      }
      const e = it.delimited();
      const field = t >>> 3;
      // Field 1, labels, is read below once the series proves to have points; field 3, exemplars, is dropped.
      if (field === 2) samples.add(it.pos, e);
      else if (field === 4) histograms.push(it.pos, e);
      it.pos = e;
    }
    if (samples.count === 0 && histograms.count === 0) continue;
    labels.read(seriesStart, seriesEnd);
    if (labels.metricName < 0) throw new WireError('a time series has no __name__ label');
    for (let i = 0; i < samples.count; i++) {
      ns.set(samples.timeLo[i] ?? 0, samples.timeHi[i] ?? 0);
      if (!admitted(resolver, tenant, limits)) continue;
      const rejection = limits.rejectionBefore(tenant, ns.lo, ns.hi, w.pos, false);
      if (rejection !== undefined) {
        limits.reject(rejection);
        continue;
      }
      const rowStart = limits.beginRow(w);
      w.bytes(head);
      labels.writeName(w, body);
      w.bytes(sampleType);
      labels.writeSeries(w, body, limits);
      w.u64Parts(ns.lo, ns.hi);
      w.u32(0); // flags
      rawDouble(w, body, samples.valueAt[i] ?? -1);
      w.bytes(sampleTail);
      if (limits.endRow(w, rowStart, undefined)) rowCount++;
    }
    for (let i = 0; i < histograms.count; i++) {
      histogram.read(body, histograms.starts[i] ?? 0, histograms.ends[i] ?? 0);
      if (!histogram.exponential) {
        skippedHistograms++;
        continue;
      }
      if (!admitted(resolver, tenant, limits)) continue;
      ns.set(histogram.timeLo, histogram.timeHi);
      const rejection = histogram.tooWide ? { reason: 'request_too_expansive' as const } : limits.rejectionBefore(tenant, ns.lo, ns.hi, w.pos, false);
      if (rejection !== undefined) {
        limits.reject(rejection);
        continue;
      }
      const rowStart = limits.beginRow(w);
      w.bytes(head);
      labels.writeName(w, body);
      w.bytes(histogramType);
      labels.writeSeries(w, body, limits);
      w.u64Parts(ns.lo, ns.hi);
      w.u32(0); // flags
      histogram.write(w, body);
      if (limits.endRow(w, rowStart, undefined)) rowCount++;
    }
  }
  return { batch: { table: 'metrics', rows: w.copy(), rowCount, rejected: limits.tally }, metadata, skippedHistograms };
}

/** Counts an item for the tenant and says whether its tenant takes it (a tenant over its ingest limit does not: tallied as rejected). */
function admitted(resolver: TenantResolver, tenant: string, limits: RequestLimits): boolean {
  const resolution = resolver.authorize(ok(tenant));
  if (resolution.ok) return true;
  limits.reject(resolution.error);
  return false;
}

/** The remote write converter under the gateway's item limits, at `now()` (ms); with `settings`, each tenant's retention. */
export function remoteWriteConverter(
  limits: ItemLimits,
  now: () => number = Date.now,
  settings?: TenantSettingsView,
): (body: Buffer, tenant: string, resolver: TenantResolver) => Result<RemoteWriteBatch, string> {
  return (body, tenant, resolver) =>
    readWire(() => writeRequestRows(body, tenant, resolver, new RequestLimits(limits, 'metrics', now(), body.length, settings)));
}
