// Builds RowBinary rows (docs/gateway.md, "Insert path and format"): little-endian
// numbers, strings as a LEB128 length and their bytes, arrays and maps as a
// LEB128 count and their elements, Nullable as a null byte and the value.
// Strings are copied straight from the protobuf input; ids are written as
// lower-case hex. One growable buffer per request.

const hexDigits = Buffer.from('0123456789abcdef');
const twoTo32 = 4_294_967_296;

/**
 * Strings up to this long are copied byte by byte: most attribute keys and
 * values are this short, and Buffer.copy's call into C++ costs more than the
 * loop below it (a quarter of the gateway's JavaScript time under span load,
 * `perf` with --perf-basic-prof; ADR 6).
 */
const shortCopyBytes = 48;

export class RowWriter {
  buf: Buffer;
  pos = 0;

  constructor(capacity = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  #reserve(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + bytes) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Copies bytes (a rendered part, such as a resource's columns). */
  bytes(b: Buffer): void {
    this.#reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** UInt8, Int8, Enum8 and Bool. */
  u8(n: number): void {
    this.#reserve(1);
    this.buf[this.pos++] = n;
  }

  u32(n: number): void {
    this.#reserve(4);
    this.pos = this.buf.writeUInt32LE(n >>> 0, this.pos);
  }

  i32(n: number): void {
    this.#reserve(4);
    this.pos = this.buf.writeInt32LE(n | 0, this.pos);
  }

  /** A 64-bit integer given as its unsigned 32-bit halves (UInt64, Int64, DateTime64). */
  u64Parts(lo: number, hi: number): void {
    this.#reserve(8);
    this.buf.writeUInt32LE(lo >>> 0, this.pos);
    this.buf.writeUInt32LE(hi >>> 0, this.pos + 4);
    this.pos += 8;
  }

  /** A non-negative integer below 2^53 as UInt64. */
  u64(n: number): void {
    this.u64Parts(n % twoTo32, Math.floor(n / twoTo32));
  }

  f64(n: number): void {
    this.#reserve(8);
    this.pos = this.buf.writeDoubleLE(n, this.pos);
  }

  /** An unsigned LEB128 length or count. */
  varint(n: number): void {
    this.#reserve(5);
    const out = this.buf;
    let v = n >>> 0;
    while (v >= 0x80) {
      out[this.pos++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[this.pos++] = v;
  }

  /** src[start, end) as a String. */
  string(src: Buffer, start: number, end: number): void {
    const n = end - start;
    this.varint(n);
    this.#reserve(n);
    if (n <= shortCopyBytes) {
      const out = this.buf;
      let pos = this.pos;
      for (let i = start; i < end; i++) out[pos++] = src[i] ?? 0;
    } else {
      src.copy(this.buf, this.pos, start, end);
    }
    this.pos += n;
  }

  /** A JS string as a UTF-8 String (lone surrogates become U+FFFD). */
  text(s: string): void {
    if (s.length <= shortCopyBytes) {
      // Short ASCII (numbers, booleans) in JavaScript; anything else falls through and overwrites it.
      this.#reserve(s.length + 1);
      const out = this.buf;
      let pos = this.pos + 1;
      let i = 0;
      for (; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        out[pos++] = c;
      }
      if (i === s.length) {
        out[this.pos] = s.length; // a one-byte LEB128 length
        this.pos = pos;
        return;
      }
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.varint(n);
    this.#reserve(n);
    this.pos += this.buf.write(s, this.pos, n, 'utf8');
  }

  /** An empty String (an absent field). */
  empty(): void {
    this.#reserve(1);
    this.buf[this.pos++] = 0;
  }

  /** src[start, end) as a String of lower-case hex. */
  hex(src: Buffer, start: number, end: number): void {
    this.varint((end - start) * 2);
    this.#reserve((end - start) * 2);
    const out = this.buf;
    let pos = this.pos;
    for (let i = start; i < end; i++) {
      const b = src[i] ?? 0;
      out[pos++] = hexDigits[b >> 4] ?? 0;
      out[pos++] = hexDigits[b & 15] ?? 0;
    }
    this.pos = pos;
  }

  /** A string field of the input at src[start, end), or '' when absent (start < 0). */
  field(src: Buffer, start: number, end: number): void {
    if (start < 0) this.empty();
    else this.string(src, start, end);
  }

  /** A bytes field of the input as hex, or '' when absent (start < 0). */
  hexField(src: Buffer, start: number, end: number): void {
    if (start < 0) this.empty();
    else this.hex(src, start, end);
  }

  /**
   * Starts an array or map whose element count is known only after writing
   * it: reserves one byte and returns its position, for endCount.
   */
  beginCount(): number {
    this.#reserve(1);
    return this.pos++;
  }

  /** Writes the count reserved by beginCount, moving the elements when it needs more than one byte. */
  endCount(at: number, count: number): void {
    if (count < 0x80) {
      this.buf[at] = count;
      return;
    }
    let extra = 0;
    for (let v = count >>> 7; v > 0; v >>>= 7) extra++;
    this.#reserve(extra);
    this.buf.copyWithin(at + 1 + extra, at + 1, this.pos);
    this.pos += extra;
    let v = count;
    let p = at;
    while (v >= 0x80) {
      this.buf[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[p] = v;
  }

  /** The bytes written so far (a view, not a copy). */
  result(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  /**
   * The rows written, to hand to the writer queue: a view when they fill
   * most of the buffer, else a copy of their own size. The queue bounds the
   * bytes it counts, so a chunk must not pin much more memory than its length.
   */
  rows(): Buffer {
    return this.pos * 4 >= this.buf.length * 3 ? this.result() : Buffer.from(this.result());
  }

  /** The rows written, as a buffer of their own (the writer is reused). */
  copy(): Buffer {
    return Buffer.from(this.result());
  }
}

/** Scratch writers above this size are not kept for the next request (a rare huge one must not pin its buffer). */
const keptScratchBytes = 4 * 1024 * 1024;

/**
 * One reusable writer for a converter whose conversion runs start to end
 * without yielding (every protobuf converter): each request writes into it
 * and takes a copy of exactly its rows, instead of allocating (and leaving
 * to the garbage collector) a fresh megabyte buffer per request. Large
 * buffers are external memory to V8: churning one per request made a full
 * mark-compact collection several times a second under load.
 */
export class ScratchWriter {
  readonly #capacity: number;
  #writer: RowWriter | undefined;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** The writer, emptied; not to be held past the current conversion. */
  take(): RowWriter {
    const w = this.#writer !== undefined && this.#writer.buf.length <= keptScratchBytes ? this.#writer : new RowWriter(this.#capacity);
    w.pos = 0;
    this.#writer = w;
    return w;
  }
}
