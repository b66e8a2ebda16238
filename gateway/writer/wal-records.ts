// The byte layout of a write-ahead-log segment. A segment is two files: its
// rows file holds the RowBinary rows of every append back to back, exactly
// what ClickHouse reads (an INSERT reads the file itself, no copy is made;
// docs/adr/0006-write-ahead-log.md), and its index file a 16-byte entry per
// append (magic, length of the append's rows, row count, CRC-32 of the
// rows). A crash can leave a torn append at the end of either file; reading
// stops at the first entry that is incomplete, points past the rows there
// are, or fails its checksum, because nothing from there on was ever
// acknowledged (an acknowledgement waits for both writes, and with
// TENANTRY_WAL_SYNC=fsync for their fsyncs).
// Segments of earlier versions are one file of records, each a 16-byte
// header followed by its rows (readRecords); they are still read on start.
import { crc32 } from 'node:zlib';

const magic = 0x544c5731; // "TLW1": a record of a one-file segment (earlier versions)
const indexMagic = 0x544c5732; // "TLW2": an index entry of a two-file segment
export const recordHeaderBytes = 16;
export const indexEntryBytes = 16;

export interface WalRecord {
  /** RowBinary rows, whole. */
  readonly rows: Buffer;
  readonly rowCount: number;
}

function header(kind: number, rows: Buffer, rowCount: number, into: Buffer, at: number): void {
  into.writeUInt32LE(kind, at);
  into.writeUInt32LE(rows.length, at + 4);
  into.writeUInt32LE(rowCount, at + 8);
  into.writeUInt32LE(crc32(rows), at + 12);
}

/** The header of a record of a one-file segment holding `rows`; the rows follow it unchanged. */
export function recordHeader(rows: Buffer, rowCount: number): Buffer {
  const out = Buffer.allocUnsafe(recordHeaderBytes);
  header(magic, rows, rowCount, out, 0);
  return out;
}

/** The index entries of appends whose rows go to the rows file in this order. */
export function indexEntries(appends: readonly { readonly rows: Buffer; readonly rowCount: number }[]): Buffer {
  const out = Buffer.allocUnsafe(appends.length * indexEntryBytes);
  appends.forEach((a, i) => { header(indexMagic, a.rows, a.rowCount, out, i * indexEntryBytes); });
  return out;
}

export interface ReadRecords {
  readonly records: WalRecord[];
  /** Bytes of the valid records; anything after it is a torn or corrupt tail. */
  readonly validBytes: number;
}

/**
 * The valid records of a segment's bytes, in order; a torn tail is left out.
 * `verify` false skips the checksums, for a segment this process wrote and
 * sealed itself (its bytes are the ones it wrote; only a crash tears them).
 */
export function readRecords(segment: Buffer, verify = true): ReadRecords {
  const records: WalRecord[] = [];
  let at = 0;
  while (at + recordHeaderBytes <= segment.length) {
    if (segment.readUInt32LE(at) !== magic) break;
    const length = segment.readUInt32LE(at + 4);
    const rowCount = segment.readUInt32LE(at + 8);
    const end = at + recordHeaderBytes + length;
    if (end > segment.length) break;
    const rows = segment.subarray(at + recordHeaderBytes, end);
    if (verify && crc32(rows) !== segment.readUInt32LE(at + 12)) break;
    records.push({ rows, rowCount });
    at = end;
  }
  return { records, validBytes: at };
}

export interface IndexedRecords extends ReadRecords {
  /** Bytes of the rows file the valid records cover (from its start); anything after is torn. */
  readonly validRowBytes: number;
  readonly rowCount: number;
}

/**
 * The valid records of a two-file segment, in order: each index entry's rows
 * are the next `length` bytes of the rows file. A torn or corrupt tail of
 * either file is left out. `verify` as for readRecords.
 */
export function readIndexed(index: Buffer, rows: Buffer, verify = true): IndexedRecords {
  const records: WalRecord[] = [];
  let at = 0;
  let offset = 0;
  let rowCount = 0;
  while (at + indexEntryBytes <= index.length) {
    if (index.readUInt32LE(at) !== indexMagic) break;
    const length = index.readUInt32LE(at + 4);
    const count = index.readUInt32LE(at + 8);
    if (offset + length > rows.length) break;
    const slice = rows.subarray(offset, offset + length);
    if (verify && crc32(slice) !== index.readUInt32LE(at + 12)) break;
    records.push({ rows: slice, rowCount: count });
    rowCount += count;
    offset += length;
    at += indexEntryBytes;
  }
  return { records, validBytes: at, validRowBytes: offset, rowCount };
}
