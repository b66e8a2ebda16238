// ExportTraceServiceRequest protobuf → rows of the spans table, read
// straight from the wire bytes into JSONEachRow bytes, with no message
// objects in between. It writes exactly what ingest/span-rows.ts writes for
// the decoded message (a property test holds the two together); it exists
// because it is several times cheaper (docs/gateway.md).
import { clampInt, durationParts, nanosParts } from '../ingest/otlp-values.ts';
import { RejectionTally } from '../ingest/tenant-resolver.ts';
import type { Resolution, TenantResolver } from '../ingest/tenant-resolver.ts';
import { AnyValueView, Found, Lookup, attributeMap, attributeMapOf, lookupAttributesOf } from './attribute-writer.ts';
import { resourcePart, scopePart } from './resource-scope.ts';
import { RowWriter, fragment } from './row-writer.ts';
import { RangeList, WireReader, WireType, nextDelimited } from './wire-reader.ts';

export interface DirectBatch {
  readonly rows: Buffer;
  readonly rowCount: number;
  readonly rejected: RejectionTally;
}

/** The scalar fields of one span and the ranges of its string/bytes fields (-1 when absent). */
class SpanFields {
  traceId = -1; traceIdEnd = 0; spanId = -1; spanIdEnd = 0; traceState = -1; traceStateEnd = 0; parent = -1; parentEnd = 0;
  name = -1; nameEnd = 0; status = -1; statusEnd = 0;
  flags = 0; kind = 0; startLo = 0; startHi = 0; endLo = 0; endHi = 0;
  droppedAttributes = 0; droppedEvents = 0; droppedLinks = 0;
  readonly attributes = new RangeList();
  readonly events = new RangeList();
  readonly links = new RangeList();

  read(r: WireReader, start: number, end: number): void {
    this.traceId = this.spanId = this.traceState = this.parent = this.name = this.status = -1;
    this.flags = this.kind = this.startLo = this.startHi = this.endLo = this.endHi = 0;
    this.droppedAttributes = this.droppedEvents = this.droppedLinks = 0;
    this.attributes.clear();
    this.events.clear();
    this.links.clear();
    r.pos = start;
    r.end = end;
    while (r.more()) {
      const tag = r.uint32();
      const type = tag & 7;
      switch (tag) {
        case (1 << 3) | WireType.bytes: this.traceIdEnd = r.delimited(); this.traceId = r.pos; r.pos = this.traceIdEnd; break;
        case (2 << 3) | WireType.bytes: this.spanIdEnd = r.delimited(); this.spanId = r.pos; r.pos = this.spanIdEnd; break;
        case (3 << 3) | WireType.bytes: this.traceStateEnd = r.delimited(); this.traceState = r.pos; r.pos = this.traceStateEnd; break;
        case (4 << 3) | WireType.bytes: this.parentEnd = r.delimited(); this.parent = r.pos; r.pos = this.parentEnd; break;
        case (5 << 3) | WireType.bytes: this.nameEnd = r.delimited(); this.name = r.pos; r.pos = this.nameEnd; break;
        case (6 << 3) | WireType.varint: this.kind = r.uint32() | 0; break;
        case (7 << 3) | WireType.fixed64: r.fixed64(); this.startLo = r.lo; this.startHi = r.hi; break;
        case (8 << 3) | WireType.fixed64: r.fixed64(); this.endLo = r.lo; this.endHi = r.hi; break;
        case (9 << 3) | WireType.bytes: { const e = r.delimited(); this.attributes.push(r.pos, e); r.pos = e; break; }
        case (10 << 3) | WireType.varint: this.droppedAttributes = r.uint32(); break;
        case (11 << 3) | WireType.bytes: { const e = r.delimited(); this.events.push(r.pos, e); r.pos = e; break; }
        case (12 << 3) | WireType.varint: this.droppedEvents = r.uint32(); break;
        case (13 << 3) | WireType.bytes: { const e = r.delimited(); this.links.push(r.pos, e); r.pos = e; break; }
        case (14 << 3) | WireType.varint: this.droppedLinks = r.uint32(); break;
        case (15 << 3) | WireType.bytes: this.statusEnd = r.delimited(); this.status = r.pos; r.pos = this.statusEnd; break;
        case (16 << 3) | WireType.fixed32: this.flags = r.fixed32(); break;
        default: r.skip(type);
      }
    }
  }
}

