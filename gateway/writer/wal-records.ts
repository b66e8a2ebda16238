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
import { crc32 } from 'node:zlib';

const indexMagic = 0x544c5732; // "TLW2": an index entry
export const indexEntryBytes = 16;

export interface WalRecord {
  /** RowBinary rows, whole. */
  readonly rows: Buffer;
  readonly rowCount: number;
}

/** The index entries of appends whose rows go to the rows file in this order. */
export function indexEntries(appends: readonly { readonly rows: Buffer; readonly rowCount: number }[]): Buffer {
  const out = Buffer.allocUnsafe(appends.length * indexEntryBytes);
  appends.forEach((a, i) => {
    const at = i * indexEntryBytes;
    out.writeUInt32LE(indexMagic, at);
    out.writeUInt32LE(a.rows.length, at + 4);
    out.writeUInt32LE(a.rowCount, at + 8);
    out.writeUInt32LE(crc32(a.rows), at + 12);
  });
  return out;
}

export interface IndexedRecords {
  readonly records: WalRecord[];
  /** Bytes of the index file the valid records cover; anything after is torn or corrupt. */
  readonly validBytes: number;
  /** Bytes of the rows file the valid records cover (from its start); anything after is torn. */
  readonly validRowBytes: number;
  readonly rowCount: number;
}

/**
 * The valid records of a segment, in order: each index entry's rows are the
 * next `length` bytes of the rows file. A torn or corrupt tail of either
 * file is left out. `verify` false skips the checksums, for a segment this
 * process wrote and sealed itself (its bytes are the ones it wrote; only a
 * crash tears them).
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
