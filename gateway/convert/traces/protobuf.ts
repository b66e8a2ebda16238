// Protobuf ExportTraceServiceRequest → rows of the spans table, read
// straight from the wire bytes into RowBinary, with no message objects in
// between (docs/adr/0002-byte-level-converters.md). It writes exactly what
// traces/json.ts writes for the same request in OTLP/JSON (a property test
// holds the two together).
import { fail } from '../../../src/result.ts';
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import { RangeList, WireReader, WireType, nextDelimited, readWire } from '../../protobuf/wire-reader.ts';
import { ScratchWriter } from '../../rowbinary/row-writer.ts';
import type { RowWriter } from '../../rowbinary/row-writer.ts';
import { clampInt, writeDurationParts, writeNanosParts } from '../common/otlp-values.ts';
import { AnyValueView, Found, Lookup, attributeMap, attributeMapOf, lookupAttributesOf } from '../common/protobuf-attributes.ts';
import { enumRejection } from '../common/field-checks.ts';
import { RequestLimits } from '../common/item-limits.ts';
import type { ItemLimits } from '../common/item-limits.ts';
import type { TenantSettingsView } from '../../../src/tenant/settings/tenant-settings.ts';
import { forEachScope } from '../common/protobuf-resource-scope.ts';
import type { RowConverter } from '../common/row-converter.ts';
import type { Resolution, TenantResolver } from '../common/tenant-resolver.ts';

/** The scalar fields of one span and the ranges of its string/bytes fields (-1 when absent). */
class SpanFields {
  traceId = -1;
  traceIdEnd = 0;
  spanId = -1;
  spanIdEnd = 0;
  traceState = -1;
  traceStateEnd = 0;
  parent = -1;
  parentEnd = 0;
  name = -1;
  nameEnd = 0;
  status = -1;
  statusEnd = 0;
  flags = 0;
  kind = 0;
  startLo = 0;
  startHi = 0;
  endLo = 0;
  endHi = 0;
  droppedAttributes = 0;
  droppedEvents = 0;
  droppedLinks = 0;
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
      const tag = r.tag();
      const type = tag & 7;
      switch (tag) {
        case (1 << 3) | WireType.bytes:
          this.traceIdEnd = r.delimited();
          this.traceId = r.pos;
          r.pos = this.traceIdEnd;
          break;
        case (2 << 3) | WireType.bytes:
          this.spanIdEnd = r.delimited();
          this.spanId = r.pos;
          r.pos = this.spanIdEnd;
          break;
        case (3 << 3) | WireType.bytes:
          this.traceStateEnd = r.delimited();
          this.traceState = r.pos;
          r.pos = this.traceStateEnd;
          break;
        case (4 << 3) | WireType.bytes:
          this.parentEnd = r.delimited();
          this.parent = r.pos;
          r.pos = this.parentEnd;
          break;
        case (5 << 3) | WireType.bytes:
          this.nameEnd = r.delimited();
          this.name = r.pos;
          r.pos = this.nameEnd;
          break;
        case (6 << 3) | WireType.varint:
          this.kind = r.uint32() | 0;
          break;
        case (7 << 3) | WireType.fixed64:
          r.fixed64();
          this.startLo = r.lo;
          this.startHi = r.hi;
          break;
        case (8 << 3) | WireType.fixed64:
          r.fixed64();
          this.endLo = r.lo;
          this.endHi = r.hi;
          break;
        case (9 << 3) | WireType.bytes: {
          const e = r.delimited();
          this.attributes.push(r.pos, e);
          r.pos = e;
          break;
        }
        case (10 << 3) | WireType.varint:
          this.droppedAttributes = r.uint32();
          break;
        case (11 << 3) | WireType.bytes: {
          const e = r.delimited();
          this.events.push(r.pos, e);
          r.pos = e;
          break;
        }
        case (12 << 3) | WireType.varint:
          this.droppedEvents = r.uint32();
          break;
        case (13 << 3) | WireType.bytes: {
          const e = r.delimited();
          this.links.push(r.pos, e);
          r.pos = e;
          break;
        }
        case (14 << 3) | WireType.varint:
          this.droppedLinks = r.uint32();
          break;
        case (15 << 3) | WireType.bytes:
          this.statusEnd = r.delimited();
          this.status = r.pos;
          r.pos = this.statusEnd;
          break;
        case (16 << 3) | WireType.fixed32:
          this.flags = r.fixed32();
          break;
        default:
          r.skip(type);
      }
    }
  }
}

