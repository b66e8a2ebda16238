// OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding)
// read straight from the parsed JSON, without building messages: lowerCamelCase
// names, trace and span ids in hex, 64-bit integers as numbers or decimal
// strings, enums as integers (or their names), unknown fields ignored.
// Every reader takes a value the way protobufjs's generated fromObject took
// it before (ADR 2), so a body gives the same rows and the same rejections
// as it did: strings through String(), numbers through Number(), 64-bit
// integers through Long where the value is not plain digits, an array where
// a message is expected read as an empty message. A body that fromObject
// refused is refused here too: the readers throw InvalidJson deep inside the
// walk, and readOtlpJson, the one place that reports invalid JSON, turns it
// into a value.
import $protobuf from 'protobufjs/minimal.js';
import { fail, ok } from '../../../src/result.ts';
import type { Result } from '../../../src/result.ts';
import type { Int64, Int64Like } from '../../wire/otlp-messages.ts';

/** A request body that is not OTLP/JSON; thrown by the readers, caught only by readOtlpJson. */
export class InvalidJson extends Error {}

/** A JSON object, or an array where a message is expected (fromObject read it as an empty message). */
export type Json = Readonly<Record<string, unknown>>;

const long = $protobuf.util.Long as unknown as { fromValue(value: unknown, unsigned: boolean): Int64 } | null;
if (long === null) throw new Error('protobufjs found no Long implementation ("long" package)');

/**
 * Messages nested deeper are refused, as fromObject refused them beyond its
 * util.recursionLimit of 100. Only AnyValue nests without bound, and
 * TENANTRY_MAX_VALUE_DEPTH (at most 32 levels, 3 messages each) rejects deeper
 * values per item before they are read; this is what remains, a bound on the
 * walk's recursion.
 */
const depthLimit = 128;
const twoTo32 = 4_294_967_296;
const noMessages: readonly Json[] = [];
const zero: Int64 = { low: 0, high: 0, unsigned: true };
const digits = /^\d{1,20}$/;
const shortInteger = /^-?\d{1,15}$/;
const hex = /^[0-9a-fA-F]*$/;

/**
 * A parsed object or array costs far more memory than its text: `{},` is 3
 * bytes and 40–60 on the heap, so 16 MiB of them parse into ~1 GB. OTLP/JSON
 * has one object or array per ~35 bytes (the benchmark's requests) and
 * rarely one per 13 (nested key-value lists); a body over `denseBodyBytes`
 * with more than one per `minBytesPerContainer` is refused before parsing,
 * which keeps a request's parsed size within ~10× its bytes.
 */
const minBytesPerContainer = 8;
const denseBodyBytes = 1024 * 1024;

/** Counts the objects and arrays of JSON text: `{` and `[` outside strings. */
function containersOf(body: Buffer): number {
  let count = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 0x5c) escaped = true;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      count++;
    }
  }
  return count;
}

/** Parses an OTLP/JSON body and converts its root object with `convert`, or says why it is not OTLP/JSON. */
export function readOtlpJson<T>(body: Buffer, convert: (root: Json) => T): Result<T, string> {
  if (body.length > denseBodyBytes) {
    const containers = containersOf(body);
    if (containers * minBytesPerContainer > body.length) {
      return fail(`invalid OTLP/JSON: ${containers} objects and arrays in ${body.length} bytes, more than one per ${minBytesPerContainer} bytes`);
    }
  }
  let root: unknown;
  try {
    root = JSON.parse(body.toString('utf8'));
  } catch (error) {
    return fail(`invalid OTLP/JSON: ${(error as Error).message}`);
  }
  if (!isMessage(root) || Array.isArray(root)) return fail('invalid JSON: the request must be a JSON object');
  try {
    return ok(convert(root));
  } catch (error) {
    if (error instanceof InvalidJson) return fail(`invalid OTLP/JSON: ${error.message}`);
    throw error;
  }
}

/** What fromObject took for a message: any object, arrays included. */
export const isMessage = (v: unknown): v is Json => typeof v === 'object' && v !== null;

/** Refuses a message nested deeper than protobufjs allowed (only AnyValue nests without bound). */
export function checkDepth(depth: number): void {
  if (depth > depthLimit) throw new InvalidJson('max depth exceeded');
}

/** A singular message field (`name` is its protobuf name, for the error): undefined when absent. */
export function messageField(v: unknown, name: string): Json | undefined {
  if (v === null || v === undefined) return undefined;
  if (!isMessage(v)) throw new InvalidJson(`${name}: object expected`);
  return v;
}

/** A repeated message field: empty when absent (or falsy), else an array of objects. */
export function messageList(v: unknown, name: string): readonly Json[] {
  if (!v) return noMessages;
  if (!Array.isArray(v)) throw new InvalidJson(`${name}: array expected`);
  for (const item of v) if (!isMessage(item)) throw new InvalidJson(`${name}: object expected`);
  return v as Json[];
}

/** A repeated scalar field: empty when absent (or falsy), else an array. */
export function scalarList(v: unknown, name: string): readonly unknown[] {
  if (!v) return noMessages;
  if (!Array.isArray(v)) throw new InvalidJson(`${name}: array expected`);
  return v;
}

/** A string field; absent is ''. Any other value goes through String(), as in fromObject ({} is '[object Object]'). */
export function text(v: unknown): string {
  if (typeof v === 'string') return v;
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- fromObject's String(), kept for the same rows
  return v === null || v === undefined ? '' : String(v);
}

