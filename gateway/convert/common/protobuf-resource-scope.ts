// The per-resource and per-scope parts of a row (shared by spans, logs and metrics),
// rendered once and copied into every row below them.
import { WireReader, WireType, nextDelimited } from '../../protobuf/wire-reader.ts';
import { RowWriter } from '../../rowbinary/row-writer.ts';
import type { RequestLimits } from './item-limits.ts';
import { Found, Lookup, attributeMap } from './protobuf-attributes.ts';
import type { AnyValueView } from './protobuf-attributes.ts';
import type { ResourcePart, ScopePart } from './resource-scope-part.ts';

/** Finds the last occurrence of length-delimited fields in [start, end): fills starts/ends by field number. */
function lastFields(r: WireReader, start: number, end: number, starts: Int32Array, ends: Int32Array): void {
  starts.fill(-1);
  const it = new WireReader(r.buf, start, end);
  while (it.more()) {
    const tag = it.tag();
    const field = tag >>> 3;
    if ((tag & 7) === WireType.bytes && field < starts.length) {
      const e = it.delimited();
      starts[field] = it.pos;
      ends[field] = e;
      it.pos = e;
    } else {
      it.skip(tag & 7);
    }
  }
}

/** Renders the resource part of a Resource{Spans,Logs,Metrics} message at [start, end) (resource = 1, schema_url = 3). */
export function resourcePart(r: WireReader, start: number, end: number, value: AnyValueView, limits: RequestLimits): ResourcePart {
  const starts = new Int32Array(4);
  const ends = new Int32Array(4);
  lastFields(r, start, end, starts, ends);
  const [resourceStart, resourceEnd, schemaStart, schemaEnd] = [starts[1] ?? -1, ends[1] ?? -1, starts[3] ?? -1, ends[3] ?? -1];
  const found = new Found();
  const attributes = new RowWriter(1024);
  limits.tooDeep = false;
  if (resourceStart >= 0) attributeMap(r, resourceStart, resourceEnd, 1, Lookup.tenant | Lookup.service, found, attributes, value, limits);
  else attributes.varint(0);
  const w = new RowWriter(2048);
  if (found.serviceSeen && found.serviceStart >= 0) {
    value.read(r, found.serviceStart, found.serviceEnd).writeText(w, r.buf, limits, limits.limits.maxAttributeValueBytes, 'attribute_value_bytes');
  } else {
    w.empty();
  }
  w.field(r.buf, schemaStart, schemaEnd);
  w.bytes(attributes.result());
  limits.tally.keep();
  return { bytes: Buffer.from(w.result()), tenant: found.tenant(r, value), tooDeep: limits.tooDeep };
}

/**
 * Renders the scope part of a Scope{Spans,Logs,Metrics} message at [start, end)
 * (scope = 1, schema_url = 3): the columns scope_name, scope_version, for
 * logs scope_schema_url, and scope_attributes.
 */
export function scopePart(r: WireReader, start: number, end: number, withSchemaUrl: boolean, value: AnyValueView, limits: RequestLimits): ScopePart {
  const [starts, ends, scopeStarts, scopeEnds] = [new Int32Array(4), new Int32Array(4), new Int32Array(4), new Int32Array(4)];
  lastFields(r, start, end, starts, ends);
  const [scopeStart, scopeEnd, schemaStart, schemaEnd] = [starts[1] ?? -1, ends[1] ?? -1, starts[3] ?? -1, ends[3] ?? -1];
  const w = new RowWriter(1024);
  if (scopeStart >= 0) lastFields(r, scopeStart, scopeEnd, scopeStarts, scopeEnds);
  else scopeStarts.fill(-1);
  w.field(r.buf, scopeStarts[1] ?? -1, scopeEnds[1] ?? -1);
  w.field(r.buf, scopeStarts[2] ?? -1, scopeEnds[2] ?? -1);
  if (withSchemaUrl) w.field(r.buf, schemaStart, schemaEnd);
  limits.tooDeep = false;
  if (scopeStart >= 0) attributeMap(r, scopeStart, scopeEnd, 3, 0, new Found(), w, value, limits);
  else w.varint(0);
  limits.tally.keep();
  return { bytes: Buffer.from(w.result()), tooDeep: limits.tooDeep };
}

/**
 * Walks the resource entries (field 1) of an Export*ServiceRequest and the
 * scope entries (field 2) of each, rendering each resource and scope part
 * once; `visit` gets each scope's [start, end) to read its items from.
 */
export function forEachScope(
  r: WireReader,
  value: AnyValueView,
  limits: RequestLimits,
  scopeSchemaUrl: boolean,
  visit: (resource: ResourcePart, scope: ScopePart, start: number, end: number) => void,
): void {
  const top = new WireReader(r.buf);
  for (let resourceEnd = nextDelimited(top, 1); resourceEnd >= 0; resourceEnd = nextDelimited(top, 1)) {
    const resourceStart = top.pos;
    const resource = resourcePart(r, resourceStart, resourceEnd, value, limits);
    const scopes = new WireReader(r.buf, resourceStart, resourceEnd);
    for (let scopeEnd = nextDelimited(scopes, 2); scopeEnd >= 0; scopeEnd = nextDelimited(scopes, 2)) {
      const scopeStart = scopes.pos;
      visit(resource, scopePart(r, scopeStart, scopeEnd, scopeSchemaUrl, value, limits), scopeStart, scopeEnd);
      scopes.pos = scopeEnd;
    }
    top.pos = resourceEnd;
  }
}
