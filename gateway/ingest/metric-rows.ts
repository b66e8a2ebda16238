// Metric data points → rows of the metrics table (schema v1), one row per
// point of all five OTLP types. Exemplars are dropped: schema v1 has no
// column for them and no API query reads them (docs/gateway.md).
import type {
  ExponentialHistogramDataPoint, HistogramDataPoint, KeyValue, Metric, NumberDataPoint, ResourceMetrics, SummaryDataPoint,
} from '../wire/otlp-messages.ts';
import { attributeText, attributesJson, clampInt, floatText, int64Text, nanosText, str, uint64Text } from './otlp-values.ts';
import type { RowBatch } from './row-batch.ts';
import { RejectionTally, tenantOf } from './tenant-resolver.ts';
import type { Resolution, TenantResolver } from './tenant-resolver.ts';

interface PointCommon {
  readonly attributes?: KeyValue[] | null;
  readonly startTimeUnixNano?: NumberDataPoint['startTimeUnixNano'];
  readonly timeUnixNano?: NumberDataPoint['timeUnixNano'];
  readonly flags?: number | null;
}

const optionalFloat = (v: number | null | undefined): string => (v === null || v === undefined ? 'null' : floatText(v));

function numberFields(p: NumberDataPoint): string {
  const value = p.value === 'asInt' ? Number(int64Text(p.asInt)) : p.asDouble;
  return `,"value":${floatText(value)}`;
}

function histogramFields(p: HistogramDataPoint): string {
  return `,"count":${uint64Text(p.count)},"sum":${floatText(p.sum)},"min":${optionalFloat(p.min)},"max":${optionalFloat(p.max)}` +
    `,"bucket_counts":[${(p.bucketCounts ?? []).map(uint64Text).join(',')}]` +
    `,"explicit_bounds":[${(p.explicitBounds ?? []).map(floatText).join(',')}]`;
}

function exponentialFields(p: ExponentialHistogramDataPoint): string {
  const int32 = (v: number | null | undefined): number => clampInt(v, -2147483648, 2147483647);
  return `,"count":${uint64Text(p.count)},"sum":${floatText(p.sum)},"min":${optionalFloat(p.min)},"max":${optionalFloat(p.max)}` +
    `,"exp_scale":${int32(p.scale)},"exp_zero_count":${uint64Text(p.zeroCount)},"exp_zero_threshold":${floatText(p.zeroThreshold)}` +
    `,"exp_positive_offset":${int32(p.positive?.offset)},"exp_positive_bucket_counts":[${(p.positive?.bucketCounts ?? []).map(uint64Text).join(',')}]` +
    `,"exp_negative_offset":${int32(p.negative?.offset)},"exp_negative_bucket_counts":[${(p.negative?.bucketCounts ?? []).map(uint64Text).join(',')}]`;
}

function summaryFields(p: SummaryDataPoint): string {
  const quantiles = p.quantileValues ?? [];
  return `,"count":${uint64Text(p.count)},"sum":${floatText(p.sum)}` +
    `,"quantiles":[${quantiles.map((q) => floatText(q.quantile)).join(',')}]` +
    `,"quantile_values":[${quantiles.map((q) => floatText(q.value)).join(',')}]`;
}

type PointsOf = { readonly type: string; readonly temporality: number; readonly monotonic: boolean; readonly points: readonly PointCommon[]; readonly fields: (p: never) => string };

/** The points of a metric with their type-specific serializer; undefined for a metric without data. */
function pointsOf(metric: Metric): PointsOf | undefined {
  switch (metric.data) {
    case 'gauge': return { type: 'gauge', temporality: 0, monotonic: false, points: metric.gauge?.dataPoints ?? [], fields: numberFields };
    case 'sum': return {
      type: 'sum', temporality: clampInt(metric.sum?.aggregationTemporality, 0, 2), monotonic: metric.sum?.isMonotonic === true,
      points: metric.sum?.dataPoints ?? [], fields: numberFields,
    };
    case 'histogram': return {
      type: 'histogram', temporality: clampInt(metric.histogram?.aggregationTemporality, 0, 2), monotonic: false,
      points: metric.histogram?.dataPoints ?? [], fields: histogramFields,
    };
    case 'exponentialHistogram': return {
      type: 'exponential_histogram', temporality: clampInt(metric.exponentialHistogram?.aggregationTemporality, 0, 2), monotonic: false,
      points: metric.exponentialHistogram?.dataPoints ?? [], fields: exponentialFields,
    };
    case 'summary': return { type: 'summary', temporality: 0, monotonic: false, points: metric.summary?.dataPoints ?? [], fields: summaryFields };
    case undefined: return undefined;
  }
}

/** Converts the data points of a request. */
export function metricRows(resourceMetrics: readonly ResourceMetrics[], resolver: TenantResolver): RowBatch {
  const rejected = new RejectionTally();
  let rows = '';
  let rowCount = 0;
  for (const rm of resourceMetrics) {
    const resourceAttributes = rm.resource?.attributes;
    const resourceTenant: Resolution | undefined = tenantOf(resourceAttributes);
    const resourcePart = `,"service_name":${str(attributeText(resourceAttributes, 'service.name'))}` +
      `,"resource_schema_url":${str(rm.schemaUrl)},"resource_attributes":${attributesJson(resourceAttributes)}`;
    for (const sm of rm.scopeMetrics ?? []) {
      const scopePart = `,"scope_name":${str(sm.scope?.name)},"scope_version":${str(sm.scope?.version)}` +
        `,"scope_attributes":${attributesJson(sm.scope?.attributes)}`;
      for (const metric of sm.metrics ?? []) {
        const data = pointsOf(metric);
        if (data === undefined) continue;
        const metricPart = `,"metric_name":${str(metric.name)},"metric_type":${str(data.type)},"description":${str(metric.description)}` +
          `,"unit":${str(metric.unit)},"temporality":${data.temporality},"is_monotonic":${data.monotonic}`;
        const fields = data.fields as (p: PointCommon) => string;
        for (const point of data.points) {
          const tenant = resolver.resolve(resourceTenant, point.attributes);
          if (!tenant.ok) {
            rejected.add(tenant);
            continue;
          }
          rows += `{"tenant_id":${str(tenant.tenant)}` + metricPart + resourcePart + scopePart +
            `,"attributes":${attributesJson(point.attributes)},"start_timestamp":${nanosText(point.startTimeUnixNano)}` +
            `,"timestamp":${nanosText(point.timeUnixNano)},"flags":${clampInt(point.flags, 0, 0xffffffff)}` + fields(point) + '}\n';
          rowCount++;
        }
      }
    }
  }
  return { table: 'metrics', rows, rowCount, rejected };
}
