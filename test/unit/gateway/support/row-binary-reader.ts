// Decodes RowBinary rows the way ClickHouse reads them, from the column types
// of the schema (src/clickhouse/schema/tables.ts) in the converters' column
// order (rowColumns), so tests can check what an INSERT would store. Strict:
// a truncated row, a trailing byte, a Bool other than 0/1 or an Enum8 value
// the type does not name is an error, as it would be for ClickHouse.
import { rowColumns } from '../../../../gateway/rowbinary/row-batch.ts';
import type { TableName } from '../../../../gateway/rowbinary/row-batch.ts';
import { logsTable, metricsTable, spansTable } from '../../../../src/clickhouse/schema/tables.ts';

/** A parsed type: `Map(LowCardinality(String), String)` is Map with two arguments; literals ('A' = 1, 9) have no arguments. */
export interface TypeNode {
  readonly name: string;
  readonly args: readonly TypeNode[];
}

/**
 * A decoded value: String → string, (U)Int8-32 and Float → number, (U)Int64
 * and DateTime64 → bigint (Unix ns for DateTime64(9)), Bool → boolean, Enum8
 * → its name, Nullable → null or the value, Array → array, Map → [key, value]
 * pairs in written order (duplicates kept).
 */
export type RowValue = string | number | bigint | boolean | null | readonly RowValue[];
export type Row = Readonly<Record<string, RowValue>>;
export interface Column {
  readonly name: string;
  readonly type: TypeNode;
}

/** Parses a ClickHouse type; anything after it (CODEC, DEFAULT) is ignored. */
export function parseType(text: string): TypeNode {
  let pos = 0;
  const skipSpaces = (): void => {
    while (text[pos] === ' ') pos++;
  };
  const node = (): TypeNode => {
    skipSpaces();
    const start = pos;
    if (text[pos] === "'") {
      // An Enum literal: 'name' = value.
      pos = text.indexOf("'", pos + 1) + 1;
      while (pos < text.length && text[pos] !== ',' && text[pos] !== ')') pos++;
      return { name: text.slice(start, pos).trim(), args: [] };
    }
    while (pos < text.length && /[\w-]/.test(text[pos] ?? '')) pos++;
    if (pos === start) throw new Error(`no type at ${pos} in ${text}`);
    const name = text.slice(start, pos);
    skipSpaces();
    if (text[pos] !== '(') return { name, args: [] };
    pos++;
    const args: TypeNode[] = [];
    for (;;) {
      args.push(node());
      skipSpaces();
      const c = text[pos++];
      if (c === ')') return { name, args };
      if (c !== ',') throw new Error(`expected , or ) at ${pos - 1} in ${text}`);
    }
  };
  return node();
}

const retention = { logsDays: 1, tracesDays: 1, metricsDays: 1 };
const specs = { spans: spansTable(retention), logs: logsTable(retention), metrics: metricsTable(retention) };

/** The columns the converters write for `table`, in order, with their schema types. */
export function tableColumns(table: TableName): readonly Column[] {
  const types = new Map(
    specs[table].columns.map((c) => {
      const space = c.indexOf(' ');
      return [c.slice(0, space), parseType(c.slice(space + 1))] as const;
    }),
  );
  return rowColumns[table].map((name) => {
    const type = types.get(name);
    if (type === undefined) throw new Error(`rowColumns.${table} names ${name}, which the table does not have`);
    return { name, type };
  });
}

/** The names of an Enum8 by value, from its 'name' = value literals. */
function enumNames(type: TypeNode): Map<number, string> {
  return new Map(
    type.args.map((a) => {
      const m = /^'(.*)'\s*=\s*(-?\d+)$/.exec(a.name);
      if (m === null) throw new Error(`unreadable Enum8 element ${a.name}`);
      return [Number(m[2]), m[1] ?? ''];
    }),
  );
}

/** Reads RowBinary values from a buffer. */
export class RowBinaryReader {
  readonly buf: Buffer;
  pos = 0;

  constructor(buf: Buffer) {
    this.buf = buf;
  }