const f = {
  open: fragment('{"tenant_id":'), timestamp: fragment(',"timestamp":'), traceId: fragment(',"trace_id":'), spanId: fragment(',"span_id":'),
  parent: fragment(',"parent_span_id":'), traceState: fragment(',"trace_state":'), flags: fragment(',"flags":'), name: fragment(',"span_name":'),
  kind: fragment(',"span_kind":'), duration: fragment(',"duration_ns":'), statusCode: fragment(',"status_code":'), statusMessage: fragment(',"status_message":'),
  attributes: fragment(',"span_attributes":'), eventTimes: fragment(',"event_timestamps":['), eventNames: fragment('],"event_names":['),
  eventAttributes: fragment('],"event_attributes":['), linkTraceIds: fragment('],"link_trace_ids":['), linkSpanIds: fragment('],"link_span_ids":['),
  linkStates: fragment('],"link_trace_states":['), linkAttributes: fragment('],"link_attributes":['), droppedAttributes: fragment('],"dropped_attributes_count":'),
  droppedEvents: fragment(',"dropped_events_count":'), droppedLinks: fragment(',"dropped_links_count":'), close: fragment('}\n'),
};

/** Writes a string/bytes field as JSON: a range of the input, or "" when absent. */
function text(w: RowWriter, buf: Buffer, start: number, end: number, hex: boolean): void {
  if (start < 0) w.ascii('""');
  else if (hex) w.jsonHex(buf, start, end);
  else w.jsonString(buf, start, end);
}

/** Writes one array element per range of `list`, rendered by `each`. */
function repeated(w: RowWriter, r: WireReader, list: RangeList, each: (item: WireReader, s: number, e: number) => void): void {
  for (let i = 0; i < list.count; i++) {
    if (i > 0) w.byte(0x2c);
    each(r, list.starts[i] ?? 0, list.ends[i] ?? 0);
  }
}

/** The last occurrence of a length-delimited field inside [start, end), as [s, e] in out (-1 when absent). */
function lastOf(r: WireReader, start: number, end: number, field: number, out: Int32Array): void {
  out[0] = -1;
  const it = new WireReader(r.buf, start, end);
  for (let e = nextDelimited(it, field); e >= 0; e = nextDelimited(it, field)) {
    out[0] = it.pos;
    out[1] = e;
    it.pos = e;
  }
}

class SpanWriter {
  readonly w = new RowWriter(1 << 20);
  readonly value = new AnyValueView();
  readonly fields = new SpanFields();
  readonly found = new Found();
  readonly range = new Int32Array(2);

  /** Status (message = 2, code = 3): writes status_code and status_message. */
  status(r: WireReader, s: SpanFields): void {
    let code = 0;
    let message = -1;
    let messageEnd = 0;
    if (s.status >= 0) {
      const it = new WireReader(r.buf, s.status, s.statusEnd);
      while (it.more()) {
        const tag = it.uint32();
        if (tag === ((3 << 3) | WireType.varint)) code = it.uint32() | 0;
        else if (tag === ((2 << 3) | WireType.bytes)) { messageEnd = it.delimited(); message = it.pos; it.pos = messageEnd; }
        else it.skip(tag & 7);
      }
    }
    this.w.bytes(f.statusCode);
    this.w.ascii(String(clampInt(code, 0, 2)));
    this.w.bytes(f.statusMessage);
    text(this.w, r.buf, message, messageEnd, false);
  }

  events(r: WireReader, list: RangeList): void {
    const { w, value, range } = this;
    const buf = r.buf;
    w.bytes(f.eventTimes);
    repeated(w, r, list, (_, s, e) => {
      let lo = 0;
      let hi = 0;
      const it = new WireReader(r.buf, s, e);
      while (it.more()) {
        const tag = it.uint32();
        if (tag === ((1 << 3) | WireType.fixed64)) { it.fixed64(); lo = it.lo; hi = it.hi; } else it.skip(tag & 7);
      }
      w.ascii(nanosParts(lo, hi));
    });
    w.bytes(f.eventNames);
    repeated(w, r, list, (it, s, e) => { lastOf(it, s, e, 2, range); text(w, buf, range[0] ?? -1, range[1] ?? 0, false); });
    w.bytes(f.eventAttributes);
    repeated(w, r, list, (it, s, e) => { attributeMap(it, s, e, 3, 0, this.found, w, value); });
  }

