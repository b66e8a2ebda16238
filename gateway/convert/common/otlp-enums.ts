// The generated OTLP enums (name → number) the OTLP/JSON converters accept
// by name, as protobufjs's fromObject did: "SPAN_KIND_SERVER" is 2.
import { opentelemetry } from '../../../proto/gen/otlp.js';

const v1 = opentelemetry.proto;

export const SpanKind = v1.trace.v1.Span.SpanKind;
export const StatusCode = v1.trace.v1.Status.StatusCode;
export const SeverityNumber = v1.logs.v1.SeverityNumber;
export const AggregationTemporality = v1.metrics.v1.AggregationTemporality;