  #take(bytes: number): number {
    if (this.pos + bytes > this.buf.length) throw new Error(`needs ${bytes} bytes at ${this.pos}, only ${this.buf.length - this.pos} left`);
    const at = this.pos;
    this.pos += bytes;
    return at;
  }

  /** An unsigned LEB128 length or count. */
  varint(): number {
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      if (shift > 63) throw new Error(`varint too long at ${this.pos}`);
      const b = this.buf[this.#take(1)] ?? 0;
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return n;
    }
  }

  /** One value of `type`. */
  value(type: TypeNode): RowValue {
    const b = this.buf;
    switch (type.name) {
      case 'String':
        return this.#string();
      case 'LowCardinality':
        return this.value(this.#arg(type, 0));
      case 'UInt8':
        return b.readUInt8(this.#take(1));
      case 'Int8':
        return b.readInt8(this.#take(1));
      case 'UInt16':
        return b.readUInt16LE(this.#take(2));
      case 'Int16':
        return b.readInt16LE(this.#take(2));
      case 'UInt32':
        return b.readUInt32LE(this.#take(4));
      case 'Int32':
        return b.readInt32LE(this.#take(4));
      case 'UInt64':
        return b.readBigUInt64LE(this.#take(8));
      case 'Int64':
      case 'DateTime64':
        return b.readBigInt64LE(this.#take(8));
      case 'Float32':
        return b.readFloatLE(this.#take(4));
      case 'Float64':
        return b.readDoubleLE(this.#take(8));
      case 'Bool': {
        const v = b.readUInt8(this.#take(1));
        if (v > 1) throw new Error(`Bool byte ${v} at ${this.pos - 1}`);
        return v === 1;
      }
      case 'Enum8': {
        const v = b.readInt8(this.#take(1));
        const name = enumNames(type).get(v);
        if (name === undefined) throw new Error(`Enum8 value ${v} at ${this.pos - 1} is not one of the type's`);
        return name;
      }
      case 'Nullable': {
        const isNull = b.readUInt8(this.#take(1));
        if (isNull > 1) throw new Error(`Nullable marker ${isNull} at ${this.pos - 1}`);
        return isNull === 1 ? null : this.value(this.#arg(type, 0));
      }
      case 'Array': {
        const n = this.varint();
        const out: RowValue[] = [];
        for (let i = 0; i < n; i++) out.push(this.value(this.#arg(type, 0)));
        return out;
      }
      case 'Map': {
        const n = this.varint();
        const out: RowValue[] = [];
        for (let i = 0; i < n; i++) out.push([this.value(this.#arg(type, 0)), this.value(this.#arg(type, 1))]);
        return out;
      }
      default:
        throw new Error(`the reader does not know type ${type.name}`);
    }
  }

  #string(): string {
    const n = this.varint();
    const at = this.#take(n);
    return this.buf.toString('utf8', at, at + n);
  }

  #arg(type: TypeNode, i: number): TypeNode {
    const arg = type.args[i];
    if (arg === undefined) throw new Error(`${type.name} without argument ${i}`);
    return arg;
  }
}

/** Where one column of one row lies in a RowBinary buffer. */
interface ColumnSpan {
  readonly row: number;
  readonly column: string;
  readonly start: number;
  readonly end: number;
}

/** Decodes every row of `table`, calling `onColumn` with each column's byte range. */
function decode(table: TableName, rows: Buffer, onColumn?: (span: ColumnSpan) => void): Row[] {
  const columns = tableColumns(table);
  const r = new RowBinaryReader(rows);
  const out: Row[] = [];
  while (r.pos < rows.length) {
    const row: Record<string, RowValue> = {};
    for (const c of columns) {
      const start = r.pos;
      try {
        row[c.name] = r.value(c.type);
      } catch (e) {
        throw new Error(`${table} row ${out.length}, column ${c.name}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      }
      onColumn?.({ row: out.length, column: c.name, start, end: r.pos });
    }
    out.push(row);
  }
  return out;
}

/** Decodes RowBinary rows of `table` written in rowColumns order; throws on any malformed or trailing byte. */
export function readRows(table: TableName, rows: Buffer): Row[] {
  return decode(table, rows);
}

/** A Map column's pairs as an object (later duplicates win), for concise assertions. */
export function mapObject(value: RowValue | undefined): Record<string, RowValue> {
  if (!Array.isArray(value)) throw new Error(`not a Map value: ${String(value)}`);
  const out: Record<string, RowValue> = {};
  for (const pair of value as readonly RowValue[]) {
    if (!Array.isArray(pair) || typeof pair[0] !== 'string') throw new Error('not a Map(String, …) value');
    out[pair[0]] = (pair as readonly RowValue[])[1] ?? null;
  }
  return out;
}

const showRow = (row: Row | undefined): string => JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

/**
 * Why two RowBinary buffers of `table` differ: the first differing byte, the
 * row and column it falls in, both bytes ranges in hex and both rows decoded.
 * '' when they are equal.
 */
export function rowDifference(table: TableName, expected: Buffer, actual: Buffer): string {
  if (expected.equals(actual)) return '';
  let at = 0;
  while (at < expected.length && at < actual.length && expected[at] === actual[at]) at++;
  // Up to the first difference both buffers hold the same columns, so expected's spans locate it.
  let where: ColumnSpan | undefined;
  const decoded = (rows: Buffer, record: boolean): Row[] | string => {
    try {
      return decode(
        table,
        rows,
        record
          ? (span) => {
              if (where === undefined && span.end > at) where = span;
            }
          : undefined,
      );
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
  };
  const expectedRows = decoded(expected, true);
  const actualRows = decoded(actual, false);
  const start = where?.start ?? Math.max(0, at - 16);
  const end = Math.max(at + 16, where?.end ?? 0);
  const rowOf = (rows: Row[] | string): string => (typeof rows === 'string' ? `(undecodable: ${rows})` : showRow(rows[where?.row ?? 0]));
  return [
    `${table} rows differ at byte ${at} (lengths ${expected.length} and ${actual.length})` +
      (where === undefined ? '' : `, row ${where.row}, column ${where.column}`),
    `expected [${start}, ${end}): ${expected.subarray(start, end).toString('hex')}`,
    `actual   [${start}, ${end}): ${actual.subarray(start, end).toString('hex')}`,
    `expected row: ${rowOf(expectedRows)}`,
    `actual row:   ${rowOf(actualRows)}`,
  ].join('\n');
}
