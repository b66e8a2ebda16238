// Spans of the spans table back into OTLP, as Tempo serves a trace: OTLP
// JSON (ids in base64, enums by name, 64-bit integers as strings) grouped by
// resource and scope, and the same message as protobuf bytes
// (opentelemetry.proto.trace.v1.TracesData, which has Tempo's Trace wire
// format). Attribute values are stored as text; a value reads back as an
// int, double or bool when its text is one (what the SDKs send typed).
import protobuf from 'protobufjs/minimal.js';
import { opentelemetry } from '../../../proto/gen/otlp.js';

export type OtlpAnyValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };
export interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

/** The typed OTLP value of an attribute's stored text. */
export function typedValue(text: string): OtlpAnyValue {
  if (/^-?\d{1,19}$/.test(text)) return { intValue: text };
  if (text === 'true' || text === 'false') return { boolValue: text === 'true' };
  if (/^-?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?$/.test(text)) return { doubleValue: Number(text) };
  return { stringValue: text };
}

/** A Map column as OTLP key-values. */
export function keyValues(map: Readonly<Record<string, string>>): OtlpKeyValue[] {
  return Object.entries(map).map(([key, value]) => ({ key, value: typedValue(value) }));
}

/** Lower-case hex (the stored form) as base64 (OTLP JSON's form in Tempo's answers). */
export const hexToBase64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64');

/** One row of a trace lookup (trace-by-id.ts). */
export interface SpanRow {
  ts_ns: string;
  end_ns: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  trace_state: string;
  flags: number;
  span_name: string;
  span_kind: string;
  status_code: string;
  status_message: string;
  resource_schema_url: string;
  resource_attributes: Record<string, string>;
  scope_name: string;
  scope_version: string;
  scope_attributes: Record<string, string>;
  span_attributes: Record<string, string>;
  event_ts: string[];
  event_names: string[];
  event_attributes: Record<string, string>[];
  link_trace_ids: string[];
  link_span_ids: string[];
  link_trace_states: string[];
  link_attributes: Record<string, string>[];
  dropped_attributes_count: number;
  dropped_events_count: number;
  dropped_links_count: number;
}

export interface OtlpResourceSpans {
  resource: { attributes: OtlpKeyValue[] };
  schemaUrl?: string;
  scopeSpans: { scope: { name?: string; version?: string; attributes?: OtlpKeyValue[] }; spans: Record<string, unknown>[] }[];
}

const nonZero = (name: string, n: number): Record<string, number> => (n > 0 ? { [name]: n } : {});
const nonEmpty = (name: string, s: string): Record<string, string> => (s === '' ? {} : { [name]: s });

function otlpSpan(r: SpanRow): Record<string, unknown> {
  const attributes = keyValues(r.span_attributes);
  const events = r.event_ts.map((t, i) => ({ timeUnixNano: t, name: r.event_names[i] ?? '', ...withAttributes(r.event_attributes[i]) }));
  const links = r.link_trace_ids.map((t, i) => ({
    traceId: hexToBase64(t),
    spanId: hexToBase64(r.link_span_ids[i] ?? ''),
    ...nonEmpty('traceState', r.link_trace_states[i] ?? ''),
    ...withAttributes(r.link_attributes[i]),
  }));
  const status = r.status_code === 'UNSET' ? {} : { code: `STATUS_CODE_${r.status_code}`, ...nonEmpty('message', r.status_message) };
  return {
    traceId: hexToBase64(r.trace_id),
    spanId: hexToBase64(r.span_id),
    ...(r.parent_span_id === '' ? {} : { parentSpanId: hexToBase64(r.parent_span_id) }),
    ...nonEmpty('traceState', r.trace_state),
    name: r.span_name,
    ...(r.span_kind === 'UNSPECIFIED' ? {} : { kind: `SPAN_KIND_${r.span_kind}` }),
    startTimeUnixNano: r.ts_ns,
    endTimeUnixNano: r.end_ns,
    ...(attributes.length === 0 ? {} : { attributes }),
    ...nonZero('droppedAttributesCount', r.dropped_attributes_count),
    ...(events.length === 0 ? {} : { events }),
    ...nonZero('droppedEventsCount', r.dropped_events_count),
    ...(links.length === 0 ? {} : { links }),
    ...nonZero('droppedLinksCount', r.dropped_links_count),
    status,
  };
}

function withAttributes(map: Readonly<Record<string, string>> | undefined): { attributes?: OtlpKeyValue[] } {
  const attributes = keyValues(map ?? {});
  return attributes.length === 0 ? {} : { attributes };
}

/** A resource's or scope's identity, for grouping spans as OTLP does. */
const groupKey = (...parts: unknown[]): string => JSON.stringify(parts);

/** Rows of one trace as OTLP ResourceSpans (by resource, then by scope, in row order). */
export function resourceSpans(rows: readonly SpanRow[]): OtlpResourceSpans[] {
  const resources = new Map<string, OtlpResourceSpans & { scopes: Map<string, Record<string, unknown>[]> }>();
  for (const r of rows) {
    const rKey = groupKey(r.resource_schema_url, r.resource_attributes);
    let resource = resources.get(rKey);
    if (resource === undefined) {
      resource = {
        resource: { attributes: keyValues(r.resource_attributes) },
        ...nonEmpty('schemaUrl', r.resource_schema_url),
        scopeSpans: [],
        scopes: new Map(),
      };
      resources.set(rKey, resource);
    }
    const sKey = groupKey(r.scope_name, r.scope_version, r.scope_attributes);
    let spans = resource.scopes.get(sKey);
    if (spans === undefined) {
      spans = [];
      resource.scopes.set(sKey, spans);
      const scopeAttributes = keyValues(r.scope_attributes);
      resource.scopeSpans.push({
        scope: {
          ...nonEmpty('name', r.scope_name),
          ...nonEmpty('version', r.scope_version),
          ...(scopeAttributes.length === 0 ? {} : { attributes: scopeAttributes }),
        },
        spans,
      });
    }
    spans.push(otlpSpan(r));
  }
  return [...resources.values()].map(({ scopes: _scopes, ...rest }) => rest);
}

/** The trace as protobuf bytes of Tempo's Trace message (field 1: repeated ResourceSpans, as in TracesData). */
export function traceProtobuf(spans: readonly OtlpResourceSpans[]): Uint8Array {
  const message = opentelemetry.proto.trace.v1.TracesData.fromObject({ resourceSpans: spans });
  return opentelemetry.proto.trace.v1.TracesData.encode(message).finish();
}

/** Tempo's TraceByIDResponse (v2) as protobuf: field 1 the Trace message, field 2 the (empty) metrics, 3 and 4 a PARTIAL status and its message. */
export function traceByIdResponseProtobuf(spans: readonly OtlpResourceSpans[], partial?: string): Uint8Array {
  const trace = traceProtobuf(spans);
  const w = protobuf.Writer.create().uint32(10).bytes(trace).uint32(18).bytes(new Uint8Array(0));
  // PartialStatus PARTIAL = 1.
  if (partial !== undefined) w.uint32(24).uint32(1).uint32(34).string(partial);
  return w.finish();
}
