import { expect } from 'chai';
import fc from 'fast-check';
import { readRecords, recordHeader, recordHeaderBytes } from '../../../../gateway/writer/wal-records.ts';

const encode = (records: readonly { rows: Buffer; rowCount: number }[]): Buffer =>
  Buffer.concat(records.flatMap((r) => [recordHeader(r.rows, r.rowCount), r.rows]));

describe('write-ahead-log records', () => {
  it('read back exactly what was written', () => {
    fc.assert(fc.property(fc.array(fc.record({ rows: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), rowCount: fc.nat(10_000) }), { maxLength: 20 }), (records) => {
      const bytes = encode(records);
      const read = readRecords(bytes);
      expect(read.validBytes).to.equal(bytes.length);
      expect(read.records.map((r) => ({ rows: Buffer.from(r.rows), rowCount: r.rowCount }))).to.deep.equal(records);
    }));
  });

  it('stop before a torn last record, whatever byte the write stopped at', () => {
    const first = { rows: Buffer.from('first rows'), rowCount: 2 };
    const second = { rows: Buffer.from('second, torn'), rowCount: 3 };
    const whole = encode([first, second]);
    const firstBytes = recordHeaderBytes + first.rows.length;
    for (let cut = firstBytes; cut < whole.length; cut++) {
      const read = readRecords(whole.subarray(0, cut));
      expect(read.records).to.have.length(1);
      expect(read.validBytes).to.equal(firstBytes);
    }
  });

  it('stop at a record whose checksum does not match (a corrupt or partly synced write)', () => {
    const bytes = encode([{ rows: Buffer.from('good'), rowCount: 1 }, { rows: Buffer.from('flipped'), rowCount: 1 }, { rows: Buffer.from('after'), rowCount: 1 }]);
    const corrupt = Buffer.from(bytes);
    const flipAt = recordHeaderBytes + 4 + recordHeaderBytes; // first byte of the second record's rows
    corrupt.writeUInt8(corrupt.readUInt8(flipAt) ^ 0xff, flipAt);
    expect(readRecords(corrupt).records.map((r) => r.rows.toString())).to.deep.equal(['good']);
  });
});
