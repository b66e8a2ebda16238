// OTLP values as RowBinary fields (and the text of String columns).
// Everything here is written so that the value is always inside its column's
// domain: one malformed item must never make ClickHouse reject a whole
// group-committed batch.
import type { RowWriter } from '../../rowbinary/row-writer.ts';
import type { AnyValue, Int64, Int64Like, KeyValue } from '../../wire/otlp-messages.ts';

const twoTo32 = 4_294_967_296;
const twoTo64 = twoTo32 * twoTo32;

/** An unsigned 64-bit integer given as two unsigned 32-bit halves, in decimal. */
function uint64Parts(lo: number, hi: number): string {
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

/** Unix nanoseconds (32-bit halves) as a DateTime64(9), clamped to its Int64 range. */
export function writeNanosParts(w: RowWriter, lo: number, hi: number): void {
  if (hi >= 0x80000000) w.u64Parts(0xffffffff, 0x7fffffff);
  else w.u64Parts(lo, hi);
}

/** end - start in ns from 32-bit halves as a UInt64; 0 when end precedes start. */
export function writeDurationParts(w: RowWriter, startLo: number, startHi: number, endLo: number, endHi: number): void {
  let lo = endLo - startLo;
  let hi = endHi - startHi;
  if (lo < 0) {
    lo += twoTo32;
    hi -= 1;
  }
  if (hi < 0) w.u64Parts(0, 0);
  else w.u64Parts(lo, hi);
}

/** The halves of a non-negative number of ns, clamped below 2^64 (protobufjs without Long). */
function numberParts(n: number): readonly [number, number] {
  if (!(n > 0)) return [0, 0];
  if (n >= twoTo64) return [0xffffffff, 0xffffffff];
  const i = Math.trunc(n);
  return [i % twoTo32, Math.floor(i / twoTo32)];
}

/** A 64-bit unsigned integer (Long or number) as a UInt64; negatives become 0. */
export function writeUint64(w: RowWriter, v: Int64Like | null | undefined): void {
  if (v === null || v === undefined) w.u64Parts(0, 0);
  else if (typeof v === 'number') w.u64Parts(...numberParts(v));
  else if (!v.unsigned && v.high < 0) w.u64Parts(0, 0);
  else w.u64Parts(v.low, v.high);
}

/** A 64-bit signed integer as decimal digits. */
export function int64Text(v: Int64Like | null | undefined): string {
  if (v === null || v === undefined) return '0';
  if (typeof v === 'number') return String(Math.trunc(v));
  return v.unsigned ? uint64Parts(v.low >>> 0, v.high >>> 0) : int64Parts(v.low >>> 0, v.high >>> 0);
}

/** A 64-bit signed integer as the nearest double (a gauge or sum value given as int). */
export function int64Number(v: Int64Like | null | undefined): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return Math.trunc(v);
  // One rounding of the exact sum: the same double as parsing the decimal digits.
  return (v.unsigned ? v.high >>> 0 : v.high | 0) * twoTo32 + (v.low >>> 0);
}

/** Unix nanoseconds as a DateTime64(9), clamped to its Int64 range. */
export function writeNanos(w: RowWriter, v: Int64Like | null | undefined): void {
  if (v === null || v === undefined) w.u64Parts(0, 0);
  else if (typeof v === 'number') writeNanosParts(w, ...numberParts(v >= 9.2e18 ? twoTo64 : v));
  else writeNanosParts(w, v.low >>> 0, v.high >>> 0);
}

/** Unix milliseconds (the time a request was received) as unsigned Unix nanoseconds in 32-bit halves. */
export function nanosOfMillis(ms: number): Int64 {
  const ns = BigInt(Math.max(0, Math.trunc(ms))) * 1_000_000n;
  return { low: Number(ns & 0xffffffffn), high: Number(ns >> 32n), unsigned: true };
}

/** Unix nanoseconds as a double: exact below 2^53 (enough for durations and comparisons). */
function nanosNumber(v: Int64Like | null | undefined): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return v;
  return (v.high >>> 0) * twoTo32 + (v.low >>> 0);
}

