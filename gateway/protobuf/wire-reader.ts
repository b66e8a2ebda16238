// A minimal protobuf wire-format reader over one buffer: fields are read as
// numbers or as [start, end) ranges of the input, so the protobuf converters
// never build message objects. Malformed input throws WireError inside a
// read, and readWire turns it into a returned reason: the one place that
// reports malformed protobuf.
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';

export class WireError extends Error {}

/** Runs `read` over protobuf input: its value, or why the bytes are malformed (a WireError it threw). */
export function readWire<T>(read: () => T): Result<T, string> {
  try {
    return ok(read());
  } catch (error) {
    if (error instanceof WireError) return fail(`invalid protobuf: ${error.message}`);
    throw error;
  }
}

export const WireType = { varint: 0, fixed64: 1, bytes: 2, fixed32: 5 } as const;

/** A cursor over buf[pos, end). */
export class WireReader {
  readonly buf: Buffer;
  pos: number;
  end: number;
  /** The last 64-bit value read by fixed64/varint64, as two unsigned 32-bit halves. */
  lo = 0;
  hi = 0;

  constructor(buf: Buffer, pos = 0, end = buf.length) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }

  more(): boolean {
    return this.pos < this.end;
  }

  /**
   * Reads a field's tag (field number << 3 | wire type). Field number 0 and
   * wire types 6 and 7 exist in no message: a body of zero bytes would
   * otherwise read as an endless run of empty unknown fields, decoded as an
   * empty request and answered as if it were one.
   */
  tag(): number {
    const at = this.pos;
    const tag = this.uint32();
    if (tag >>> 3 === 0) throw new WireError(`field number 0 at byte ${at} (protobuf field numbers start at 1)`);
    if ((tag & 7) > 5) throw new WireError(`wire type ${tag & 7} does not exist (field ${tag >>> 3})`);
    return tag;
  }

  /** Reads a varint and keeps its low 32 bits (unsigned); the rest is skipped. */
  uint32(): number {
    const buf = this.buf;
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError('truncated varint');
      const b = buf[this.pos++] ?? 0;
      if (shift < 32) result |= (b & 0x7f) << shift;
      shift += 7;
      if (b < 0x80) return result >>> 0;
    }
    throw new WireError('varint longer than 10 bytes');
  }

  /** Reads a varint into lo/hi. */
  varint64(): void {
    const buf = this.buf;
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError('truncated varint');
      const b = buf[this.pos++] ?? 0;
      if (i < 4) lo |= (b & 0x7f) << (7 * i);
      else if (i === 4) {
        lo |= (b & 0x0f) << 28;
        hi |= (b & 0x7f) >> 4;
      } else hi |= (b & 0x7f) << (7 * i - 32);
      if (b < 0x80) {
        this.lo = lo >>> 0;
        this.hi = hi >>> 0;
        return;
      }
    }
    throw new WireError('varint longer than 10 bytes');
  }

  /** Reads 8 little-endian bytes into lo/hi. */
  fixed64(): void {
    if (this.pos + 8 > this.end) throw new WireError('truncated fixed64');
    this.lo = this.buf.readUInt32LE(this.pos);
    this.hi = this.buf.readUInt32LE(this.pos + 4);
    this.pos += 8;
  }

  fixed32(): number {
    if (this.pos + 4 > this.end) throw new WireError('truncated fixed32');
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new WireError('truncated double');
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  /** Reads a length prefix and returns the end of the delimited range (which starts at pos). */
  delimited(): number {
    const length = this.uint32();
    const end = this.pos + length;
    if (end > this.end) throw new WireError('length-delimited field past the end of its message');
    return end;
  }

  /** Skips a field of the given wire type. */
  skip(wireType: number): void {
    switch (wireType) {
      case WireType.varint:
        this.varint64();
        return;
      case WireType.fixed64:
        this.pos += 8;
        break;
      case WireType.bytes:
        this.pos = this.delimited();
        return;
      case WireType.fixed32:
        this.pos += 4;
        break;
      default:
        throw new WireError(`unsupported wire type ${wireType}`);
    }
    if (this.pos > this.end) throw new WireError('truncated field');
  }
}

/** Advances to the next length-delimited occurrence of `field`: returns its end (its content starts at it.pos), or -1 at the end. */
export function nextDelimited(it: WireReader, field: number): number {
  while (it.more()) {
    const tag = it.tag();
    if (tag >>> 3 === field && (tag & 7) === WireType.bytes) return it.delimited();
    it.skip(tag & 7);
  }
  return -1;
}

/** Ranges [start, end) of the occurrences of one repeated field, reused from message to message. */
export class RangeList {
  count = 0;
  starts = new Int32Array(16);
  ends = new Int32Array(16);

  clear(): void {
    this.count = 0;
  }

  push(start: number, end: number): void {
    if (this.count === this.starts.length) {
      const starts = new Int32Array(this.count * 2);
      const ends = new Int32Array(this.count * 2);
      starts.set(this.starts);
      ends.set(this.ends);
      this.starts = starts;
      this.ends = ends;
    }
    this.starts[this.count] = start;
    this.ends[this.count] = end;
    this.count++;
  }
}
