// prompb.WriteRequest (remote write 1.0) → RowBinary rows of the metrics
// table, straight from the wire bytes like the OTLP converters
// (docs/gateway.md, "Prometheus remote write"): one row per sample, a gauge
// named by __name__ as sent; one exponential_histogram row per native
// histogram; job and instance become the resource's service.name and
// service.instance.id, every other label an attribute as named; values are
// copied bit-exactly (staleness markers are a NaN payload). Exemplars are
// skipped; metadata is returned beside the rows.
import type { RowBatch } from '../rowbinary/row-batch.ts';
import { RangeList, WireError, WireReader, WireType, readWire } from '../protobuf/wire-reader.ts';
import type { WireResult } from '../protobuf/wire-reader.ts';
import { RowWriter, ScratchWriter } from '../rowbinary/row-writer.ts';
import { RequestLimits } from '../convert/common/item-limits.ts';
import type { ItemLimits } from '../convert/common/item-limits.ts';
import type { TenantResolver } from '../convert/common/tenant-resolver.ts';
import { metricType, noBuckets, noCountSum, noExponential, noQuantiles } from '../convert/metrics/metric-columns.ts';
import type { TenantSettingsView } from '../../src/tenant/settings/tenant-settings.ts';
import { NativeHistogram, rawDouble } from './native-histogram.ts';
import { instanceAttribute, jobAttribute, remoteWriteScope } from './remote-write-scope.ts';

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

  read(r: WireReader, start: number, end: number): void {
    this.names.clear();
    this.values.clear();
    this.metricName = this.job = this.instance = -1;
    const it = new WireReader(r.buf, start, end);
    const label = new WireReader(r.buf, 0, 0);
    while (it.more()) {
      const tag = it.uint32();
      if (tag !== ((1 << 3) | WireType.bytes)) { it.skip(tag & 7); continue; }
      const e = it.delimited();
      label.pos = it.pos;
      label.end = e;
      let ns = 0; let ne = 0; let vs = 0; let ve = 0;
      while (label.more()) {
        const t = label.uint32();
        if (t === ((1 << 3) | WireType.bytes)) { const le = label.delimited(); ns = label.pos; ne = le; label.pos = le; } else if (t === ((2 << 3) | WireType.bytes)) { const le = label.delimited(); vs = label.pos; ve = le; label.pos = le; } else label.skip(t & 7);
      }
      it.pos = e;
      const index = this.names.count;
      if (isLabel(r.buf, ns, ne, nameLabel)) this.metricName = index;
      else if (isLabel(r.buf, ns, ne, jobLabel)) this.job = index;
      else if (isLabel(r.buf, ns, ne, instanceLabel)) this.instance = index;
      this.names.push(ns, ne);
      this.values.push(vs, ve);
    }
  }

  /** metric_name (the tenant is written before it). */
  writeName(w: RowWriter, buf: Buffer): void {
    w.string(buf, this.values.starts[this.metricName] ?? 0, this.values.ends[this.metricName] ?? 0);
  }

  /** service_name … start_timestamp: the series' resource, scope and attributes, the same for each of its points. */
  writeSeries(w: RowWriter, buf: Buffer, limits: RequestLimits): void {
    const { maxAttributes, maxAttributeKeyBytes: maxKey, maxAttributeValueBytes: maxValue } = limits.limits;
    const value = (i: number, out: RowWriter): void => { limits.writeSlice(out, buf, this.values.starts[i] ?? 0, this.values.ends[i] ?? 0, maxValue, 'attribute_value_bytes'); };
    if (this.job >= 0) value(this.job, w); else w.empty(); // service_name
    w.empty(); // resource_schema_url
    w.varint((this.job >= 0 ? 1 : 0) + (this.instance >= 0 ? 1 : 0));
    if (this.job >= 0) { w.text(jobAttribute); value(this.job, w); }
    if (this.instance >= 0) { w.text(instanceAttribute); value(this.instance, w); }
    w.text(remoteWriteScope.name);
    w.text(remoteWriteScope.version);
    w.varint(0); // scope_attributes
    const others = this.names.count - [this.metricName, this.job, this.instance].filter((i) => i >= 0).length;
    const kept = limits.keep(others, maxAttributes, 'attribute_count');
    w.varint(kept);
    let written = 0;
    for (let i = 0; i < this.names.count && written < kept; i++) {
      if (i === this.metricName || i === this.job || i === this.instance) continue;
      limits.writeSlice(w, buf, this.names.starts[i] ?? 0, this.names.ends[i] ?? 0, maxKey, 'attribute_key_bytes');
      value(i, w);
      written++;
    }
    w.u64Parts(0, 0); // start_timestamp: remote write has none
  }
}

const twoTo32 = 4_294_967_296;

/** A Prometheus timestamp (int64 ms as unsigned varint halves) as Unix ns halves; negative or past 2262 clamp to 0 / the largest. */
export function msToNanos(lo: number, hi: number): [number, number] {
  if (hi >= 0x80000000) return [0, 0]; // before 1970: rejected as too old
  const ms = hi * twoTo32 + lo;
  if (ms >= 9_223_372_036_854) return [0xffffffff, 0x7fffffff];
  const msHi = Math.floor(ms / twoTo32);
  const low = (ms % twoTo32) * 1e6; // < 2^53: exact
  const carry = Math.floor(low / twoTo32);
  return [low % twoTo32, msHi * 1e6 + carry];
}

/** The samples of a TimeSeries: raw value positions and timestamps. */
class Samples {
  readonly valueAt: number[] = [];
  readonly timeLo: number[] = [];
  readonly timeHi: number[] = [];
  count = 0;

  clear(): void { this.count = 0; }