  links(r: WireReader, list: RangeList): void {
    const { w, value, range } = this;
    const buf = r.buf;
    w.bytes(f.linkTraceIds);
    repeated(w, r, list, (it, s, e) => { lastOf(it, s, e, 1, range); text(w, buf, range[0] ?? -1, range[1] ?? 0, true); });
    w.bytes(f.linkSpanIds);
    repeated(w, r, list, (it, s, e) => { lastOf(it, s, e, 2, range); text(w, buf, range[0] ?? -1, range[1] ?? 0, true); });
    w.bytes(f.linkStates);
    repeated(w, r, list, (it, s, e) => { lastOf(it, s, e, 3, range); text(w, buf, range[0] ?? -1, range[1] ?? 0, false); });
    w.bytes(f.linkAttributes);
    repeated(w, r, list, (it, s, e) => { attributeMap(it, s, e, 4, 0, this.found, w, value); });
  }

  /** Writes one span row for `tenant`. */
  row(r: WireReader, tenant: string, resource: Buffer, scope: Buffer): void {
    const { w, fields: s } = this;
    const buf = r.buf;
    w.bytes(f.open); w.jsonText(tenant);
    w.bytes(f.timestamp); w.ascii(nanosParts(s.startLo, s.startHi));
    w.bytes(f.traceId); text(w, buf, s.traceId, s.traceIdEnd, true);
    w.bytes(f.spanId); text(w, buf, s.spanId, s.spanIdEnd, true);
    w.bytes(f.parent); text(w, buf, s.parent, s.parentEnd, true);
    w.bytes(f.traceState); text(w, buf, s.traceState, s.traceStateEnd, false);
    w.bytes(f.flags); w.ascii(String(s.flags));
    w.bytes(f.name); text(w, buf, s.name, s.nameEnd, false);
    w.bytes(f.kind); w.ascii(String(clampInt(s.kind, 0, 5)));
    w.bytes(f.duration); w.ascii(durationParts(s.startLo, s.startHi, s.endLo, s.endHi));
    this.status(r, s);
    w.bytes(resource);
    w.bytes(scope);
    w.bytes(f.attributes);
    attributeMapOf(r, s.attributes, 0, this.found, w, this.value);
    this.events(r, s.events);
    this.links(r, s.links);
    w.bytes(f.droppedAttributes); w.ascii(String(s.droppedAttributes));
    w.bytes(f.droppedEvents); w.ascii(String(s.droppedEvents));
    w.bytes(f.droppedLinks); w.ascii(String(s.droppedLinks));
    w.bytes(f.close);
  }
}

/** Converts an encoded ExportTraceServiceRequest; throws WireError on malformed input. */
export function spanRowsDirect(body: Buffer, resolver: TenantResolver): DirectBatch {
  const rejected = new RejectionTally();
  const out = new SpanWriter();
  const r = new WireReader(body);
  let rowCount = 0;
  const top = new WireReader(body);
  for (let rsEnd = nextDelimited(top, 1); rsEnd >= 0; rsEnd = nextDelimited(top, 1)) {
    const rsStart = top.pos;
    const resource = resourcePart(r, rsStart, rsEnd, out.value);
    const scopes = new WireReader(body, rsStart, rsEnd);
    for (let ssEnd = nextDelimited(scopes, 2); ssEnd >= 0; ssEnd = nextDelimited(scopes, 2)) {
      const ssStart = scopes.pos;
      const scope = scopePart(r, ssStart, ssEnd, false, out.value);
      const spans = new WireReader(body, ssStart, ssEnd);
      for (let spanEnd = nextDelimited(spans, 2); spanEnd >= 0; spanEnd = nextDelimited(spans, 2)) {
        const spanStart = spans.pos;
        out.fields.read(r, spanStart, spanEnd);
        let found: Resolution | undefined = resource.tenant;
        if (found === undefined && out.fields.attributes.count > 0) {
          const item = new Found();
          lookupAttributesOf(r, out.fields.attributes, Lookup.tenant, item, out.value);
          found = item.tenant(r, out.value);
        }
        const tenant = resolver.authorize(found ?? { ok: false, reason: 'missing_tenant' });
        if (tenant.ok) {
          out.row(r, tenant.tenant, resource.bytes, scope);
          rowCount++;
        } else {
          rejected.add(tenant);
        }
        spans.pos = spanEnd;
      }
      scopes.pos = ssEnd;
    }
    top.pos = rsEnd;
  }
  return { rows: out.w.result(), rowCount, rejected };
}
