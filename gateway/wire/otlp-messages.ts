// The generated OTLP and google.rpc classes (proto/gen, built by `npm run
// proto`), re-exported under short names so the rest of the gateway reads
// as OTLP rather than as protobufjs namespaces.
import { google, opentelemetry } from '../../proto/gen/otlp.js';
import type { opentelemetry as otel } from '../../proto/gen/otlp.js';

const v1 = opentelemetry.proto;

export const ExportTraceServiceRequest = v1.collector.trace.v1.ExportTraceServiceRequest;
export const ExportTraceServiceResponse = v1.collector.trace.v1.ExportTraceServiceResponse;
export const ExportLogsServiceRequest = v1.collector.logs.v1.ExportLogsServiceRequest;
export const ExportLogsServiceResponse = v1.collector.logs.v1.ExportLogsServiceResponse;
export const ExportMetricsServiceRequest = v1.collector.metrics.v1.ExportMetricsServiceRequest;
export const ExportMetricsServiceResponse = v1.collector.metrics.v1.ExportMetricsServiceResponse;
export const AnyValueMessage = v1.common.v1.AnyValue;
export const RpcStatus = google.rpc.Status;
export const RetryInfo = google.rpc.RetryInfo;

export type AnyValue = otel.proto.common.v1.AnyValue.$Properties;
export type KeyValue = otel.proto.common.v1.KeyValue.$Properties;
export type Resource = otel.proto.resource.v1.Resource.$Properties;
export type Scope = otel.proto.common.v1.InstrumentationScope.$Properties;
export type ResourceSpans = otel.proto.trace.v1.ResourceSpans.$Properties;
export type ScopeSpans = otel.proto.trace.v1.ScopeSpans.$Properties;
export type Span = otel.proto.trace.v1.Span.$Properties;
export type ResourceLogs = otel.proto.logs.v1.ResourceLogs.$Properties;
export type ScopeLogs = otel.proto.logs.v1.ScopeLogs.$Properties;
export type LogRecord = otel.proto.logs.v1.LogRecord.$Properties;
export type ResourceMetrics = otel.proto.metrics.v1.ResourceMetrics.$Properties;
export type ScopeMetrics = otel.proto.metrics.v1.ScopeMetrics.$Properties;
export type Metric = otel.proto.metrics.v1.Metric.$Properties;
export type NumberDataPoint = otel.proto.metrics.v1.NumberDataPoint.$Properties;
export type HistogramDataPoint = otel.proto.metrics.v1.HistogramDataPoint.$Properties;
export type ExponentialHistogramDataPoint = otel.proto.metrics.v1.ExponentialHistogramDataPoint.$Properties;
export type SummaryDataPoint = otel.proto.metrics.v1.SummaryDataPoint.$Properties;

export const signalNames = ['traces', 'logs', 'metrics'] as const;
export type SignalName = (typeof signalNames)[number];

/** The two OTLP encodings: binary protobuf (HTTP and gRPC) and OTLP/JSON (HTTP). */
export type WireFormat = 'protobuf' | 'json';

/** A 64-bit integer as protobufjs hands it over: a Long, or a number when it fits. */
export interface Int64 {
  readonly low: number;
  readonly high: number;
  readonly unsigned: boolean;
}
export type Int64Like = number | Int64;