/** Writes an array: the count, then one element per range of the first `count` of `list`, rendered by `each`. */
function repeated(w: RowWriter, r: WireReader, list: RangeList, count: number, each: (item: WireReader, s: number, e: number) => void): void {
  w.varint(count);
  for (let i = 0; i < count; i++) each(r, list.starts[i] ?? 0, list.ends[i] ?? 0);
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

const scratch = new ScratchWriter(1 << 20);

class SpanWriter {
  readonly w = scratch.take();
  readonly value = new AnyValueView();
  readonly fields = new SpanFields();
  readonly found = new Found();
  readonly range = new Int32Array(2);
  readonly limits: RequestLimits;

  constructor(limits: RequestLimits) {
    this.limits = limits;
  }

  /** Status (message = 2, code = 3): writes status_code and status_message. */
  status(r: WireReader, s: SpanFields): void {
    let code = 0;
    let message = -1;
    let messageEnd = 0;
    if (s.status >= 0) {
      const it = new WireReader(r.buf, s.status, s.statusEnd);
      while (it.more()) {
        const tag = it.tag();
        if (tag === ((3 << 3) | WireType.varint)) code = it.uint32() | 0;
        else if (tag === ((2 << 3) | WireType.bytes)) {
          messageEnd = it.delimited();
          message = it.pos;
          it.pos = messageEnd;
        } else it.skip(tag & 7);
      }
    }
    this.w.u8(clampInt(code, 0, 2));
    this.w.field(r.buf, message, messageEnd);
  }

  /** The first maxSpanEvents events as parallel arrays; returns how many were dropped. */
  events(r: WireReader, list: RangeList): number {
    const { w, value, range, limits } = this;
    const buf = r.buf;
    const count = limits.keep(list.count, limits.limits.maxSpanEvents, 'span_events');
    repeated(w, r, list, count, (_, s, e) => {
      let lo = 0;
      let hi = 0;
      const it = new WireReader(r.buf, s, e);
      while (it.more()) {
        const tag = it.tag();
        if (tag === ((1 << 3) | WireType.fixed64)) {
          it.fixed64();
          lo = it.lo;
          hi = it.hi;
        } else it.skip(tag & 7);
      }
      writeNanosParts(w, lo, hi);
    });
    repeated(w, r, list, count, (it, s, e) => {
      lastOf(it, s, e, 2, range);
      w.field(buf, range[0] ?? -1, range[1] ?? 0);
    });
    repeated(w, r, list, count, (it, s, e) => {
      attributeMap(it, s, e, 3, 0, this.found, w, value, limits);
    });
    return list.count - count;
  }

  /** The first maxSpanLinks links as parallel arrays; returns how many were dropped. */
  links(r: WireReader, list: RangeList): number {
    const { w, value, range, limits } = this;
    const buf = r.buf;
    const count = limits.keep(list.count, limits.limits.maxSpanLinks, 'span_links');
    repeated(w, r, list, count, (it, s, e) => {
      lastOf(it, s, e, 1, range);
      w.hexField(buf, range[0] ?? -1, range[1] ?? 0);
    });
    repeated(w, r, list, count, (it, s, e) => {
      lastOf(it, s, e, 2, range);
      w.hexField(buf, range[0] ?? -1, range[1] ?? 0);
    });
    repeated(w, r, list, count, (it, s, e) => {
      lastOf(it, s, e, 3, range);
      w.field(buf, range[0] ?? -1, range[1] ?? 0);
    });
    repeated(w, r, list, count, (it, s, e) => {
      attributeMap(it, s, e, 4, 0, this.found, w, value, limits);
    });
    return list.count - count;
  }

  /** Writes one span row for `tenant`, in rowColumns.spans order. */
  row(r: WireReader, tenant: string, resource: Buffer, scope: Buffer): void {
    const { w, fields: s, limits } = this;
    const buf = r.buf;
    w.text(tenant);
    writeNanosParts(w, s.startLo, s.startHi);
    w.hexField(buf, s.traceId, s.traceIdEnd);
    w.hexField(buf, s.spanId, s.spanIdEnd);
    w.hexField(buf, s.parent, s.parentEnd);
    w.field(buf, s.traceState, s.traceStateEnd);
    w.u32(s.flags);
    if (s.name < 0) w.empty();
    else limits.writeSlice(w, buf, s.name, s.nameEnd, limits.limits.maxSpanNameBytes, 'span_name_bytes');
    w.u8(clampInt(s.kind, 0, 5));
    writeDurationParts(w, s.startLo, s.startHi, s.endLo, s.endHi);
    this.status(r, s);
    w.bytes(resource);
    w.bytes(scope);
    const droppedAttributes = attributeMapOf(r, s.attributes, 0, this.found, w, this.value, limits);
    const droppedEvents = this.events(r, s.events);
    const droppedLinks = this.links(r, s.links);
    // What a limit dropped is added to what the sender dropped.
    w.u32(Math.min(0xffffffff, s.droppedAttributes + droppedAttributes));
    w.u32(Math.min(0xffffffff, s.droppedEvents + droppedEvents));
    w.u32(Math.min(0xffffffff, s.droppedLinks + droppedLinks));
  }
}

/** Converts an encoded ExportTraceServiceRequest; throws WireError on malformed input. */
function spanRows(body: Buffer, resolver: TenantResolver, limits: RequestLimits): RowBatch {
  const out = new SpanWriter(limits);
  const r = new WireReader(body);
  let rowCount = 0;
  forEachScope(r, out.value, limits, false, (resource, scope, ssStart, ssEnd) => {
    const spans = new WireReader(body, ssStart, ssEnd);
    for (let spanEnd = nextDelimited(spans, 2); spanEnd >= 0; spanEnd = nextDelimited(spans, 2)) {
      const spanStart = spans.pos;
      spans.pos = spanEnd;
      const s = out.fields;
      s.read(r, spanStart, spanEnd);
      let found: Resolution | undefined = resource.tenant;
      if (found === undefined && s.attributes.count > 0) {
        const item = new Found();
        lookupAttributesOf(r, s.attributes, Lookup.tenant, item, out.value, limits);
        found = item.tenant(r, out.value);
      }
      const tenant = resolver.authorize(found ?? fail({ reason: 'missing_tenant' }));
      if (!tenant.ok) {
        limits.reject(tenant.error);
        continue;
      }
      const rejection = limits.rejectionBefore(
        tenant.value,
        s.startLo,
        s.startHi,
        out.w.pos,
        resource.tooDeep || scope.tooDeep,
        enumRejection('span kind', s.kind),
      );
      if (rejection !== undefined) {
        limits.reject(rejection);
        continue;
      }
      const rowStart = limits.beginRow(out.w);
      out.row(r, tenant.value, resource.bytes, scope.bytes);
      if (limits.endRow(out.w, rowStart, undefined)) rowCount++;
    }
  });
  return { table: 'spans', rows: out.w.copy(), rowCount, rejected: limits.tally };
}

/** Protobuf traces (OTLP/HTTP and gRPC) under `limits`, at `now()` (ms). */
export function tracesFromProtobuf(limits: ItemLimits, now: () => number, settings?: TenantSettingsView): RowConverter {
  return {
    convert(body, tenants) {
      const batch = readWire(() => spanRows(body, tenants, new RequestLimits(limits, 'traces', now(), body.length, settings)));
      return batch;
    },
  };
}
