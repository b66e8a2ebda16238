// The OTLP/JSON readers take every value as protobufjs's fromObject took it
// before (so a body gives the rows it gave): 64-bit integers as Long reads
// them, enums by number or name, ids as even-length hex.
import { expect } from 'chai';
import fc from 'fast-check';
import Long from 'long';
import { SpanKind } from '../../../../../gateway/convert/common/otlp-enums.ts';
import { enumValue, fixed64, fixed64Element, hexId, int64, readOtlpJson } from '../../../../../gateway/convert/common/otlp-json.ts';
import { int64Text } from '../../../../../gateway/convert/common/otlp-values.ts';

const halves = (v: { low: number; high: number }): [number, number] => [v.low >>> 0, v.high >>> 0];
const integerText = fc.oneof(
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }).map(String),
  fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }).map(String),
  fc.stringMatching(/^-?\d{1,25}$/),
  fc.constantFrom('0', '00', '-0', '007', '99999999999999999999', '18446744073709551616', '9007199254740993', '1e3', ' 5', '+5', 'NaN'),
);
const integerValue = fc.oneof(integerText, fc.integer(), fc.maxSafeInteger(), fc.double({ noNaN: true }), fc.double());

describe('otlp-json readers', () => {
  it('read fixed64 fields and repeated elements as Long.fromValue does, but refuse negative values (a time before 1970)', () => {
    fc.assert(
      fc.property(integerValue, (v) => {
        if ((typeof v === 'number' || typeof v === 'string') && Number(v) < 0) {
          expect(() => fixed64Element(v)).to.throw('is negative where OTLP has an unsigned 64-bit integer: a time before 1970');
          expect(() => fixed64(v)).to.throw('is negative');
          return;
        }
        expect(halves(fixed64Element(v)), String(v)).to.deep.equal(halves(Long.fromValue(v, true)));
        // fromObject left a field that reads as 0 at its default.
        const expected = Number(v) === 0 ? [0, 0] : halves(Long.fromValue(v, true));
        expect(halves(fixed64(v)), String(v)).to.deep.equal(expected);
      }),
      { numRuns: 2000 },
    );
    expect(halves(fixed64(null))).to.deep.equal([0, 0]);
    expect(halves(fixed64(''))).to.deep.equal([0, 0]);
    expect(() => fixed64('-')).to.throw('empty string');
    expect(() => fixed64Element(null)).to.throw();
    expect(() => fixed64('-1')).to.throw('"-1" is negative where OTLP has an unsigned 64-bit integer: a time before 1970 or a negative count');
    expect(halves(fixed64('-0'))).to.deep.equal([0, 0]);
  });

  it('read int64 oneof fields (intValue, asInt) as Long.fromValue does', () => {
    fc.assert(
      fc.property(integerValue, (v) => {
        expect(int64Text(int64(v)), String(v)).to.equal(Long.fromValue(v, false).toString());
      }),
      { numRuns: 2000 },
    );
    expect(() => int64('')).to.throw('empty string');
    expect(() => int64('1-2')).to.throw('interior hyphen');
  });

  it('read enums by number (int32 only) or by name', () => {
    expect(enumValue(2, SpanKind)).to.equal(2);
    expect(enumValue(99, SpanKind)).to.equal(99);
    expect(enumValue(1.5, SpanKind)).to.equal(0);
    expect(enumValue(2 ** 31, SpanKind)).to.equal(0);
    expect(enumValue('SPAN_KIND_CONSUMER', SpanKind)).to.equal(5);
    expect(enumValue('2', SpanKind)).to.equal(0);
    expect(enumValue('toString', SpanKind)).to.equal(0);
    expect(enumValue(true, SpanKind)).to.equal(0);
  });

  it('take ids as even-length hex, lower-cased, and refuse anything else given as an id', () => {
    expect(hexId('0A0b', 'traceId')).to.equal('0a0b');
    expect(hexId('', 'traceId')).to.equal('');
    expect(hexId(undefined, 'traceId')).to.equal('');
    expect(hexId(12, 'traceId')).to.equal('');
    expect(hexId([], 'traceId')).to.equal('');
    expect(() => hexId('abc', 'spanId')).to.throw('spanId is not a hex string: "abc"');
    expect(() => hexId('zz', 'spanId')).to.throw('spanId is not a hex string: "zz"');
    expect(() => hexId([1, 2], 'spanId')).to.throw('spanId is not a hex string');
  });

  it('report invalid JSON, a root that is not an object and invalid fields as a reason', () => {
    expect(readOtlpJson(Buffer.from('{'), () => 1)).to.deep.include({ ok: false });
    expect(readOtlpJson(Buffer.from('[]'), () => 1)).to.deep.equal({ ok: false, error: 'invalid JSON: the request must be a JSON object' });
    expect(readOtlpJson(Buffer.from('{}'), (root) => hexId(root['x'] ?? 'q', 'traceId'))).to.deep.equal({
      ok: false,
      error: 'invalid OTLP/JSON: traceId is not a hex string: "q"',
    });
    expect(readOtlpJson(Buffer.from('{"a":1}'), (root) => root['a'])).to.deep.equal({ ok: true, value: 1 });
    expect(() =>
      readOtlpJson(Buffer.from('{}'), () => {
        throw new TypeError('a bug');
      }),
    ).to.throw('a bug');
  });

  it('refuses a body over 1 MiB with more than one object or array per 8 bytes before parsing it, counting none inside strings', () => {
    const dense = Buffer.from(`{"resourceSpans":[${Array(400_000).fill('{}').join(',')}]}`);
    expect(readOtlpJson(dense, () => 'parsed')).to.deep.equal({
      ok: false,
      error: `invalid OTLP/JSON: 400002 objects and arrays in ${dense.length} bytes, more than one per 8 bytes`,
    });
    const braces = Buffer.from(JSON.stringify({ resourceSpans: [], note: '{['.repeat(600_000) + '\\"{' }));
    expect(readOtlpJson(braces, () => 'parsed')).to.deep.equal({ ok: true, value: 'parsed' });
    const sparse = Buffer.from(`{"resourceSpans":[${Array(200_000).fill('{"a":1}').join(',')}]}`);
    expect(readOtlpJson(sparse, () => 'parsed')).to.deep.equal({ ok: true, value: 'parsed' });
  });
});
