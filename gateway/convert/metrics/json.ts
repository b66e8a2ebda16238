// OTLP/JSON ExportMetricsServiceRequest → RowBinary rows of the metrics
// table (schema v1), in the order of rowColumns.metrics, through the
// generated message; one row per point of all five OTLP types.
// Each type fills its own columns and writes the defaults of the others (0,
// '', empty arrays, NULL min and max). Exemplars are dropped: schema v1 has
// no column for them and no API query reads them (docs/gateway.md).
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import { RowWriter } from '../../rowbinary/row-writer.ts';
import { ExportMetricsServiceRequest } from '../../wire/otlp-messages.ts';
import type {
  ExponentialHistogramDataPoint, HistogramDataPoint, KeyValue, Metric, NumberDataPoint, ResourceMetrics, SummaryDataPoint,
} from '../../wire/otlp-messages.ts';
import { readOtlpJson } from '../common/otlp-json.ts';
import {
  clampInt, int64Number, resourceScopeColumns, writeArray, writeAttributes, writeFloat, writeNanos, writeOptionalFloat, writeUint64,
} from '../common/otlp-values.ts';
import type { RowConverter } from '../common/row-converter.ts';
import { RejectionTally, tenantOf } from '../common/tenant-resolver.ts';
import type { Resolution, TenantResolver } from '../common/tenant-resolver.ts';
import { metricType, noBuckets, noCountSum, noExponential, noQuantiles, noValue } from './metric-columns.ts';

interface PointCommon {
  readonly attributes?: KeyValue[] | null;
  readonly startTimeUnixNano?: NumberDataPoint['startTimeUnixNano'];
  readonly timeUnixNano?: NumberDataPoint['timeUnixNano'];
  readonly flags?: number | null;
}

const int32 = (v: number | null | undefined): number => clampInt(v, -2147483648, 2147483647);

function writeCounts(w: RowWriter, counts: readonly NonNullable<HistogramDataPoint['count']>[] | null | undefined): void {
  writeArray(w, counts, writeUint64);
}

/** count, sum, min, max: the columns every aggregate point fills (min and max NULL when absent). */
function writeAggregate(w: RowWriter, p: { count?: HistogramDataPoint['count']; sum?: number | null; min?: number | null; max?: number | null }): void {
  writeUint64(w, p.count);
  writeFloat(w, p.sum);
  writeOptionalFloat(w, p.min);
  writeOptionalFloat(w, p.max);
}

function writeNumber(w: RowWriter, p: NumberDataPoint): void {
  writeFloat(w, p.value === 'asInt' ? int64Number(p.asInt) : p.asDouble);
  w.bytes(noCountSum);
  w.bytes(noBuckets);
  w.bytes(noExponential);
  w.bytes(noQuantiles);
}

function writeHistogram(w: RowWriter, p: HistogramDataPoint): void {
  w.bytes(noValue);
  writeAggregate(w, p);
  writeCounts(w, p.bucketCounts);
  writeArray(w, p.explicitBounds, writeFloat);
  w.bytes(noExponential);
  w.bytes(noQuantiles);
}

function writeExponential(w: RowWriter, p: ExponentialHistogramDataPoint): void {
  w.bytes(noValue);
  writeAggregate(w, p);
  w.bytes(noBuckets);
  w.i32(int32(p.scale));
  writeUint64(w, p.zeroCount);
  writeFloat(w, p.zeroThreshold);
  w.i32(int32(p.positive?.offset));
  writeCounts(w, p.positive?.bucketCounts);
  w.i32(int32(p.negative?.offset));
  writeCounts(w, p.negative?.bucketCounts);
  w.bytes(noQuantiles);
}

type Quantile = NonNullable<SummaryDataPoint['quantileValues']>[number];
const quantileOf = (w: RowWriter, q: Quantile): void => { writeFloat(w, q.quantile); };
const quantileValue = (w: RowWriter, q: Quantile): void => { writeFloat(w, q.value); };

