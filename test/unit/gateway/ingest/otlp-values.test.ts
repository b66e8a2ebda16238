import { expect } from 'chai';
import fc from 'fast-check';
import Long from 'long';
import { anyValueText, attributesJson, clampInt, durationText, floatText, hexText, int64Text, nanosText, uint64Text } from '../../../../gateway/ingest/otlp-values.ts';
import { severityNumber } from '../../../../gateway/ingest/log-rows.ts';

describe('otlp-values', () => {
  it('writes 64-bit integers exactly', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (n) => uint64Text(Long.fromString(n.toString(), true)) === n.toString()));
    fc.assert(fc.property(fc.bigInt({ min: -(1n << 63n), max: (1n << 63n) - 1n }), (n) => int64Text(Long.fromString(n.toString(), false)) === n.toString()));
    expect(uint64Text(Long.fromNumber(-5))).to.equal('0');
    expect(uint64Text(undefined)).to.equal('0');
  });

  it('clamps timestamps into the Int64 nanosecond range of DateTime64(9)', () => {
    expect(nanosText(Long.fromString('1700000000123456789', true))).to.equal('1700000000123456789');
    expect(nanosText(Long.fromString('18446744073709551615', true))).to.equal('9223372036854775807');
    expect(nanosText(0)).to.equal('0');
  });

  it('computes durations exactly, 0 when the end precedes the start', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 1n << 62n }), fc.bigInt({ min: 0n, max: 1n << 60n }), (start, d) => {
      return durationText(Long.fromString(start.toString(), true), Long.fromString((start + d).toString(), true)) === d.toString();
    }));
    expect(durationText(Long.fromNumber(10, true), Long.fromNumber(5, true))).to.equal('0');
  });

  it('keeps floats in ClickHouse JSON form', () => {
    expect(floatText(1.5)).to.equal('1.5');
    expect([floatText(Number.NaN), floatText(Infinity), floatText(-Infinity)]).to.deep.equal(['"nan"', '"inf"', '"-inf"']);
    expect(clampInt(300, 0, 255)).to.equal(255);
    expect(clampInt(-3, 0, 5)).to.equal(0);
  });

  it('renders ids and any-values as text', () => {
    expect(hexText(new Uint8Array([0xab, 0x01]))).to.equal('ab01');
    expect(hexText(undefined)).to.equal('');
    expect(anyValueText({ boolValue: false, value: 'boolValue' })).to.equal('false');
    expect(anyValueText({ doubleValue: 0.25, value: 'doubleValue' })).to.equal('0.25');
    expect(anyValueText({ bytesValue: new Uint8Array([1, 2]), value: 'bytesValue' })).to.equal('AQI=');
    expect(anyValueText({ arrayValue: { values: [{ stringValue: 'a', value: 'stringValue' }, { intValue: 3, value: 'intValue' }] }, value: 'arrayValue' })).to.equal('["a","3"]');
    expect(anyValueText({ kvlistValue: { values: [{ key: 'k', value: { boolValue: true, value: 'boolValue' } }] }, value: 'kvlistValue' })).to.equal('{"k":true}');
    expect(JSON.parse(attributesJson([{ key: 'q"', value: { stringValue: 'line\nbreak', value: 'stringValue' } }]))).to.deep.equal({ 'q"': 'line\nbreak' });
  });

  it('derives severity from text when the number is unset', () => {
    expect(severityNumber(17, 'whatever')).to.equal(17);
    expect([severityNumber(0, 'warning'), severityNumber(0, 'Error'), severityNumber(0, 'fatal'), severityNumber(0, 'debug'), severityNumber(0, 'info'), severityNumber(0, 'trace')]).to.deep.equal([13, 17, 21, 5, 9, 1]);
    expect(severityNumber(0, 'chatty')).to.equal(0);
    expect(severityNumber(undefined, undefined)).to.equal(0);
  });
});