  add(r: WireReader, start: number, end: number): void {
    const it = new WireReader(r.buf, start, end);
    let at = -1; let lo = 0; let hi = 0;
    while (it.more()) {
      const tag = it.uint32();
      if (tag === ((1 << 3) | WireType.fixed64)) { at = it.pos; it.fixed64(); } else if (tag === ((2 << 3) | WireType.varint)) { it.varint64(); lo = it.lo; hi = it.hi; } else it.skip(tag & 7);
    }
    this.valueAt[this.count] = at;
    this.timeLo[this.count] = lo;
    this.timeHi[this.count] = hi;
    this.count++;
  }
}

function readMetadata(r: WireReader, start: number, end: number, maxHelp: number): MetricMetadata {
  const it = new WireReader(r.buf, start, end);
  let type = 0; let family = ''; let help = ''; let unit = '';
  const text = (e: number, max = e - it.pos): string => r.buf.toString('utf8', it.pos, Math.min(e, it.pos + max));
  while (it.more()) {
    const tag = it.uint32();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === WireType.varint) { type = it.uint32(); continue; }
    if ((tag & 7) === WireType.bytes && (field === 2 || field === 4 || field === 5)) {
      const e = it.delimited();
      if (field === 2) family = text(e); else if (field === 4) help = text(e, maxHelp); else unit = text(e, maxHelp);
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
  const series = new RowWriter(4096);
  const labels = new SeriesLabels();
  const samples = new Samples();
  const histograms = new RangeList();
  const histogram = new NativeHistogram();
  const metadata: MetricMetadata[] = [];
  const r = new WireReader(body);
  let rowCount = 0;
  let skippedHistograms = 0;
  while (r.more()) {
    const tag = r.uint32();
    if (tag === ((3 << 3) | WireType.bytes)) {
      const e = r.delimited();
      metadata.push(readMetadata(r, r.pos, e, limits.limits.maxAttributeValueBytes));
      r.pos = e;
      continue;
    }
    if (tag !== ((1 << 3) | WireType.bytes)) { r.skip(tag & 7); continue; }
    const seriesEnd = r.delimited();
    const seriesStart = r.pos;
    r.pos = seriesEnd;
    samples.clear();
    histograms.clear();
    const it = new WireReader(body, seriesStart, seriesEnd);
    while (it.more()) {
      const t = it.uint32();
      if ((t & 7) !== WireType.bytes) { it.skip(t & 7); continue; }
      const e = it.delimited();
      const field = t >>> 3;
      // Field 1, labels, is read below once the series proves to have points; field 3, exemplars, is dropped.
      if (field === 2) samples.add(it, it.pos, e);
      else if (field === 4) histograms.push(it.pos, e);
      it.pos = e;
    }
    if (samples.count === 0 && histograms.count === 0) continue;
    labels.read(r, seriesStart, seriesEnd);
    if (labels.metricName < 0) throw new WireError('a time series has no __name__ label');
    series.pos = 0;
    labels.writeSeries(series, body, limits);
    const seriesPart = series.result();
    for (let i = 0; i < samples.count; i++) {
      const [lo, hi] = msToNanos(samples.timeLo[i] ?? 0, samples.timeHi[i] ?? 0);
      if (!admitted(resolver, tenant, limits)) continue;
      const rejection = limits.rejectionBefore(tenant, lo, hi, w.pos, false);
      if (rejection !== undefined) { limits.reject(rejection); continue; }
      const rowStart = limits.beginRow(w);
      w.bytes(head);
      labels.writeName(w, body);
      w.bytes(sampleType);
      w.bytes(seriesPart);
      w.u64Parts(lo, hi);
      w.u32(0); // flags
      rawDouble(w, body, samples.valueAt[i] ?? -1);
      w.bytes(sampleTail);
      if (limits.endRow(w, rowStart, undefined)) rowCount++;
    }
    for (let i = 0; i < histograms.count; i++) {
      histogram.read(body, histograms.starts[i] ?? 0, histograms.ends[i] ?? 0);
      if (!histogram.exponential) { skippedHistograms++; continue; }
      if (!admitted(resolver, tenant, limits)) continue;
      const [lo, hi] = msToNanos(histogram.timeLo, histogram.timeHi);
      const rejection = histogram.tooWide ? { reason: 'request_too_expansive' as const } : limits.rejectionBefore(tenant, lo, hi, w.pos, false);
      if (rejection !== undefined) { limits.reject(rejection); continue; }
      const rowStart = limits.beginRow(w);
      w.bytes(head);
      labels.writeName(w, body);
      w.bytes(histogramType);
      w.bytes(seriesPart);
      w.u64Parts(lo, hi);
      w.u32(0); // flags
      histogram.write(w, body);
      if (limits.endRow(w, rowStart, undefined)) rowCount++;
    }
  }
  return { batch: { table: 'metrics', rows: w.copy(), rowCount, rejected: limits.tally }, metadata, skippedHistograms };
}

/** Counts an item for the tenant and says whether its tenant takes it (a tenant over its ingest limit does not: tallied as rejected). */
function admitted(resolver: TenantResolver, tenant: string, limits: RequestLimits): boolean {
  const resolution = resolver.authorize({ ok: true, tenant });
  if (resolution.ok) return true;
  limits.reject(resolution);
  return false;
}

/** The remote write converter under the gateway's item limits, at `now()` (ms); with `settings`, each tenant's retention. */
export function remoteWriteConverter(limits: ItemLimits, now: () => number = Date.now, settings?: TenantSettingsView): (body: Buffer, tenant: string, resolver: TenantResolver) => WireResult<RemoteWriteBatch> {
  return (body, tenant, resolver) => readWire(() => writeRequestRows(body, tenant, resolver, new RequestLimits(limits, 'metrics', now(), body.length, settings)));
}
