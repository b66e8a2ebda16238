// OTLP/JSON ExportTraceServiceRequest → RowBinary rows of the spans table
// (schema v1), in the order of rowColumns.spans, read straight from the
// parsed JSON (common/otlp-json.ts): ids are checked and written as the hex
// they arrive in, no message object is built. Every OTLP span field has a
// column: ids in lower-case hex, timestamps in Unix ns, events and links as
// parallel arrays. It writes exactly what traces/protobuf.ts writes for the
// same request (a property test holds the two together).
import { fail } from '../../../src/result.ts';
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import { RowWriter } from '../../rowbinary/row-writer.ts';
import { enumRejection } from '../common/field-checks.ts';
import { RequestLimits } from '../common/item-limits.ts';
import type { ItemLimits } from '../common/item-limits.ts';
import type { TenantSettingsView } from '../../../src/tenant/settings/tenant-settings.ts';
import { resourcePart, scopePart, tenantOf, writeAttributes } from '../common/json-attributes.ts';
import { SpanKind, StatusCode } from '../common/otlp-enums.ts';
import { enumValue, fixed64, hexId, messageField, messageList, readOtlpJson, text, uint32 } from '../common/otlp-json.ts';
import type { Json } from '../common/otlp-json.ts';
import type { Int64 } from '../../wire/otlp-messages.ts';
import { clampInt, writeDuration, writeNanos } from '../common/otlp-values.ts';
import type { RowConverter } from '../common/row-converter.ts';
import type { TenantResolver } from '../common/tenant-resolver.ts';

const v1 = '.opentelemetry.proto.trace.v1.';
const names = {
  resourceSpans: '.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest.resourceSpans',
  resource: `${v1}ResourceSpans.resource`,
  scopeSpans: `${v1}ResourceSpans.scopeSpans`,
  scope: `${v1}ScopeSpans.scope`,
  spans: `${v1}ScopeSpans.spans`,
  attributes: `${v1}Span.attributes`,
  events: `${v1}Span.events`,
  links: `${v1}Span.links`,
  status: `${v1}Span.status`,
  eventAttributes: `${v1}Span.Event.attributes`,
  linkAttributes: `${v1}Span.Link.attributes`,
} as const;

type Column = (w: RowWriter, item: Json, limits: RequestLimits) => void;

// KeyValues of a span are at depth 4 (request, ResourceSpans, ScopeSpans, Span, KeyValue), of its events and links at 5.
const eventTime: Column = (w, e) => {
  writeNanos(w, fixed64(e['timeUnixNano']));
};
const eventName: Column = (w, e) => {
  w.text(text(e['name']));
};
const eventAttributes: Column = (w, e, limits) => {
  writeAttributes(w, e['attributes'], names.eventAttributes, 5, limits);
};
const linkTraceId: Column = (w, l) => {
  w.text(hexId(l['traceId'], 'traceId'));
};
const linkSpanId: Column = (w, l) => {
  w.text(hexId(l['spanId'], 'spanId'));
};
const linkTraceState: Column = (w, l) => {
  w.text(text(l['traceState']));
};
const linkAttributes: Column = (w, l, limits) => {
  writeAttributes(w, l['attributes'], names.linkAttributes, 5, limits);
};
const eventColumns = [eventTime, eventName, eventAttributes];
const linkColumns = [linkTraceId, linkSpanId, linkTraceState, linkAttributes];

/** Writes `columns` of the first `kept` of `items` as parallel arrays; the others are checked, not stored. */
function writeParallel(w: RowWriter, items: readonly Json[], kept: number, columns: readonly Column[], limits: RequestLimits): void {
  for (const column of columns) {
    w.varint(kept);
    for (let i = 0; i < kept; i++) column(w, items[i] ?? {}, limits);
  }
  if (kept === items.length) return;
  const scratch = new RowWriter(1024);
  const unstored = limits.scratch('traces', 0);
  for (let i = kept; i < items.length; i++) {
    for (const column of columns) {
      scratch.pos = 0;
      column(scratch, items[i] ?? {}, unstored);
    }
  }
}

