// The byte layout of a write-ahead-log segment: a sequence of records, each
// a 16-byte header (magic, payload length, row count, CRC-32 of the payload)
// followed by RowBinary rows. A crash can leave a torn record at the end of
// the segment being written; reading stops at the first record that is
// incomplete or fails its checksum, because nothing from there on was ever
// acknowledged (an acknowledgement waits for the whole record's write, and
// with TENANTRY_WAL_SYNC=fsync for its fsync).
import { crc32 } from 'node:zlib';

const magic = 0x544c5731; // "TLW1"
export const recordHeaderBytes = 16;

export interface WalRecord {
  /** RowBinary rows, whole. */
  readonly rows: Buffer;
  readonly rowCount: number;
}

/** The header of a record holding `rows`; the rows follow it unchanged. */
export function recordHeader(rows: Buffer, rowCount: number): Buffer {
  const header = Buffer.allocUnsafe(recordHeaderBytes);
  header.writeUInt32LE(magic, 0);
  header.writeUInt32LE(rows.length, 4);
  header.writeUInt32LE(rowCount, 8);
  header.writeUInt32LE(crc32(rows), 12);
  return header;
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
