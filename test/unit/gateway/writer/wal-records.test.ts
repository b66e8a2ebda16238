import { expect } from 'chai';
import fc from 'fast-check';
import { indexEntries, indexEntryBytes, readIndexed, readRecords, recordHeader, recordHeaderBytes } from '../../../../gateway/writer/wal-records.ts';

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

  describe('of a two-file segment (rows file and index)', () => {
    const [first, second, third] = [{ rows: Buffer.from('first rows'), rowCount: 2 }, { rows: Buffer.from('second'), rowCount: 3 }, { rows: Buffer.from('third rows'), rowCount: 1 }];
    const appends = [first, second, third];
    const index = indexEntries(appends);
    const rowsFile = Buffer.concat(appends.map((a) => a.rows));

    it('read back exactly what was written, with the length of the rows file they cover', () => {
      fc.assert(fc.property(fc.array(fc.record({ rows: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), rowCount: fc.nat(10_000) }), { maxLength: 20 }), (records) => {
        const rows = Buffer.concat(records.map((r) => r.rows));
        const read = readIndexed(indexEntries(records), rows);
        expect(read.validRowBytes).to.equal(rows.length);
        expect(read.rowCount).to.equal(records.reduce((n, r) => n + r.rowCount, 0));
        expect(read.records.map((r) => ({ rows: Buffer.from(r.rows), rowCount: r.rowCount }))).to.deep.equal(records);
      }));
    });

    it('stop at a torn index entry, and at an entry whose rows the rows file does not hold in full', () => {
      for (let cut = 2 * indexEntryBytes; cut < index.length; cut++) {
        expect(readIndexed(index.subarray(0, cut), rowsFile).records).to.have.length(2);
      }
      const firstTwo = first.rows.length + second.rows.length;
      for (let cut = firstTwo; cut < rowsFile.length; cut++) {
        const read = readIndexed(index, rowsFile.subarray(0, cut));
        expect(read.records.map((r) => r.rows.toString())).to.deep.equal(['first rows', 'second']);
        expect(read.validRowBytes).to.equal(firstTwo);
        expect(read.rowCount).to.equal(5);
      }
    });

    it('stop at an entry whose rows fail their checksum, unless told the process wrote them itself', () => {
      const corrupt = Buffer.from(rowsFile);
      corrupt.writeUInt8(corrupt.readUInt8(first.rows.length) ^ 0xff, first.rows.length); // the second append's first byte
      expect(readIndexed(index, corrupt).records.map((r) => r.rows.toString())).to.deep.equal(['first rows']);
      expect(readIndexed(index, corrupt, false).records).to.have.length(3);
    });

    it('take no record from a one-file segment\'s bytes, nor one from an index', () => {
      const oneFile = Buffer.concat(appends.flatMap((a) => [recordHeader(a.rows, a.rowCount), a.rows]));
      expect(readIndexed(oneFile, oneFile).records).to.deep.equal([]);
      expect(readRecords(index).records).to.deep.equal([]);
    });
  });
});
