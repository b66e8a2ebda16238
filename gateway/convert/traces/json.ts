// OTLP/JSON ExportTraceServiceRequest → RowBinary rows of the spans table
// (schema v1), in the order of rowColumns.spans, through the generated
// message. Every OTLP span field has a column: ids in lower-case hex,
// timestamps in Unix ns, events and links as parallel arrays. It writes
// exactly what traces/protobuf.ts writes for the same request (a property
// test holds the two together).
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import { RowWriter } from '../../rowbinary/row-writer.ts';
import { ExportTraceServiceRequest } from '../../wire/otlp-messages.ts';
import type { ResourceSpans, Span } from '../../wire/otlp-messages.ts';
import { readOtlpJson } from '../common/otlp-json.ts';
import { clampInt, resourceScopeColumns, writeArray, writeAttributes, writeDuration, writeHex, writeNanos } from '../common/otlp-values.ts';
import type { RowConverter } from '../common/row-converter.ts';
import { RejectionTally, tenantOf } from '../common/tenant-resolver.ts';
import type { TenantResolver } from '../common/tenant-resolver.ts';

type SpanEvent = NonNullable<Span['events']>[number];
type SpanLink = NonNullable<Span['links']>[number];
const eventTime = (w: RowWriter, e: SpanEvent): void => { writeNanos(w, e.timeUnixNano); };
const eventName = (w: RowWriter, e: SpanEvent): void => { w.text(e.name ?? ''); };
const eventAttributes = (w: RowWriter, e: SpanEvent): void => { writeAttributes(w, e.attributes); };
const linkTraceId = (w: RowWriter, l: SpanLink): void => { writeHex(w, l.traceId); };
const linkSpanId = (w: RowWriter, l: SpanLink): void => { writeHex(w, l.spanId); };
const linkTraceState = (w: RowWriter, l: SpanLink): void => { w.text(l.traceState ?? ''); };
const linkAttributes = (w: RowWriter, l: SpanLink): void => { writeAttributes(w, l.attributes); };
const eventColumns = [eventTime, eventName, eventAttributes];
const linkColumns = [linkTraceId, linkSpanId, linkTraceState, linkAttributes];

/** event_timestamps … link_attributes. */
function writeEventsAndLinks(w: RowWriter, span: Span): void {
  for (const column of eventColumns) writeArray(w, span.events, column);
  for (const column of linkColumns) writeArray(w, span.links, column);
}

/** Converts the spans of a decoded request whose tenants `resolver` decides. */
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

/** OTLP/JSON traces. */
export const tracesFromJson: RowConverter = {
  convert(body, tenants) {
    const request = readOtlpJson('traces', body, (root) => ExportTraceServiceRequest.fromObject(root));
    return request.ok ? { ok: true, batch: spanRows(request.value.resourceSpans, tenants) } : request;
  },
};
