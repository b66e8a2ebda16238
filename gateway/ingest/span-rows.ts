// Spans → RowBinary rows of the spans table (schema v1), in the order of
// rowColumns.spans. Every OTLP span field has a column: ids in lower-case
// hex, timestamps in Unix ns, events and links as parallel arrays.
import { RowWriter } from '../direct/row-writer.ts';
import type { ResourceSpans, Span } from '../wire/otlp-messages.ts';
import { clampInt, resourceScopeColumns, writeAttributes, writeDuration, writeHex, writeNanos } from './otlp-values.ts';
import type { RowBatch } from './row-batch.ts';
import { RejectionTally, tenantOf } from './tenant-resolver.ts';
import type { TenantResolver } from './tenant-resolver.ts';

/** event_timestamps … link_attributes. */
function writeEventsAndLinks(w: RowWriter, span: Span): void {
  const events = span.events ?? [];
  const links = span.links ?? [];
  w.varint(events.length);
  for (const e of events) writeNanos(w, e.timeUnixNano);
  w.varint(events.length);
  for (const e of events) w.text(e.name ?? '');
  w.varint(events.length);
  for (const e of events) writeAttributes(w, e.attributes);
  w.varint(links.length);
  for (const l of links) writeHex(w, l.traceId);
  w.varint(links.length);
  for (const l of links) writeHex(w, l.spanId);
  w.varint(links.length);
  for (const l of links) w.text(l.traceState ?? '');
  w.varint(links.length);
  for (const l of links) writeAttributes(w, l.attributes);
}

/** Converts the spans of a request whose tenants `resolver` decides. */
export function spanRows(resourceSpans: readonly ResourceSpans[], resolver: TenantResolver): RowBatch {
  const rejected = new RejectionTally();
  const w = new RowWriter();
  let rowCount = 0;
  for (const rs of resourceSpans) {
    const resourceAttributes = rs.resource?.attributes;
    const resourceTenant = tenantOf(resourceAttributes);
    for (const ss of rs.scopeSpans ?? []) {
      const sharedPart = resourceScopeColumns(resourceAttributes, rs.schemaUrl, ss.scope);
      for (const span of ss.spans ?? []) {
        const tenant = resolver.resolve(resourceTenant, span.attributes);
        if (!tenant.ok) {
          rejected.add(tenant);
          continue;
        }
        w.text(tenant.tenant);
        writeNanos(w, span.startTimeUnixNano);
        writeHex(w, span.traceId);
        writeHex(w, span.spanId);
        writeHex(w, span.parentSpanId);
        w.text(span.traceState ?? '');
        w.u32(clampInt(span.flags, 0, 0xffffffff));
        w.text(span.name ?? '');
        w.u8(clampInt(span.kind, 0, 5));
        writeDuration(w, span.startTimeUnixNano, span.endTimeUnixNano);
        w.u8(clampInt(span.status?.code, 0, 2));
        w.text(span.status?.message ?? '');
        w.bytes(sharedPart);
        writeAttributes(w, span.attributes);
        writeEventsAndLinks(w, span);
        w.u32(clampInt(span.droppedAttributesCount, 0, 0xffffffff));
        w.u32(clampInt(span.droppedEventsCount, 0, 0xffffffff));
        w.u32(clampInt(span.droppedLinksCount, 0, 0xffffffff));
        rowCount++;
      }
    }
  }
  return { table: 'spans', rows: w.rows(), rowCount, rejected };
}
