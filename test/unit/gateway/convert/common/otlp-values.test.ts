import { expect } from 'chai';
import fc from 'fast-check';
import Long from 'long';
import { RowWriter } from '../../../../../gateway/rowbinary/row-writer.ts';
import {
  anyValueText,
  clampInt,
  int64Number,
  int64Text,
  writeAttributes,
  writeDuration,
  writeFloat,
  writeHex,
  writeNanos,
  writeOptionalFloat,
  writeUint64,
} from '../../../../../gateway/convert/common/otlp-values.ts';
import { AnyValueMessage } from '../../../../../gateway/wire/otlp-messages.ts';
import { RowBinaryReader, parseType } from '../../support/row-binary-reader.ts';
import type { RowValue } from '../../support/row-binary-reader.ts';

/** The bytes `write` produces. */
function written(write: (w: RowWriter) => void): Buffer {
  const w = new RowWriter(16);
  write(w);
  return Buffer.from(w.result());
}

/** The single value of `type` in `bytes`, which must hold nothing else. */
function read(type: string, bytes: Buffer): RowValue {
  const r = new RowBinaryReader(bytes);
  const v = r.value(parseType(type));
  expect(r.pos, 'trailing bytes').to.equal(bytes.length);
  return v;
}

const u64 = (write: (w: RowWriter) => void): RowValue => read('UInt64', written(write));
const maxInt64 = (1n << 63n) - 1n;

