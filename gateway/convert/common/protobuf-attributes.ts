// AnyValue and KeyValue lists, read from protobuf ranges and written as the
// same RowBinary the JSON converters write through json-attributes.ts, plus the
// lookups the converters need: tenant.id, service.name, log.record.uid.
import { fail, ok } from '../../../src/result.ts';
import { isValidTenantId } from '../../../src/tenant/tenant-id.ts';
import { WireError, WireReader, WireType, nextDelimited } from '../../protobuf/wire-reader.ts';
import type { RangeList } from '../../protobuf/wire-reader.ts';
import type { RowWriter } from '../../rowbinary/row-writer.ts';
import { AnyValueMessage } from '../../wire/otlp-messages.ts';
import type { AnyValue } from '../../wire/otlp-messages.ts';
import type { RequestLimits, TruncateReason } from './item-limits.ts';
import type { Resolution } from './tenant-resolver.ts';
import { anyValueText, int64Parts } from './otlp-values.ts';

const kinds = { none: 0, string: 1, bool: 2, int: 3, double: 4, array: 5, kvlist: 6, bytes: 7 } as const;

/** The parsed oneof of an AnyValue: its kind and, for ranges, [start, end); lo/hi or num for scalars. */
export class AnyValueView {
  kind = 0;
  start = 0;
  end = 0;
  lo = 0;
  hi = 0;
  num = 0;

  /** Parses the AnyValue at r.buf[start, end); the last oneof field wins. */
  read(r: WireReader, start: number, end: number): this {
    this.kind = kinds.none;
    const saved = r.pos;
    const savedEnd = r.end;
    r.pos = start;
    r.end = end;
    while (r.more()) {
      const tag = r.tag();
      const field = tag >>> 3;
      const type = tag & 7;
      if (field === kinds.string || field === kinds.bytes || field === kinds.array || field === kinds.kvlist) {
        if (type !== WireType.bytes) {
          r.skip(type);
          continue;
        }
        const e = r.delimited();
        this.kind = field;
        this.start = r.pos;
        this.end = e;
        r.pos = e;
      } else if (field === kinds.bool || field === kinds.int) {
        if (type !== WireType.varint) {
          r.skip(type);
          continue;
        }
        r.varint64();
        this.kind = field;
        this.lo = r.lo;
        this.hi = r.hi;
      } else if (field === kinds.double && type === WireType.fixed64) {
        this.kind = field;
        this.num = r.double();
      } else {
        r.skip(type);
      }
    }
    r.pos = saved;
    r.end = savedEnd;
    return this;
  }

