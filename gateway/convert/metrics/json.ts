// OTLP/JSON ExportMetricsServiceRequest → RowBinary rows of the metrics
// table (schema v1), in the order of rowColumns.metrics, read straight from
// the parsed JSON (common/otlp-json.ts); one row per point of all five OTLP
// types. Each type fills its own columns and writes the defaults of the
// others (0, '', empty arrays, NULL min and max). Exemplars are dropped:
// schema v1 has no column for them and no API query reads them
// (docs/gateway.md); they are still checked, as before.
import { fail } from '../../../src/result.ts';
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import { RowWriter } from '../../rowbinary/row-writer.ts';
import { boundRejection, enumRejection } from '../common/field-checks.ts';
import type { ItemRejection } from '../common/item-tally.ts';
import { RequestLimits } from '../common/item-limits.ts';
import type { ItemLimits } from '../common/item-limits.ts';
import type { TenantSettingsView } from '../../../src/tenant/settings/tenant-settings.ts';
import { checkAttributes, resourcePart, scopePart, tenantOf, writeAttributes } from '../common/json-attributes.ts';
import { AggregationTemporality } from '../common/otlp-enums.ts';
import {
  double,
  enumValue,
  fixed64,
  fixed64Element,
  hexId,
  int32,
  int64,
  messageField,
  messageList,
  optionalDouble,
  readOtlpJson,
  scalarList,
  text,
  uint32,
} from '../common/otlp-json.ts';
import type { Json } from '../common/otlp-json.ts';
import type { ResourcePart, ScopePart } from '../common/resource-scope-part.ts';
import { clampInt, int64Number, writeFloat, writeNanos, writeOptionalFloat, writeUint64 } from '../common/otlp-values.ts';
import type { RowConverter } from '../common/row-converter.ts';
import type { TenantResolver } from '../common/tenant-resolver.ts';
import { metricType, noBuckets, noCountSum, noExponential, noQuantiles, noValue } from './metric-columns.ts';

const v1 = '.opentelemetry.proto.metrics.v1.';
const names = {
  resourceMetrics: '.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest.resourceMetrics',
  resource: `${v1}ResourceMetrics.resource`,
  scopeMetrics: `${v1}ResourceMetrics.scopeMetrics`,
  scope: `${v1}ScopeMetrics.scope`,
  metrics: `${v1}ScopeMetrics.metrics`,
  metadata: `${v1}Metric.metadata`,
  filteredAttributes: `${v1}Exemplar.filteredAttributes`,
  positive: `${v1}ExponentialHistogramDataPoint.positive`,
  negative: `${v1}ExponentialHistogramDataPoint.negative`,
  bucketCountsOfBuckets: `${v1}ExponentialHistogramDataPoint.Buckets.bucketCounts`,
} as const;

/** Checks a point's exemplars (at depth 6; their KeyValues at 7), which no column stores. */
function checkExemplars(point: Json, type: string): void {
  for (const exemplar of messageList(point['exemplars'], `${v1}${type}.exemplars`)) {
    checkAttributes(exemplar['filteredAttributes'], names.filteredAttributes, 7);
    fixed64(exemplar['timeUnixNano']);
    if (exemplar['asInt'] !== null && exemplar['asInt'] !== undefined) int64(exemplar['asInt']);
    // Only a string id was checked before (as hex); anything else was taken and dropped.
    if (typeof exemplar['spanId'] === 'string') hexId(exemplar['spanId'], 'spanId');
    if (typeof exemplar['traceId'] === 'string') hexId(exemplar['traceId'], 'traceId');
  }
}

function writeCounts(w: RowWriter, counts: unknown, name: string): void {
  const list = scalarList(counts, name);
  w.varint(list.length);
  for (const count of list) writeUint64(w, fixed64Element(count));
}

/** count, sum, min, max: the columns every aggregate point fills (min and max NULL when absent). */
function writeAggregate(w: RowWriter, p: Json, withMinMax: boolean): void {
  writeUint64(w, fixed64(p['count']));
  writeFloat(w, double(p['sum']));
  writeOptionalFloat(w, withMinMax ? optionalDouble(p['min']) : undefined);
  writeOptionalFloat(w, withMinMax ? optionalDouble(p['max']) : undefined);
}