describe('otlp-values', () => {
  it('writes 64-bit unsigned integers exactly, negatives as 0', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
        (n) =>
          u64((w) => {
            writeUint64(w, Long.fromString(n.toString(), true));
          }) === n,
      ),
    );
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: maxInt64 }),
        (n) =>
          u64((w) => {
            writeUint64(w, Long.fromString(n.toString(), false));
          }) === n,
      ),
    );
    expect(
      u64((w) => {
        writeUint64(w, Long.fromNumber(-5));
      }),
    ).to.equal(0n);
    expect(
      u64((w) => {
        writeUint64(w, undefined);
      }),
    ).to.equal(0n);
    expect(
      u64((w) => {
        writeUint64(w, 7.9);
      }),
    ).to.equal(7n);
    expect(
      u64((w) => {
        writeUint64(w, -7);
      }),
    ).to.equal(0n);
    expect(
      u64((w) => {
        writeUint64(w, 2 ** 60);
      }),
    ).to.equal(1n << 60n);
    expect(
      u64((w) => {
        writeUint64(w, 2 ** 70);
      }),
    ).to.equal((1n << 64n) - 1n);
  });

  it('renders signed 64-bit integers as text and as the nearest double', () => {
    fc.assert(fc.property(fc.bigInt({ min: -(1n << 63n), max: maxInt64 }), (n) => int64Text(Long.fromString(n.toString(), false)) === n.toString()));
    fc.assert(fc.property(fc.bigInt({ min: -(1n << 63n), max: maxInt64 }), (n) => int64Number(Long.fromString(n.toString(), false)) === Number(n)));
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (n) => int64Number(Long.fromString(n.toString(), true)) === Number(n)));
    expect([int64Number(undefined), int64Number(-3.5)]).to.deep.equal([0, -3]);
  });

  it('clamps timestamps into the Int64 nanosecond range of DateTime64(9)', () => {
    const nanos = (v: Parameters<typeof writeNanos>[1]): RowValue =>
      read(
        'DateTime64(9)',
        written((w) => {
          writeNanos(w, v);
        }),
      );
    expect(nanos(Long.fromString('1700000000123456789', true))).to.equal(1700000000123456789n);
    expect(nanos(Long.fromString(maxInt64.toString(), true))).to.equal(maxInt64);
    expect(nanos(Long.fromString('9223372036854775808', true))).to.equal(maxInt64);
    expect(nanos(Long.fromString('18446744073709551615', true))).to.equal(maxInt64);
    expect(nanos(Long.fromString('-1', false))).to.equal(maxInt64);
    expect(nanos(0)).to.equal(0n);
    expect(nanos(null)).to.equal(0n);
    expect(nanos(1_700_000_000_000_000_000)).to.equal(1_700_000_000_000_000_000n);
    expect(nanos(9.21e18)).to.equal(maxInt64);
    expect(nanos(-1)).to.equal(0n);
  });

  it('computes durations exactly, 0 when the end precedes the start', () => {
    const duration = (start: Parameters<typeof writeDuration>[1], end: Parameters<typeof writeDuration>[2]): RowValue =>
      u64((w) => {
        writeDuration(w, start, end);
      });
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (start, end) => {
        return duration(Long.fromString(start.toString(), true), Long.fromString(end.toString(), true)) === (end > start ? end - start : 0n);
      }),
    );
    expect(duration(Long.fromNumber(10, true), Long.fromNumber(5, true))).to.equal(0n);
    expect(duration(5, 12)).to.equal(7n);
    expect(duration(12, 5)).to.equal(0n);
    expect(duration(undefined, 5)).to.equal(0n);
  });

  it('writes floats natively, NaN and infinities included, and NULL for an absent min or max', () => {
    for (const v of [1.5, -0.25, Number.NaN, Infinity, -Infinity, Number.MIN_VALUE, Number.MAX_VALUE]) {
      expect(
        read(
          'Float64',
          written((w) => {
            writeFloat(w, v);
          }),
        ),
      ).to.deep.equal(v);
    }
    expect(
      read(
        'Float64',
        written((w) => {
          writeFloat(w, undefined);
        }),
      ),
    ).to.equal(0);
    expect(
      read(
        'Nullable(Float64)',
        written((w) => {
          writeOptionalFloat(w, null);
        }),
      ),
    ).to.equal(null);
    expect(
      read(
        'Nullable(Float64)',
        written((w) => {
          writeOptionalFloat(w, 0);
        }),
      ),
    ).to.equal(0);
    expect(
      read(
        'Nullable(Float64)',
        written((w) => {
          writeOptionalFloat(w, Number.NaN);
        }),
      ),
    ).to.deep.equal(Number.NaN);
  });

  it('clamps integers into their column range', () => {
    expect(clampInt(300, 0, 255)).to.equal(255);
    expect(clampInt(-3, 0, 5)).to.equal(0);
    expect(clampInt(Number.NaN, 0, 5)).to.equal(0);
    expect(clampInt(4.9, 0, 5)).to.equal(4);
  });

  it('writes ids as lower-case hex, from Buffers and from views into larger arrays', () => {
    const backing = new Uint8Array([9, 0xab, 0x01, 9]);
    expect(
      read(
        'String',
        written((w) => {
          writeHex(w, backing.subarray(1, 3));
        }),
      ),
    ).to.equal('ab01');
    expect(
      read(
        'String',
        written((w) => {
          writeHex(w, Buffer.from([0xff, 0]));
        }),
      ),
    ).to.equal('ff00');
    expect(
      read(
        'String',
        written((w) => {
          writeHex(w, undefined);
        }),
      ),
    ).to.equal('');
    expect(
      read(
        'String',
        written((w) => {
          writeHex(w, new Uint8Array());
        }),
      ),
    ).to.equal('');
  });

  it('renders any-values as text, nested ones as JSON', () => {
    expect(anyValueText({ boolValue: false, value: 'boolValue' })).to.equal('false');
    expect(anyValueText({ doubleValue: 0.25, value: 'doubleValue' })).to.equal('0.25');
    expect(anyValueText(AnyValueMessage.fromObject({ intValue: '-9223372036854775808' }))).to.equal('-9223372036854775808');
    expect(anyValueText({ bytesValue: new Uint8Array([1, 2]), value: 'bytesValue' })).to.equal('AQI=');
    expect(
      anyValueText({
        arrayValue: {
          values: [
            { stringValue: 'a', value: 'stringValue' },
            { intValue: 3, value: 'intValue' },
          ],
        },
        value: 'arrayValue',
      }),
    ).to.equal('["a","3"]');
    expect(anyValueText({ kvlistValue: { values: [{ key: 'k', value: { boolValue: true, value: 'boolValue' } }] }, value: 'kvlistValue' })).to.equal(
      '{"k":true}',
    );
    expect(
      anyValueText({
        kvlistValue: { values: [{ key: 'n', value: { arrayValue: { values: [{ doubleValue: 1.5, value: 'doubleValue' }, {}] }, value: 'arrayValue' } }] },
        value: 'kvlistValue',
      }),
    ).to.equal('{"n":[1.5,null]}');
    expect(anyValueText(undefined)).to.equal('');
  });

  it('writes attributes as a map of texts, in order, with lone surrogates replaced', () => {
    const map = 'Map(LowCardinality(String), String)';
    const bytes = written((w) => {
      writeAttributes(w, [
        { key: 'q"', value: { stringValue: 'line\nbreak', value: 'stringValue' } },
        { key: 'n', value: AnyValueMessage.fromObject({ intValue: '-1' }) },
        { key: 'bad\ud800', value: { stringValue: 'x\udc00', value: 'stringValue' } },
        { key: 'q"', value: {} },
      ]);
    });
    expect(read(map, bytes)).to.deep.equal([
      ['q"', 'line\nbreak'],
      ['n', '-1'],
      ['bad\ufffd', 'x\ufffd'],
      ['q"', ''],
    ]);
    expect(
      read(
        map,
        written((w) => {
          writeAttributes(w, undefined);
        }),
      ),
    ).to.deep.equal([]);
    const many = Array.from({ length: 200 }, (_, i) => ({ key: `k${i}`, value: { stringValue: 'é'.repeat(i), value: 'stringValue' as const } }));
    const decoded = read(
      map,
      written((w) => {
        writeAttributes(w, many);
      }),
    ) as readonly (readonly RowValue[])[];
    expect(decoded).to.have.length(200);
    expect(decoded[199]).to.deep.equal(['k199', 'é'.repeat(199)]);
  });
});
