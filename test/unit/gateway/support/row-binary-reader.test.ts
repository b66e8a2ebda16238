import { expect } from 'chai';
import { RowWriter } from '../../../../gateway/rowbinary/row-writer.ts';
import { rowColumns } from '../../../../gateway/rowbinary/row-batch.ts';
import { logsTable, metricsTable, spansTable } from '../../../../src/clickhouse/schema/tables.ts';
import { RowBinaryReader, mapObject, parseType, readRows, rowDifference, tableColumns } from './row-binary-reader.ts';
import type { RowValue } from './row-binary-reader.ts';

function read(type: string, write: (w: RowWriter) => void): RowValue {
  const w = new RowWriter(8);
  write(w);
  const r = new RowBinaryReader(w.result());
  const v = r.value(parseType(type));
  expect(r.pos).to.equal(w.pos);
  return v;
}

describe('row-binary-reader (test support)', () => {
  it('parses nested types and ignores codecs', () => {
    expect(parseType('Map(LowCardinality(String), String) CODEC(ZSTD(1))')).to.deep.equal({
      name: 'Map',
      args: [
        { name: 'LowCardinality', args: [{ name: 'String', args: [] }] },
        { name: 'String', args: [] },
      ],
    });
    expect(parseType("Enum8('A' = 1, 'B, c' = -2)").args.map((a) => a.name)).to.deep.equal(["'A' = 1", "'B, c' = -2"]);
  });

  it('knows the type of every column the converters write, and the tables have no column they skip', () => {
    for (const table of ['spans', 'logs', 'metrics'] as const) expect(tableColumns(table).map((c) => c.name)).to.deep.equal(rowColumns[table]);
    const retention = { logsDays: 1, tracesDays: 1, metricsDays: 1 };
    expect(spansTable(retention).columns).to.have.length(rowColumns.spans.length);
    expect(logsTable(retention).columns).to.have.length(rowColumns.logs.length);
    expect(metricsTable(retention).columns).to.have.length(rowColumns.metrics.length);
  });

  it('decodes scalars, Nullable, Array and Map, with multi-byte counts', () => {
    expect(
      read('Int32', (w) => {
        w.i32(-5);
      }),
    ).to.equal(-5);
    expect(
      read('UInt64', (w) => {
        w.u64Parts(0xffffffff, 0xffffffff);
      }),
    ).to.equal((1n << 64n) - 1n);
    expect(
      read('DateTime64(9)', (w) => {
        w.u64Parts(0xffffffff, 0x7fffffff);
      }),
    ).to.equal((1n << 63n) - 1n);
    expect(
      read('Bool', (w) => {
        w.u8(1);
      }),
    ).to.equal(true);
    expect(
      read("Enum8('UNSET' = 0, 'OK' = 1)", (w) => {
        w.u8(1);
      }),
    ).to.equal('OK');
    expect(
      read('Nullable(Float64)', (w) => {
        w.u8(1);
      }),
    ).to.equal(null);
    expect(
      read('Array(String)', (w) => {
        w.varint(300);
        for (let i = 0; i < 300; i++) w.text('é');
      }),
    ).to.have.length(300);
    expect(
      read('Map(String, UInt32)', (w) => {
        w.varint(2);
        w.text('a');
        w.u32(1);
        w.text('a');
        w.u32(2);
      }),
    ).to.deep.equal([
      ['a', 1],
      ['a', 2],
    ]);
    expect(
      mapObject([
        ['a', '1'],
        ['b', '2'],
      ]),
    ).to.deep.equal({ a: '1', b: '2' });
  });

  it('refuses what ClickHouse would refuse', () => {
    expect(() =>
      read('Bool', (w) => {
        w.u8(2);
      }),
    ).to.throw(/Bool byte 2/);
    expect(() =>
      read("Enum8('UNSET' = 0)", (w) => {
        w.u8(3);
      }),
    ).to.throw(/Enum8 value 3/);
    expect(() =>
      read('UInt64', (w) => {
        w.u32(1);
      }),
    ).to.throw(/needs 8 bytes/);
    expect(() =>
      read('String', (w) => {
        w.varint(5);
      }),
    ).to.throw(/needs 5 bytes/);
    expect(() =>
      read('Decimal(9, 2)', (w) => {
        w.u8(0);
      }),
    ).to.throw(/does not know type Decimal/);
    expect(() => readRows('logs', Buffer.from([1, 0x74]))).to.throw(/logs row 0, column timestamp/);
  });

  it('describes where two row buffers differ', () => {
    const row = (severity: number): Buffer => {
      const w = new RowWriter(64);
      w.text('t');
      w.u64(1);
      w.u64(2);
      w.text('id');
      w.empty();
      w.empty();
      w.u8(0);
      w.u8(severity);
      for (let i = 0; i < 5; i++) w.empty();
      w.varint(0);
      w.empty();
      w.empty();
      w.empty();
      w.varint(0);
      w.varint(0);
      w.u32(0);
      return Buffer.from(w.result());
    };
    expect(readRows('logs', row(9))).to.have.length(1);
    expect(rowDifference('logs', row(9), row(9))).to.equal('');
    const message = rowDifference('logs', row(9), row(13));
    expect(message).to.match(/^logs rows differ at byte 24 \(lengths 40 and 40\), row 0, column severity_number\n/);
    expect(message).to.contain('"severity_number":9').and.contain('"severity_number":13');
  });
});