  /**
   * Writes the value's text (anyValueText) as a String of at most `max` bytes
   * (truncations tallied as `reason`). A nested value deeper than the limits
   * allow is written as '' and flagged in `limits.tooDeep`.
   */
  writeText(w: RowWriter, buf: Buffer, limits: RequestLimits, max: number, reason: TruncateReason): void {
    switch (this.kind) {
      case kinds.string:
        limits.writeSlice(w, buf, this.start, this.end, max, reason);
        return;
      case kinds.bool:
        limits.writeText(w, this.lo !== 0 || this.hi !== 0 ? 'true' : 'false', max, reason);
        return;
      case kinds.int:
        limits.writeText(w, int64Parts(this.lo, this.hi), max, reason);
        return;
      case kinds.double:
        limits.writeText(w, String(this.num), max, reason);
        return;
      case kinds.bytes:
        limits.writeBase64(w, buf, this.start, this.end, max, reason);
        return;
      case kinds.array:
      case kinds.kvlist:
        // Checked before decoding: the generated decoder recurses as deep as the input goes.
        if (nestsDeeper(buf, this.kind, this.start, this.end, limits.limits.maxValueDepth)) {
          limits.tooDeep = true;
          w.empty();
          return;
        }
        // Nested values are rare: render them through the generated decoder, exactly as the JSON converters do.
        limits.writeText(w, anyValueText(nestedValue(this.#wrapped(buf))), max, reason);
        return;
      default:
        w.empty();
    }
  }

  /** The AnyValue bytes re-framed as a message holding only this nested field. */
  #wrapped(buf: Buffer): Uint8Array {
    const payload = buf.subarray(this.start, this.end);
    const header = [(this.kind << 3) | WireType.bytes];
    for (let n = payload.length; ; n >>>= 7) {
      if (n < 0x80) {
        header.push(n);
        break;
      }
      header.push((n & 0x7f) | 0x80);
    }
    return Buffer.concat([Buffer.from(header), payload]);
  }

  /** The tenant this value names (string or integer), per the tenant rules. */
  tenant(buf: Buffer): Resolution {
    let id: string;
    if (this.kind === kinds.string) id = buf.toString('utf8', this.start, this.end);
    else if (this.kind === kinds.int) id = int64Parts(this.lo, this.hi);
    else return fail({ reason: 'invalid_tenant_type' });
    return isValidTenantId(id) ? ok(id) : fail({ reason: 'invalid_tenant_id' });
  }
}

/**
 * Whether the ArrayValue or KeyValueList at buf[start, end) (`kind`), one
 * level itself, nests more than `levels` levels of arrays and lists; walks
 * no deeper than that.
 */
function nestsDeeper(buf: Buffer, kind: number, start: number, end: number, levels: number): boolean {
  if (levels === 0) return true;
  const it = new WireReader(buf, start, end);
  const element = new WireReader(buf);
  const value = new AnyValueView();
  for (let e = nextDelimited(it, 1); e >= 0; e = nextDelimited(it, 1)) {
    let vs = it.pos;
    let ve = e;
    if (kind === kinds.kvlist) {
      // A KeyValue: its value is the last occurrence of field 2.
      element.pos = it.pos;
      element.end = e;
      vs = -1;
      for (let f = nextDelimited(element, 2); f >= 0; f = nextDelimited(element, 2)) {
        vs = element.pos;
        ve = f;
        element.pos = f;
      }
    }
    it.pos = e;
    if (vs < 0) continue;
    value.read(element, vs, ve);
    if ((value.kind === kinds.array || value.kind === kinds.kvlist) && nestsDeeper(buf, value.kind, value.start, value.end, levels - 1)) return true;
  }
  return false;
}

/** A nested AnyValue through the generated decoder, whose errors on malformed bytes become WireErrors like the reader's. */
function nestedValue(bytes: Uint8Array): AnyValue {
  try {
    return AnyValueMessage.decode(bytes);
  } catch (error) {
    throw new WireError(`invalid nested value: ${(error as Error).message}`);
  }
}

const keyTenant = Buffer.from('tenant.id');
const keyService = Buffer.from('service.name');
const keyLogUid = Buffer.from('log.record.uid');

/** Which well-known attributes to look for while walking a KeyValue list. */
export const Lookup = { tenant: 1, service: 2, logUid: 4 } as const;

/** Positions of the well-known attributes found in a list: [start, end) of their AnyValue, -1 when absent. */
export class Found {
  tenantSeen = false;
  tenantStart = -1;
  tenantEnd = -1;
  serviceSeen = false;
  serviceStart = -1;
  serviceEnd = -1;
  logUidSeen = false;
  logUidStart = -1;
  logUidEnd = -1;

  /** The tenant.id resolution, undefined when the key was absent (a key without value is of no valid type). */
  tenant(r: WireReader, value: AnyValueView): Resolution | undefined {
    if (!this.tenantSeen) return undefined;
    if (this.tenantStart < 0) return fail({ reason: 'invalid_tenant_type' });
    return value.read(r, this.tenantStart, this.tenantEnd).tenant(r.buf);
  }
}

/** Compared in JavaScript: the keys are short, and Buffer.compare's call into C++ costs more than the loop. */
function keyIs(buf: Buffer, start: number, end: number, key: Buffer): boolean {
  if (end - start !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (buf[start + i] !== key[i]) return false;
  return true;
}

/**
 * Walks the KeyValue at [start, end): records a well-known key's value range
 * in `found` (first occurrence wins, as in the JSON converters) and, when `w` is
 * given, writes the key and the value's text as a map entry, each within its limit.
 */
export function keyValue(
  r: WireReader,
  start: number,
  end: number,
  lookup: number,
  found: Found,
  w: RowWriter | undefined,
  value: AnyValueView,
  limits: RequestLimits,
): void {
  const saved = r.pos;
  const savedEnd = r.end;
  r.pos = start;
  r.end = end;
  let ks = -1;
  let ke = -1;
  let vs = -1;
  let ve = -1;
  while (r.more()) {
    const tag = r.tag();
    const type = tag & 7;
    if (type === WireType.bytes && (tag >>> 3 === 1 || tag >>> 3 === 2)) {
      const e = r.delimited();
      if (tag >>> 3 === 1) {
        ks = r.pos;
        ke = e;
      } else {
        vs = r.pos;
        ve = e;
      }
      r.pos = e;
    } else {
      r.skip(type);
    }
  }
  r.pos = saved;
  r.end = savedEnd;
  if (ks < 0) {
    ks = 0;
    ke = 0;
  }
  const buf = r.buf;
  if (lookup !== 0 && ke > ks) {
    if ((lookup & Lookup.tenant) !== 0 && !found.tenantSeen && keyIs(buf, ks, ke, keyTenant)) {
      found.tenantSeen = true;
      found.tenantStart = vs;
      found.tenantEnd = ve;
    } else if ((lookup & Lookup.service) !== 0 && !found.serviceSeen && keyIs(buf, ks, ke, keyService)) {
      found.serviceSeen = true;
      found.serviceStart = vs;
      found.serviceEnd = ve;
    } else if ((lookup & Lookup.logUid) !== 0 && !found.logUidSeen && keyIs(buf, ks, ke, keyLogUid)) {
      found.logUidSeen = true;
      found.logUidStart = vs;
      found.logUidEnd = ve;
    }
  }
  if (w === undefined) return;
  limits.writeSlice(w, buf, ks, ke, limits.limits.maxAttributeKeyBytes, 'attribute_key_bytes');
  if (vs < 0) w.empty();
  else value.read(r, vs, ve).writeText(w, buf, limits, limits.limits.maxAttributeValueBytes, 'attribute_value_bytes');
}

/**
 * Writes the KeyValues of field `field` in message [start, end) as a Map of
 * at most maxAttributes entries, recording well-known keys in `found` among
 * all of them; returns how many were dropped.
 */
export function attributeMap(
  r: WireReader,
  start: number,
  end: number,
  field: number,
  lookup: number,
  found: Found,
  w: RowWriter,
  value: AnyValueView,
  limits: RequestLimits,
): number {
  const it = new WireReader(r.buf, start, end);
  const at = w.beginCount();
  const max = limits.limits.maxAttributes;
  let count = 0;
  let dropped = 0;
  for (let e = nextDelimited(it, field); e >= 0; e = nextDelimited(it, field)) {
    if (count < max) {
      keyValue(it, it.pos, e, lookup, found, w, value, limits);
      count++;
    } else {
      if (lookup !== 0) keyValue(it, it.pos, e, lookup, found, undefined, value, limits);
      dropped++;
    }
    it.pos = e;
  }
  w.endCount(at, count);
  if (dropped > 0) limits.tally.truncate('attribute_count', dropped);
  return dropped;
}

/** Writes the KeyValues at the given ranges as a Map of at most maxAttributes entries; returns how many were dropped. */
export function attributeMapOf(r: WireReader, list: RangeList, lookup: number, found: Found, w: RowWriter, value: AnyValueView, limits: RequestLimits): number {
  const kept = limits.keep(list.count, limits.limits.maxAttributes, 'attribute_count');
  w.varint(kept);
  for (let i = 0; i < kept; i++) keyValue(r, list.starts[i] ?? 0, list.ends[i] ?? 0, lookup, found, w, value, limits);
  if (lookup !== 0) for (let i = kept; i < list.count; i++) keyValue(r, list.starts[i] ?? 0, list.ends[i] ?? 0, lookup, found, undefined, value, limits);
  return list.count - kept;
}

/** Looks up well-known keys among the KeyValues at the given ranges, without writing. */
export function lookupAttributesOf(r: WireReader, list: RangeList, lookup: number, found: Found, value: AnyValueView, limits: RequestLimits): void {
  for (let i = 0; i < list.count; i++) keyValue(r, list.starts[i] ?? 0, list.ends[i] ?? 0, lookup, found, undefined, value, limits);
}