function writeSummary(w: RowWriter, p: SummaryDataPoint): void {
  w.bytes(noValue);
  writeAggregate(w, { count: p.count, sum: p.sum }); // a summary has no min or max: NULL
  w.bytes(noBuckets);
  w.bytes(noExponential);
  writeArray(w, p.quantileValues, quantileOf);
  writeArray(w, p.quantileValues, quantileValue);
}

type PointsOf = {
  readonly type: number; readonly temporality: number; readonly monotonic: boolean; readonly points: readonly PointCommon[];
  readonly fields: (w: RowWriter, p: never) => void;
};

/** The points of a metric with their type-specific writer (value … quantile_values); undefined for a metric without data. */
function pointsOf(metric: Metric): PointsOf | undefined {
  switch (metric.data) {
    case 'gauge': return { type: metricType.gauge, temporality: 0, monotonic: false, points: metric.gauge?.dataPoints ?? [], fields: writeNumber };
    case 'sum': return {
      type: metricType.sum, temporality: clampInt(metric.sum?.aggregationTemporality, 0, 2), monotonic: metric.sum?.isMonotonic === true,
      points: metric.sum?.dataPoints ?? [], fields: writeNumber,
    };
    case 'histogram': return {
      type: metricType.histogram, temporality: clampInt(metric.histogram?.aggregationTemporality, 0, 2), monotonic: false,
      points: metric.histogram?.dataPoints ?? [], fields: writeHistogram,
    };
    case 'exponentialHistogram': return {
      type: metricType.exponentialHistogram, temporality: clampInt(metric.exponentialHistogram?.aggregationTemporality, 0, 2), monotonic: false,
      points: metric.exponentialHistogram?.dataPoints ?? [], fields: writeExponential,
    };
    case 'summary': return { type: metricType.summary, temporality: 0, monotonic: false, points: metric.summary?.dataPoints ?? [], fields: writeSummary };
    case undefined: return undefined;
  }
}

/** Converts the data points of a decoded request. */
export function metricRows(resourceMetrics: readonly ResourceMetrics[], resolver: TenantResolver): RowBatch {
  const rejected = new RejectionTally();
  const w = new RowWriter();
  let rowCount = 0;
  for (const rm of resourceMetrics) {
    const resourceAttributes = rm.resource?.attributes;
    const resourceTenant: Resolution | undefined = tenantOf(resourceAttributes);
    for (const sm of rm.scopeMetrics ?? []) {
      const sharedPart = resourceScopeColumns(resourceAttributes, rm.schemaUrl, sm.scope);
      for (const metric of sm.metrics ?? []) {
        const data = pointsOf(metric);
        if (data === undefined) continue;
        const head = new RowWriter(256);
        head.text(metric.name ?? '');
        head.u8(data.type);
        head.text(metric.description ?? '');
        head.text(metric.unit ?? '');
        head.u8(data.temporality);
        head.u8(data.monotonic ? 1 : 0);
        const metricPart = head.result();
        const fields = data.fields as (w: RowWriter, p: PointCommon) => void;
        for (const point of data.points) {
          const tenant = resolver.resolve(resourceTenant, point.attributes);
          if (!tenant.ok) {
            rejected.add(tenant);
            continue;
          }
          w.text(tenant.tenant);
          w.bytes(metricPart);
          w.bytes(sharedPart);
          writeAttributes(w, point.attributes);
          writeNanos(w, point.startTimeUnixNano);
          writeNanos(w, point.timeUnixNano);
          w.u32(clampInt(point.flags, 0, 0xffffffff));
          fields(w, point);
          rowCount++;
        }
      }
    }
  }
  return { table: 'metrics', rows: w.rows(), rowCount, rejected };
}

/** OTLP/JSON metrics. */
export const metricsFromJson: RowConverter = {
  convert(body, tenants) {
    const request = readOtlpJson('metrics', body, (root) => ExportMetricsServiceRequest.fromObject(root));
    return request.ok ? { ok: true, batch: metricRows(request.value.resourceMetrics, tenants) } : request;
  },
};