/** end - start in ns as a UInt64, exact for any 64-bit values; 0 when end precedes start. */
export function writeDuration(w: RowWriter, start: Int64Like | null | undefined, end: Int64Like | null | undefined): void {
  if (start === null || start === undefined || end === null || end === undefined) w.u64Parts(0, 0);
  else if (typeof start === 'number' || typeof end === 'number') w.u64Parts(...numberParts(nanosNumber(end) - nanosNumber(start)));
  else writeDurationParts(w, start.low >>> 0, start.high >>> 0, end.low >>> 0, end.high >>> 0);
}

/** A Float64 field; absent is 0 (NaN and infinities are native in RowBinary). */
export function writeFloat(w: RowWriter, v: number | null | undefined): void {
  w.f64(v ?? 0);
}

/** A Nullable(Float64) field: NULL when absent (a histogram point without min or max). */
export function writeOptionalFloat(w: RowWriter, v: number | null | undefined): void {
  if (v === null || v === undefined) {
    w.u8(1);
  } else {
    w.u8(0);
    w.f64(v);
  }
}

/** An integer clamped into [min, max] (enum, UInt8 and UInt32 columns). */
export function clampInt(v: number | null | undefined, min: number, max: number): number {
  if (v === null || v === undefined || !Number.isFinite(v)) return min;
  const i = Math.trunc(v);
  return i < min ? min : i > max ? max : i;
}

/** Bytes as a String of lower-case hex (trace and span ids); absent is ''. */
export function writeHex(w: RowWriter, v: Uint8Array | null | undefined): void {
  if (v === null || v === undefined) w.empty();
  else w.hex(Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength), 0, v.length);
}

/** An AnyValue as a JSON-compatible value, for nested arrays and maps. */
function anyValueJson(v: AnyValue | null | undefined): unknown {
  if (v === null || v === undefined) return null;
  switch (v.value) {
    case 'stringValue':
      return v.stringValue ?? '';
    case 'boolValue':
      return v.boolValue === true;
    case 'intValue':
      return int64Text(v.intValue);
    case 'doubleValue':
      return v.doubleValue ?? 0;
    case 'bytesValue':
      return v.bytesValue === null || v.bytesValue === undefined ? '' : Buffer.from(v.bytesValue).toString('base64');
    case 'arrayValue':
      return (v.arrayValue?.values ?? []).map(anyValueJson);
    case 'kvlistValue': {
      const out: Record<string, unknown> = {};
      for (const kv of v.kvlistValue?.values ?? []) out[kv.key ?? ''] = anyValueJson(kv.value);
      return out;
    }
    case undefined:
      return null;
  }
}

/** An AnyValue as the text stored in a String column or attribute map. */
export function anyValueText(v: AnyValue | null | undefined): string {
  if (v === null || v === undefined) return '';
  switch (v.value) {
    case 'stringValue':
      return v.stringValue ?? '';
    case 'boolValue':
      return v.boolValue === true ? 'true' : 'false';
    case 'intValue':
      return int64Text(v.intValue);
    case 'doubleValue':
      return String(v.doubleValue ?? 0);
    case 'bytesValue':
      return v.bytesValue === null || v.bytesValue === undefined ? '' : Buffer.from(v.bytesValue).toString('base64');
    case 'arrayValue':
    case 'kvlistValue':
      return JSON.stringify(anyValueJson(v));
    case undefined:
      return '';
  }
}

/** Attributes as a Map(LowCardinality(String), String): every pair in order, values as anyValueText. */
export function writeAttributes(w: RowWriter, attributes: readonly KeyValue[] | null | undefined): void {
  if (attributes === null || attributes === undefined) {
    w.varint(0);
    return;
  }
  w.varint(attributes.length);
  for (const kv of attributes) {
    w.text(kv.key ?? '');
    w.text(anyValueText(kv.value));
  }
}
