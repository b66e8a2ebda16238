// OTLP requests the generated encoder refuses to build (values nested 60
// deep, invalid UTF-8, megabyte attributes), written field by field in the
// protobuf wire format, and their OTLP/JSON twins as text.

/** A varint. */
function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Buffer.from(out);
}

/** A length-delimited field. */
export function field(num: number, payload: Buffer): Buffer {
  return Buffer.concat([varint((num << 3) | 2), varint(payload.length), payload]);
}

function fixed64(num: number, v: bigint): Buffer {
  const b = Buffer.alloc(9);
  b[0] = (num << 3) | 1;
  b.writeBigUInt64LE(v, 1);
  return b;
}

/** An AnyValue holding a string (or raw bytes claiming to be one). */
export const stringValue = (s: string | Buffer): Buffer => field(1, typeof s === 'string' ? Buffer.from(s) : s);

/** A KeyValue. */
export const keyValue = (key: string, value: Buffer): Buffer => Buffer.concat([field(1, Buffer.from(key)), field(2, value)]);

/** An AnyValue of `levels` key-value lists nested in each other around `leaf`. */
export function nestedKvlist(levels: number, leaf: Buffer): Buffer {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = field(6, field(1, keyValue('k', v)));
  return v;
}

/** Unix ns of now plus `offsetMs`. */
export const nanos = (offsetMs = 0): bigint => BigInt(Date.now() + offsetMs) * 1_000_000n;

/** A Span with a name, a start time and attributes (KeyValues). */
export function span(name: string, attributes: readonly Buffer[] = [], start = nanos()): Buffer {
  return Buffer.concat([field(5, Buffer.from(name)), fixed64(7, start), fixed64(8, start + 1000n), ...attributes.map((a) => field(9, a))]);
}

/** A LogRecord with a time and a body (an AnyValue). */
export function logRecord(body: Buffer, time = nanos()): Buffer {
  return Buffer.concat([fixed64(1, time), field(5, body)]);
}

/** One resource (its attributes) with one scope of items (field 2 of the scope): an Export{Trace,Logs}ServiceRequest body. */
export function request(resourceAttributes: readonly Buffer[], items: readonly Buffer[]): Buffer {
  const resource = Buffer.concat(resourceAttributes.map((a) => field(1, a)));
  const scope = Buffer.concat(items.map((s) => field(2, s)));
  return field(1, Buffer.concat([field(1, resource), field(2, scope)]));
}

/** An OTLP/JSON AnyValue of `levels` nested key-value lists, as text (JSON.stringify recurses too deep for 100k levels). */
export function nestedKvlistJson(levels: number): string {
  return '{"kvlistValue":{"values":[{"key":"k","value":'.repeat(levels) + '{"stringValue":"leaf"}' + '}]}}'.repeat(levels);
}

/** An OTLP/JSON traces request of tenant `tenant` whose first span carries `value` (JSON text) as attribute "deep"; the second span is plain. */
export function tracesJsonWithValue(tenant: string, value: string): string {
  const now = nanos().toString();
  const resource = `{"attributes":[{"key":"tenant.id","value":{"stringValue":${JSON.stringify(tenant)}}}]}`;
  const deep = `{"name":"deep","startTimeUnixNano":"${now}","attributes":[{"key":"deep","value":${value}}]}`;
  const plain = `{"name":"plain","startTimeUnixNano":"${now}"}`;
  return `{"resourceSpans":[{"resource":${resource},"scopeSpans":[{"spans":[${deep},${plain}]}]}]}`;
}
