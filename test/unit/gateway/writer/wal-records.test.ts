import { expect } from 'chai';
import fc from 'fast-check';
import { indexEntries, indexEntryBytes, readIndexed } from '../../../../gateway/writer/wal-records.ts';

describe("write-ahead-log records (a segment's rows file and index)", () => {
  const [first, second, third] = [
    { rows: Buffer.from('first rows'), rowCount: 2 },
    { rows: Buffer.from('second'), rowCount: 3 },
    { rows: Buffer.from('third rows'), rowCount: 1 },
  ];
  const appends = [first, second, third];
  const index = indexEntries(appends);
  const rowsFile = Buffer.concat(appends.map((a) => a.rows));

  it('read back exactly what was written, with the length of the rows file they cover', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ rows: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), rowCount: fc.nat(10_000) }), { maxLength: 20 }),
        (records) => {
          const rows = Buffer.concat(records.map((r) => r.rows));
          const read = readIndexed(indexEntries(records), rows);
          expect(read.validRowBytes).to.equal(rows.length);
          expect(read.validBytes).to.equal(records.length * indexEntryBytes);
          expect(read.rowCount).to.equal(records.reduce((n, r) => n + r.rowCount, 0));
          expect(read.records.map((r) => ({ rows: Buffer.from(r.rows), rowCount: r.rowCount }))).to.deep.equal(records);
        },
      ),
    );
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

  it('stop at an entry without the index magic (bytes that are not an index)', () => {
    const garbled = Buffer.from(index);
    garbled.writeUInt32LE(0x544c5731, indexEntryBytes); // the second entry's magic
    expect(readIndexed(garbled, rowsFile).records.map((r) => r.rows.toString())).to.deep.equal(['first rows']);
  });
});