function writeNumber(w: RowWriter, p: Json): void {
  // asInt comes after asDouble in fromObject, so it wins when both are given.
  const asInt = p['asInt'];
  writeFloat(w, asInt !== null && asInt !== undefined ? int64Number(int64(asInt)) : double(p['asDouble']));
  w.bytes(noCountSum);
  w.bytes(noBuckets);
  w.bytes(noExponential);
  w.bytes(noQuantiles);
}

const boundsName = `${v1}HistogramDataPoint.explicitBounds`;

/** The rejection of a histogram point with a bound that is not finite ("NaN", "Infinity" or text that is no number), or undefined. */
function boundsRejection(p: Json): ItemRejection | undefined {
  for (const bound of scalarList(p['explicitBounds'], boundsName)) {
    const rejection = boundRejection(Number(bound));
    if (rejection !== undefined) return rejection;
  }
  return undefined;
}

function writeHistogram(w: RowWriter, p: Json): void {
  w.bytes(noValue);
  writeAggregate(w, p, true);
  writeCounts(w, p['bucketCounts'], `${v1}HistogramDataPoint.bucketCounts`);
  const bounds = scalarList(p['explicitBounds'], boundsName);
  w.varint(bounds.length);
  for (const bound of bounds) writeFloat(w, Number(bound));
  w.bytes(noExponential);
  w.bytes(noQuantiles);
}

/** exp_*_offset and exp_*_bucket_counts; an absent Buckets message has offset -2^31, as the previous path wrote it. */
function writeBuckets(w: RowWriter, field: unknown, name: string): void {
  const buckets = messageField(field, name);
  w.i32(buckets === undefined ? -2147483648 : int32(buckets['offset']));
  writeCounts(w, buckets?.['bucketCounts'], names.bucketCountsOfBuckets);
}

function writeExponential(w: RowWriter, p: Json): void {
  w.bytes(noValue);
  writeAggregate(w, p, true);
  w.bytes(noBuckets);
  w.i32(int32(p['scale']));
  writeUint64(w, fixed64(p['zeroCount']));
  writeFloat(w, double(p['zeroThreshold']));
  writeBuckets(w, p['positive'], names.positive);
  writeBuckets(w, p['negative'], names.negative);
  w.bytes(noQuantiles);
}

function writeSummary(w: RowWriter, p: Json): void {
  w.bytes(noValue);
  writeAggregate(w, p, false); // a summary has no min or max: NULL
  w.bytes(noBuckets);
  w.bytes(noExponential);
  const quantiles = messageList(p['quantileValues'], `${v1}SummaryDataPoint.quantileValues`);
  w.varint(quantiles.length);
  for (const q of quantiles) writeFloat(w, double(q['quantile']));
  w.varint(quantiles.length);
  for (const q of quantiles) writeFloat(w, double(q['value']));
}

interface PointType {
  /** The Metric field and the point message, as protobuf names them (for errors). */
  readonly field: string;
  readonly message: string;
  readonly point: string;
  readonly type: number;
  readonly withTemporality: boolean;
  readonly fields: (w: RowWriter, p: Json) => void;
}

// In the order fromObject reads them: when a metric has several, the last one given is its data.
const pointTypes: readonly PointType[] = [
  { field: 'gauge', message: 'Gauge', point: 'NumberDataPoint', type: metricType.gauge, withTemporality: false, fields: writeNumber },
  { field: 'sum', message: 'Sum', point: 'NumberDataPoint', type: metricType.sum, withTemporality: true, fields: writeNumber },
  { field: 'histogram', message: 'Histogram', point: 'HistogramDataPoint', type: metricType.histogram, withTemporality: true, fields: writeHistogram },
  {
    field: 'exponentialHistogram',
    message: 'ExponentialHistogram',
    point: 'ExponentialHistogramDataPoint',
    type: metricType.exponentialHistogram,
    withTemporality: true,
    fields: writeExponential,
  },
  { field: 'summary', message: 'Summary', point: 'SummaryDataPoint', type: metricType.summary, withTemporality: false, fields: writeSummary },
];

interface Target {
  readonly w: RowWriter;
  readonly resolver: TenantResolver;
  readonly limits: RequestLimits;
  rowCount: number;
}

