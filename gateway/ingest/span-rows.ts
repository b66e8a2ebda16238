// Spans → rows of the spans table (schema v1). Every OTLP span field has a
// column: ids in lower-case hex, timestamps in Unix ns, events and links as
// parallel arrays.
import type { ResourceSpans, Span } from '../wire/otlp-messages.ts';
import { attributeText, attributesJson, clampInt, durationText, hexText, nanosText, str } from './otlp-values.ts';
import type { RowBatch } from './row-batch.ts';
import { RejectionTally, tenantOf } from './tenant-resolver.ts';
import type { TenantResolver } from './tenant-resolver.ts';

function eventsAndLinks(span: Span): string {
  const events = span.events ?? [];
  const links = span.links ?? [];
  return `,"event_timestamps":[${events.map((e) => nanosText(e.timeUnixNano)).join(',')}]` +
    `,"event_names":[${events.map((e) => str(e.name)).join(',')}]` +
    `,"event_attributes":[${events.map((e) => attributesJson(e.attributes)).join(',')}]` +
    `,"link_trace_ids":[${links.map((l) => str(hexText(l.traceId))).join(',')}]` +
    `,"link_span_ids":[${links.map((l) => str(hexText(l.spanId))).join(',')}]` +
    `,"link_trace_states":[${links.map((l) => str(l.traceState)).join(',')}]` +
    `,"link_attributes":[${links.map((l) => attributesJson(l.attributes)).join(',')}]`;
}

/** Converts the spans of a request whose tenants `resolver` decides. */
export function spanRows(resourceSpans: readonly ResourceSpans[], resolver: TenantResolver): RowBatch {
  const rejected = new RejectionTally();
  let rows = '';
  let rowCount = 0;
  for (const rs of resourceSpans) {
    const resourceAttributes = rs.resource?.attributes;
    const resourceTenant = tenantOf(resourceAttributes);
    const resourcePart = `,"service_name":${str(attributeText(resourceAttributes, 'service.name'))}` +
      `,"resource_schema_url":${str(rs.schemaUrl)},"resource_attributes":${attributesJson(resourceAttributes)}`;
    for (const ss of rs.scopeSpans ?? []) {
      const scopePart = `,"scope_name":${str(ss.scope?.name)},"scope_version":${str(ss.scope?.version)}` +
        `,"scope_attributes":${attributesJson(ss.scope?.attributes)}`;
      for (const span of ss.spans ?? []) {
        const tenant = resolver.resolve(resourceTenant, span.attributes);
        if (!tenant.ok) {
          rejected.add(tenant);
          continue;
        }
        rows += `{"tenant_id":${str(tenant.tenant)},"timestamp":${nanosText(span.startTimeUnixNano)}` +
          `,"trace_id":${str(hexText(span.traceId))},"span_id":${str(hexText(span.spanId))}` +
          `,"parent_span_id":${str(hexText(span.parentSpanId))},"trace_state":${str(span.traceState)}` +
          `,"flags":${clampInt(span.flags, 0, 0xffffffff)},"span_name":${str(span.name)},"span_kind":${clampInt(span.kind, 0, 5)}` +
          `,"duration_ns":${durationText(span.startTimeUnixNano, span.endTimeUnixNano)}` +
          `,"status_code":${clampInt(span.status?.code, 0, 2)},"status_message":${str(span.status?.message)}` +
          resourcePart + scopePart + `,"span_attributes":${attributesJson(span.attributes)}` + eventsAndLinks(span) +
          `,"dropped_attributes_count":${clampInt(span.droppedAttributesCount, 0, 0xffffffff)}` +
          `,"dropped_events_count":${clampInt(span.droppedEventsCount, 0, 0xffffffff)}` +
          `,"dropped_links_count":${clampInt(span.droppedLinksCount, 0, 0xffffffff)}}\n`;
        rowCount++;
      }
    }
  }
  return { table: 'spans', rows, rowCount, rejected };
}