/** A uint32 or fixed32 field; absent is 0. */
export const uint32 = (v: unknown): number => (v === null || v === undefined ? 0 : (v as number) >>> 0);

/** An int32 field; absent is 0. */
export const int32 = (v: unknown): number => (v === null || v === undefined ? 0 : (v as number) | 0);

/** A double field; absent is 0. */
export const double = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/** An optional double field (min, max); absent is undefined. */
export const optionalDouble = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));

/** An enum field: an int32, or the name of a value of `values` (the generated enum); anything else is 0. */
export function enumValue(v: unknown, values: object): number {
  if (typeof v === 'number') return (v | 0) === v ? v : 0;
  if (typeof v !== 'string' || !Object.hasOwn(values, v)) return 0; // a generated enum's own keys are its names
  const n = (values as Record<string, unknown>)[v];
  return typeof n === 'number' ? n : 0;
}

/** Long.fromValue, whose refusals (an empty string, an interior '-', null) are invalid input. */
function longOf(v: unknown, unsigned: boolean): Int64 {
  try {
    return (long as NonNullable<typeof long>).fromValue(v, unsigned);
  } catch (error) {
    throw new InvalidJson((error as Error).message);
  }
}

/** Up to 20 decimal digits modulo 2^64 (as Long reads them), each step exact in doubles. */
function digitsParts(s: string): Int64 {
  if (s.length <= 15) {
    const n = +s;
    const lo = n % twoTo32;
    return { low: lo, high: (n - lo) / twoTo32, unsigned: true };
  }
  const a = +s.slice(0, s.length - 9); // < 2^37
  const b = +s.slice(s.length - 9); // < 10^9
  const p = Math.floor(a / 65536) * 1e9; // < 2^51
  const t = (a % 65536) * 1e9 + b; // < 2^47; the value is p * 2^16 + t
  let lo = (p % 65536) * 65536 + (t % twoTo32);
  const carry = Math.floor(lo / twoTo32);
  lo -= carry * twoTo32;
  return { low: lo, high: (Math.floor(p / 65536) + Math.floor(t / twoTo32) + carry) % twoTo32, unsigned: true };
}

/**
 * A negative value in an unsigned 64-bit field (times, counts) is refused:
 * Long would read "-1" as 2^64 − 1, a time after 2262, and -1 as 0, a time
 * the logs path replaces with the time received.
 */
function refuseNegative(v: unknown): void {
  if ((typeof v === 'number' || typeof v === 'string') && Number(v) < 0) {
    throw new InvalidJson(`${JSON.stringify(v)} is negative where OTLP has an unsigned 64-bit integer: a time before 1970 or a negative count`);
  }
}

/** One element of a repeated fixed64 field (bucket counts): every element is converted, null is invalid, a negative value is invalid. */
export function fixed64Element(v: unknown): Int64 {
  if (typeof v === 'string' && digits.test(v)) return digitsParts(v);
  refuseNegative(v);
  if (typeof v === 'number' && Number.isSafeInteger(v)) {
    if (v === 0) return zero;
    const lo = v % twoTo32;
    return { low: lo, high: (v - lo) / twoTo32, unsigned: true };
  }
  return longOf(v, true);
}

/** A fixed64 field (timestamps, counts): absent, zero or what fromObject took for zero is 0; a negative value is invalid. */
export function fixed64(v: unknown): Int64 {
  if (typeof v === 'string' && digits.test(v)) return digitsParts(v); // the usual form; all zeros is 0 anyway
  if (v === null || v === undefined) return zero;
  if (typeof v === 'object' ? !((v as Int64).low || (v as Int64).high) : Number(v) === 0) return zero;
  return fixed64Element(v);
}

/** An int64 field inside a oneof (AnyValue.intValue, asInt): a number when exact, else a Long. */
export function int64(v: unknown): Int64Like {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v + 0; // + 0: -0 is 0, as Long reads it
  if (typeof v === 'string' && shortInteger.test(v)) return +v + 0;
  return longOf(v, false);
}

/** Whether fromObject set a bytes field from `v` (a string is base64, an array-like its bytes). */
export function bytesSet(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  return typeof v === 'string' || ((v as { length?: unknown }).length as number) >= 0;
}

/** A bytes field as fromObject read it: base64 text decoded by protobufjs, or an array of byte values. */
export function bytesOf(v: unknown, name: string): Buffer {
  if (typeof v === 'string') {
    const bytes = $protobuf.util.newBuffer($protobuf.util.base64.length(v));
    try {
      $protobuf.util.base64.decode(v, bytes, 0);
    } catch (error) {
      throw new InvalidJson((error as Error).message);
    }
    return Buffer.from(bytes);
  }
  // An array-like object other than an array could claim any length: not bytes.
  if (!Array.isArray(v)) throw new InvalidJson(`${name}: bytes expected`);
  return Buffer.from(v as number[]);
}

/**
 * A trace or span id in hex, lower-cased, checked as the previous path did:
 * an even number of hex digits (any length, as protobuf allows any bytes).
 * Absent or a value fromObject ignored (a number, an empty array) is ''.
 */
export function hexId(v: unknown, field: string): string {
  if (typeof v === 'string') {
    if (v.length % 2 !== 0 || !hex.test(v)) throw new InvalidJson(`${field} is not a hex string: ${JSON.stringify(v.slice(0, 40))}`);
    return v.toLowerCase();
  }
  if (v === null || v === undefined) return '';
  const length = (v as { length?: unknown }).length;
  if (!length || !((length as number) >= 0)) return '';
  throw new InvalidJson(`${field} is not a hex string`);
}
