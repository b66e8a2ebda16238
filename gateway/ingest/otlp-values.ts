// OTLP values as the text of JSONEachRow fields. Everything here is written
// so that the value is always inside its column's domain: one malformed item
// must never make ClickHouse reject a whole group-committed batch.
import type { AnyValue, Int64Like, KeyValue } from '../wire/otlp-messages.ts';

const twoTo32 = 4_294_967_296;
const maxInt64 = '9223372036854775807';

/** An unsigned 64-bit integer given as two unsigned 32-bit halves, in decimal. */
export function uint64Parts(lo: number, hi: number): string {
  if (hi === 0) return String(lo);
  const n = hi * twoTo32 + lo;
  if (n <= Number.MAX_SAFE_INTEGER) return String(n);
  return ((BigInt(hi) << 32n) | BigInt(lo)).toString();
}

/** A signed 64-bit integer given as two unsigned 32-bit halves, in decimal. */
export function int64Parts(lo: number, hi: number): string {
  if (hi < 0x80000000) return uint64Parts(lo, hi);
  return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo)).toString();
}

/** Unix nanoseconds for a DateTime64(9) column, clamped to its Int64 range. */
export function nanosParts(lo: number, hi: number): string {
  return hi >= 0x80000000 ? maxInt64 : uint64Parts(lo, hi);
}

/** end - start in ns from 32-bit halves; 0 when end precedes start. */
export function durationParts(startLo: number, startHi: number, endLo: number, endHi: number): string {
  const d = (endHi - startHi) * twoTo32 + (endLo - startLo);
  if (d <= 0) return '0';
  if (d < Number.MAX_SAFE_INTEGER) return String(d);
  return (((BigInt(endHi) << 32n) | BigInt(endLo)) - ((BigInt(startHi) << 32n) | BigInt(startLo))).toString();
}

/** A 64-bit unsigned integer (Long or number) as decimal digits; negatives become 0. */
export function uint64Text(v: Int64Like | null | undefined): string {
  if (v === null || v === undefined) return '0';
  if (typeof v === 'number') return v > 0 ? String(Math.trunc(v)) : '0';
  if (!v.unsigned && v.high < 0) return '0';
  return uint64Parts(v.low >>> 0, v.high >>> 0);
}

/** A 64-bit signed integer as decimal digits. */
export function int64Text(v: Int64Like | null | undefined): string {
  if (v === null || v === undefined) return '0';
  if (typeof v === 'number') return String(Math.trunc(v));
  return v.unsigned ? uint64Parts(v.low >>> 0, v.high >>> 0) : int64Parts(v.low >>> 0, v.high >>> 0);
}

/** Unix nanoseconds for a DateTime64(9) column: clamped to its Int64 range. */
export function nanosText(v: Int64Like | null | undefined): string {
  if (typeof v === 'number') return v >= 9.2e18 ? maxInt64 : uint64Text(v);
  if (v === null || v === undefined) return '0';
  return nanosParts(v.low >>> 0, v.high >>> 0);
}

/** Unix nanoseconds as a double: exact below 2^53 (enough for durations and comparisons). */
export function nanosNumber(v: Int64Like | null | undefined): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return v;
  return (v.high >>> 0) * twoTo32 + (v.low >>> 0);
}

/** end - start in ns, exact for any 64-bit values; 0 when end precedes start. */
export function durationText(start: Int64Like | null | undefined, end: Int64Like | null | undefined): string {
  if (start === null || start === undefined || end === null || end === undefined) return '0';
  if (typeof start === 'number' || typeof end === 'number') {
    const d = nanosNumber(end) - nanosNumber(start);
    return d > 0 ? String(d) : '0';
  }
  return durationParts(start.low >>> 0, start.high >>> 0, end.low >>> 0, end.high >>> 0);
}

/** A Float64 field: JSON has no NaN or infinities, ClickHouse reads them quoted. */
export function floatText(v: number | null | undefined): string {
  if (v === null || v === undefined) return '0';
  if (Number.isFinite(v)) return String(v);
  return Number.isNaN(v) ? '"nan"' : v > 0 ? '"inf"' : '"-inf"';
}

/** An integer clamped into [min, max] (enum, UInt8 and UInt32 columns). */
export function clampInt(v: number | null | undefined, min: number, max: number): number {
  if (v === null || v === undefined || !Number.isFinite(v)) return min;
  const i = Math.trunc(v);
  return i < min ? min : i > max ? max : i;
}

/** Bytes as lower-case hex (trace and span ids). */
export function hexText(v: Uint8Array | null | undefined): string {
  if (v === null || v === undefined || v.length === 0) return '';
  return (Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength)).toString('hex');
}

/** An AnyValue as a JSON-compatible value, for nested arrays and maps. */
function anyValueJson(v: AnyValue | null | undefined): unknown {
  if (v === null || v === undefined) return null;
  switch (v.value) {
    case 'stringValue': return v.stringValue ?? '';
    case 'boolValue': return v.boolValue === true;
    case 'intValue': return int64Text(v.intValue);
    case 'doubleValue': return v.doubleValue ?? 0;
    case 'bytesValue': return v.bytesValue === null || v.bytesValue === undefined ? '' : Buffer.from(v.bytesValue).toString('base64');
    case 'arrayValue': return (v.arrayValue?.values ?? []).map(anyValueJson);
    case 'kvlistValue': {
      const out: Record<string, unknown> = {};
      for (const kv of v.kvlistValue?.values ?? []) out[kv.key ?? ''] = anyValueJson(kv.value);
      return out;
    }
    case undefined: return null;
  }
}

/** An AnyValue as the text stored in a String column or attribute map. */
export function anyValueText(v: AnyValue | null | undefined): string {
  if (v === null || v === undefined) return '';
  switch (v.value) {
    case 'stringValue': return v.stringValue ?? '';
    case 'boolValue': return v.boolValue === true ? 'true' : 'false';
    case 'intValue': return int64Text(v.intValue);
    case 'doubleValue': return String(v.doubleValue ?? 0);
    case 'bytesValue': return v.bytesValue === null || v.bytesValue === undefined ? '' : Buffer.from(v.bytesValue).toString('base64');
    case 'arrayValue':
    case 'kvlistValue': return JSON.stringify(anyValueJson(v));
    case undefined: return '';
  }
}

/** Attributes as a JSON object for a Map(String, String) column. */
export function attributesJson(attributes: readonly KeyValue[] | null | undefined): string {
  if (attributes === null || attributes === undefined || attributes.length === 0) return '{}';
  let out = '{';
  for (let i = 0; i < attributes.length; i++) {
    const kv = attributes[i];
    if (kv === undefined) continue;
    if (i > 0) out += ',';
    out += str(kv.key) + ':' + str(anyValueText(kv.value));
  }
  return out + '}';
}

/** The string value of one attribute, or undefined when absent. */
export function attributeText(attributes: readonly KeyValue[] | null | undefined, key: string): string | undefined {
  if (attributes === null || attributes === undefined) return undefined;
  for (const kv of attributes) if (kv.key === key) return anyValueText(kv.value);
  return undefined;
}

/**
 * A JSON string literal. Lone UTF-16 surrogates (possible in OTLP/JSON input)
 * become U+FFFD: JSON.stringify would escape them as \udXXX, which ClickHouse
 * refuses, failing the whole batch.
 */
export const str = (s: string | null | undefined): string => JSON.stringify((s ?? '').toWellFormed());
