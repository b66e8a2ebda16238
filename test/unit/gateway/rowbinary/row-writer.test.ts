import { expect } from 'chai';
import { RowWriter } from '../../../../gateway/rowbinary/row-writer.ts';

/** LEB128 as ClickHouse reads lengths and counts. */
function leb128(n: number): number[] {
  const out: number[] = [];
  for (let v = n; ; v = Math.floor(v / 128)) {
    if (v < 0x80) {
      out.push(v);
      return out;
    }
    out.push((v & 0x7f) | 0x80);
  }
}

describe('RowWriter (RowBinary)', () => {
  it('writes little-endian numbers, 64-bit values from halves, and doubles', () => {
    const w = new RowWriter(1);
    w.u8(0xfe);
    w.u32(0xdeadbeef);
    w.i32(-2);
    w.u64Parts(0x89abcdef, 0x01234567);
    w.u64(2 ** 40 + 5);
    w.f64(-1.5);
    const expected = Buffer.alloc(1 + 4 + 4 + 8 + 8 + 8);
    let at = expected.writeUInt8(0xfe, 0);
    at = expected.writeUInt32LE(0xdeadbeef, at);
    at = expected.writeInt32LE(-2, at);
    at = expected.writeBigUInt64LE(0x0123456789abcdefn, at);
    at = expected.writeBigUInt64LE(2n ** 40n + 5n, at);
    expected.writeDoubleLE(-1.5, at);
    expect(w.result().toString('hex')).to.equal(expected.toString('hex'));
  });

  it('prefixes strings with their UTF-8 byte length and writes ids as lower-case hex', () => {
    const w = new RowWriter(1);
    const src = Buffer.from([0x00, 0xab, 0xff]);
    w.text('é\u{1F600}');
    w.string(src, 1, 3);
    w.hex(src, 0, 3);
    w.empty();
    w.text('\ud800');
    expect([...w.result()]).to.deep.equal([6, ...Buffer.from('é\u{1F600}'), 2, 0xab, 0xff, 6, ...Buffer.from('00abff'), 0, 3, 0xef, 0xbf, 0xbd]);
  });

  it('writes lengths of 128 and more as multi-byte LEB128', () => {
    for (const n of [127, 128, 300, 16_384, 70_000]) {
      const w = new RowWriter(1);
      w.text('x'.repeat(n));
      expect([...w.result().subarray(0, 3)].slice(0, leb128(n).length), `length ${n}`).to.deep.equal(leb128(n));
      expect(w.result().length).to.equal(leb128(n).length + n);
    }
  });

  it('patches a count known only after the elements, moving them when the count needs more bytes', () => {
    for (const n of [0, 1, 127, 128, 200, 20_000]) {
      const w = new RowWriter(4);
      w.u8(0x55);
      const at = w.beginCount();
      for (let i = 0; i < n; i++) w.text(`k${i}`);
      w.endCount(at, n);
      w.u8(0xaa);
      const plain = new RowWriter(4);
      plain.u8(0x55);
      plain.varint(n);
      for (let i = 0; i < n; i++) plain.text(`k${i}`);
      plain.u8(0xaa);
      expect(w.result().equals(plain.result()), `count ${n}`).to.equal(true);
    }
  });

  it('hands the queue a copy when the rows fill little of the buffer, so a chunk pins no more memory than it counts', () => {
    const small = new RowWriter(1 << 20);
    small.text('one span');
    expect(small.rows().equals(small.result())).to.equal(true);
    expect(small.rows().buffer).to.not.equal(small.buf.buffer);
    const full = new RowWriter(1024);
    full.text('x'.repeat(900));
    expect(full.rows().buffer).to.equal(full.buf.buffer);
  });
});