/**
 * Writes the rows of one metric's points of `kind` (data: its Gauge, Sum, …
 * object). Points are at depth 5, their KeyValues at 6. A rejected point is
 * written too (a bad field refuses the whole request, as before) and then cut off.
 */
function writePoints(to: Target, metric: Json, kind: PointType, data: Json, resource: ResourcePart, scope: ScopePart): void {
  const head = new RowWriter(256);
  head.text(text(metric['name']));
  head.u8(kind.type);
  head.text(text(metric['description']));
  head.text(text(metric['unit']));
  const temporalityValue = enumValue(data['aggregationTemporality'], AggregationTemporality);
  const temporality = kind.withTemporality ? enumRejection('aggregation temporality', temporalityValue) : undefined;
  head.u8(kind.withTemporality ? clampInt(temporalityValue, 0, 2) : 0);
  head.u8(kind.type === metricType.sum && Boolean(data['isMonotonic']) ? 1 : 0);
  const metricPart = head.result();
  const { w, limits } = to;
  const attributesName = `${v1}${kind.point}.attributes`;
  for (const point of messageList(data['dataPoints'], `${v1}${kind.message}.dataPoints`)) {
    const tenant = to.resolver.authorize(resource.tenant ?? tenantOf(point['attributes'], 6) ?? fail({ reason: 'missing_tenant' }));
    const time = fixed64(point['timeUnixNano']);
    const invalid = temporality ?? (kind.type === metricType.histogram ? boundsRejection(point) : undefined);
    const rejection = tenant.ok
      ? limits.rejectionBefore(tenant.value, time.low >>> 0, time.high >>> 0, w.pos, resource.tooDeep || scope.tooDeep, invalid)
      : tenant.error;
    const rowStart = limits.beginRow(w);
    w.text(tenant.ok ? tenant.value : '');
    w.bytes(metricPart);
    w.bytes(resource.bytes);
    w.bytes(scope.bytes);
    writeAttributes(w, point['attributes'], attributesName, 6, limits);
    writeNanos(w, fixed64(point['startTimeUnixNano']));
    writeNanos(w, time);
    w.u32(clampInt(uint32(point['flags']), 0, 0xffffffff));
    kind.fields(w, point);
    if (kind.point !== 'SummaryDataPoint') checkExemplars(point, kind.point);
    if (limits.endRow(w, rowStart, rejection)) to.rowCount++;
  }
}

/** Converts the data points of a parsed request. */
function metricRows(root: Json, resolver: TenantResolver, limits: RequestLimits, nowMs: number): RowBatch {
  const to: Target = { w: new RowWriter(), resolver, limits, rowCount: 0 };
  for (const rm of messageList(root['resourceMetrics'], names.resourceMetrics)) {
    const resource = resourcePart(rm['resource'], rm['schemaUrl'], names.resource, limits);
    for (const sm of messageList(rm['scopeMetrics'], names.scopeMetrics)) {
      const scope = scopePart(sm['scope'], names.scope, false, undefined, limits);
      for (const metric of messageList(sm['metrics'], names.metrics)) {
        checkAttributes(metric['metadata'], names.metadata, 4);
        let kind: PointType | undefined;
        let data: Json | undefined;
        for (const t of pointTypes) {
          const given = messageField(metric[t.field], `${v1}Metric.${t.field}`);
          if (given === undefined) continue;
          // A type the metric gives but that a later one overrides: its points are checked, not stored.
          if (kind !== undefined && data !== undefined)
            writePoints({ ...to, w: new RowWriter(1024), limits: limits.scratch('metrics', nowMs) }, metric, kind, data, resource, scope);
          kind = t;
          data = given;
        }
        if (kind !== undefined && data !== undefined) writePoints(to, metric, kind, data, resource, scope);
      }
    }
  }
  return { table: 'metrics', rows: to.w.rows(), rowCount: to.rowCount, rejected: limits.tally };
}

/** OTLP/JSON metrics under `limits`, at `now()` (ms). */
export function metricsFromJson(limits: ItemLimits, now: () => number, settings?: TenantSettingsView): RowConverter {
  return {
    convert(body, tenants) {
      const nowMs = now();
      const request = readOtlpJson(body, (root) => metricRows(root, tenants, new RequestLimits(limits, 'metrics', nowMs, body.length, settings), nowMs));
      return request;
    },
  };
}
