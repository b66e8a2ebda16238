// OTLP/JSON ExportTraceServiceRequest → RowBinary rows of the spans table
// (schema v1), in the order of rowColumns.spans, read straight from the
// parsed JSON (common/otlp-json.ts): ids are checked and written as the hex
// they arrive in, no message object is built. Every OTLP span field has a
// column: ids in lower-case hex, timestamps in Unix ns, events and links as
// parallel arrays. It writes exactly what traces/protobuf.ts writes for the
// same request (a property test holds the two together).
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import { RowWriter } from '../../rowbinary/row-writer.ts';
import { resourcePart, scopePart, tenantOf, writeAttributes } from '../common/json-attributes.ts';
import { SpanKind, StatusCode } from '../common/otlp-enums.ts';
import { enumValue, fixed64, hexId, messageField, messageList, readOtlpJson, text, uint32 } from '../common/otlp-json.ts';
import type { Json } from '../common/otlp-json.ts';
import { clampInt, writeDuration, writeNanos } from '../common/otlp-values.ts';
import type { RowConverter } from '../common/row-converter.ts';
import { RejectionTally } from '../common/tenant-resolver.ts';
import type { TenantResolver } from '../common/tenant-resolver.ts';

const v1 = '.opentelemetry.proto.trace.v1.';
const names = {
  resourceSpans: '.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest.resourceSpans', resource: `${v1}ResourceSpans.resource`,
  scopeSpans: `${v1}ResourceSpans.scopeSpans`, scope: `${v1}ScopeSpans.scope`, spans: `${v1}ScopeSpans.spans`, attributes: `${v1}Span.attributes`,
  events: `${v1}Span.events`, links: `${v1}Span.links`, status: `${v1}Span.status`, eventAttributes: `${v1}Span.Event.attributes`,
  linkAttributes: `${v1}Span.Link.attributes`,
} as const;

// KeyValues of a span are at depth 4 (request, ResourceSpans, ScopeSpans, Span, KeyValue), of its events and links at 5.
const eventTime = (w: RowWriter, e: Json): void => { writeNanos(w, fixed64(e['timeUnixNano'])); };
const eventName = (w: RowWriter, e: Json): void => { w.text(text(e['name'])); };
const eventAttributes = (w: RowWriter, e: Json): void => { writeAttributes(w, e['attributes'], names.eventAttributes, 5); };
const linkTraceId = (w: RowWriter, l: Json): void => { w.text(hexId(l['traceId'], 'traceId')); };
const linkSpanId = (w: RowWriter, l: Json): void => { w.text(hexId(l['spanId'], 'spanId')); };
const linkTraceState = (w: RowWriter, l: Json): void => { w.text(text(l['traceState'])); };
const linkAttributes = (w: RowWriter, l: Json): void => { writeAttributes(w, l['attributes'], names.linkAttributes, 5); };
const eventColumns = [eventTime, eventName, eventAttributes];
const linkColumns = [linkTraceId, linkSpanId, linkTraceState, linkAttributes];

/** event_timestamps … link_attributes. */
function writeEventsAndLinks(w: RowWriter, span: Json): void {
  const events = messageList(span['events'], names.events);
  const links = messageList(span['links'], names.links);
  for (const column of eventColumns) {
    w.varint(events.length);
    for (const event of events) column(w, event);
  }
  for (const column of linkColumns) {
    w.varint(links.length);
    for (const link of links) column(w, link);
  }
}

/** The columns of one span after tenant_id, with its resource's and scope's columns rendered. */
function writeSpan(w: RowWriter, span: Json, resource: Buffer, scope: Buffer): void {
  const start = fixed64(span['startTimeUnixNano']);
  writeNanos(w, start);
  w.text(hexId(span['traceId'], 'traceId'));
  w.text(hexId(span['spanId'], 'spanId'));
  w.text(hexId(span['parentSpanId'], 'parentSpanId'));
  w.text(text(span['traceState']));
  w.u32(clampInt(uint32(span['flags']), 0, 0xffffffff));
  w.text(text(span['name']));
  w.u8(clampInt(enumValue(span['kind'], SpanKind), 0, 5));
  writeDuration(w, start, fixed64(span['endTimeUnixNano']));
  const status = messageField(span['status'], names.status) ?? {};
  w.u8(clampInt(enumValue(status['code'], StatusCode), 0, 2));
  w.text(text(status['message']));
  w.bytes(resource);
  w.bytes(scope);
  writeAttributes(w, span['attributes'], names.attributes, 4);
  writeEventsAndLinks(w, span);
  w.u32(clampInt(uint32(span['droppedAttributesCount']), 0, 0xffffffff));
  w.u32(clampInt(uint32(span['droppedEventsCount']), 0, 0xffffffff));
  w.u32(clampInt(uint32(span['droppedLinksCount']), 0, 0xffffffff));
}

/**
 * Converts the spans of a parsed request whose tenants `resolver` decides. A
 * rejected span is written too (a bad field refuses the whole request, as
 * before) and then cut off again.
 */
function spanRows(root: Json, resolver: TenantResolver): RowBatch {
  const rejected = new RejectionTally();
  const w = new RowWriter();
  let rowCount = 0;
  for (const rs of messageList(root['resourceSpans'], names.resourceSpans)) {
    const resource = resourcePart(rs['resource'], rs['schemaUrl'], names.resource);
    for (const ss of messageList(rs['scopeSpans'], names.scopeSpans)) {
      const scope = scopePart(ss['scope'], names.scope, false, undefined);
      for (const span of messageList(ss['spans'], names.spans)) {
        const tenant = resolver.authorize(resource.tenant ?? tenantOf(span['attributes'], 4) ?? { ok: false, reason: 'missing_tenant' });
        const rowStart = w.pos;
        w.text(tenant.ok ? tenant.tenant : '');
        writeSpan(w, span, resource.bytes, scope);
        if (tenant.ok) {
          rowCount++;
        } else {
          rejected.add(tenant);
          w.pos = rowStart;
        }
      }
    }
  }
  return { table: 'spans', rows: w.rows(), rowCount, rejected };
}

/** OTLP/JSON traces. */
export const tracesFromJson: RowConverter = {
  convert(body, tenants) {
    const request = readOtlpJson(body, (root) => spanRows(root, tenants));
    return request.ok ? { ok: true, batch: request.value } : request;
  },
};