/** event_timestamps … link_attributes, the first maxSpanEvents events and maxSpanLinks links; returns the events and links dropped. */
function writeEventsAndLinks(w: RowWriter, span: Json, limits: RequestLimits): readonly [number, number] {
  const events = messageList(span['events'], names.events);
  const links = messageList(span['links'], names.links);
  const keptEvents = limits.keep(events.length, limits.limits.maxSpanEvents, 'span_events');
  const keptLinks = limits.keep(links.length, limits.limits.maxSpanLinks, 'span_links');
  writeParallel(w, events, keptEvents, eventColumns, limits);
  writeParallel(w, links, keptLinks, linkColumns, limits);
  return [events.length - keptEvents, links.length - keptLinks];
}

/** The columns of one span after tenant_id (`start`: its start time), with its resource's and scope's columns rendered. */
function writeSpan(w: RowWriter, span: Json, start: Int64, resource: Buffer, scope: Buffer, limits: RequestLimits): void {
  writeNanos(w, start);
  w.text(hexId(span['traceId'], 'traceId'));
  w.text(hexId(span['spanId'], 'spanId'));
  w.text(hexId(span['parentSpanId'], 'parentSpanId'));
  w.text(text(span['traceState']));
  w.u32(clampInt(uint32(span['flags']), 0, 0xffffffff));
  limits.writeText(w, text(span['name']), limits.limits.maxSpanNameBytes, 'span_name_bytes');
  w.u8(clampInt(enumValue(span['kind'], SpanKind), 0, 5));
  writeDuration(w, start, fixed64(span['endTimeUnixNano']));
  const status = messageField(span['status'], names.status) ?? {};
  w.u8(clampInt(enumValue(status['code'], StatusCode), 0, 2));
  w.text(text(status['message']));
  w.bytes(resource);
  w.bytes(scope);
  const droppedAttributes = writeAttributes(w, span['attributes'], names.attributes, 4, limits);
  const [droppedEvents, droppedLinks] = writeEventsAndLinks(w, span, limits);
  // What a limit dropped is added to what the sender dropped.
  w.u32(clampInt(uint32(span['droppedAttributesCount']) + droppedAttributes, 0, 0xffffffff));
  w.u32(clampInt(uint32(span['droppedEventsCount']) + droppedEvents, 0, 0xffffffff));
  w.u32(clampInt(uint32(span['droppedLinksCount']) + droppedLinks, 0, 0xffffffff));
}

/**
 * Converts the spans of a parsed request whose tenants `resolver` decides. A
 * rejected span is written too (a bad field refuses the whole request, as
 * before) and then cut off again.
 */
function spanRows(root: Json, resolver: TenantResolver, limits: RequestLimits): RowBatch {
  const w = new RowWriter();
  let rowCount = 0;
  for (const rs of messageList(root['resourceSpans'], names.resourceSpans)) {
    const resource = resourcePart(rs['resource'], rs['schemaUrl'], names.resource, limits);
    for (const ss of messageList(rs['scopeSpans'], names.scopeSpans)) {
      const scope = scopePart(ss['scope'], names.scope, false, undefined, limits);
      for (const span of messageList(ss['spans'], names.spans)) {
        const tenant = resolver.authorize(resource.tenant ?? tenantOf(span['attributes'], 4) ?? fail({ reason: 'missing_tenant' }));
        const start = fixed64(span['startTimeUnixNano']);
        const kind = enumRejection('span kind', enumValue(span['kind'], SpanKind));
        const rejection = tenant.ok
          ? limits.rejectionBefore(tenant.value, start.low >>> 0, start.high >>> 0, w.pos, resource.tooDeep || scope.tooDeep, kind)
          : tenant.error;
        const rowStart = limits.beginRow(w);
        w.text(tenant.ok ? tenant.value : '');
        writeSpan(w, span, start, resource.bytes, scope.bytes, limits);
        if (limits.endRow(w, rowStart, rejection)) rowCount++;
      }
    }
  }
  return { table: 'spans', rows: w.rows(), rowCount, rejected: limits.tally };
}

/** OTLP/JSON traces under `limits`, at `now()` (ms). */
export function tracesFromJson(limits: ItemLimits, now: () => number, settings?: TenantSettingsView): RowConverter {
  return {
    convert(body, tenants) {
      const request = readOtlpJson(body, (root) => spanRows(root, tenants, new RequestLimits(limits, 'traces', now(), body.length, settings)));
      return request;
    },
  };
}
