// Builds JSONEachRow text as bytes: constant fragments are copied, strings
// are copied from the protobuf input with JSON escaping, ids are written as
// hex. One growable buffer per request.

const hexDigits = Buffer.from('0123456789abcdef');
/** For each byte: 0 copy as is, 1 escape as \u00XX, or the character after a backslash. */
const escapes = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) escapes[b] = 1;
escapes[0x22] = 0x22;
escapes[0x5c] = 0x5c;
escapes[0x0a] = 0x6e;
escapes[0x0d] = 0x72;
escapes[0x09] = 0x74;

/** Writes the JSON escape of byte b at out[pos]; returns the new position. */
function escape(out: Buffer, pos: number, b: number): number {
  const e = escapes[b] ?? 0;
  out[pos++] = 0x5c;
  if (e !== 1) {
    out[pos++] = e;
    return pos;
  }
  out[pos++] = 0x75; out[pos++] = 0x30; out[pos++] = 0x30;
  out[pos++] = hexDigits[b >> 4] ?? 0; out[pos++] = hexDigits[b & 15] ?? 0;
  return pos;
}

const fragments = new Map<string, Buffer>();
/** A constant ASCII fragment as bytes, cached. */
export function fragment(text: string): Buffer {
  let b = fragments.get(text);
  if (b === undefined) {
    b = Buffer.from(text, 'latin1');
    fragments.set(text, b);
  }
  return b;
}

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

  /** Copies bytes (a fragment or a rendered piece). */
  bytes(b: Buffer): void {
    this.#reserve(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  byte(b: number): void {
    this.#reserve(1);
    this.buf[this.pos++] = b;
  }

  /** Writes ASCII text (numbers, true/false). */
  ascii(text: string): void {
    this.#reserve(text.length);
    const out = this.buf;
    let pos = this.pos;
    for (let i = 0; i < text.length; i++) out[pos++] = text.charCodeAt(i);
    this.pos = pos;
  }

  /** Writes a JS string as a JSON string literal. */
  jsonText(text: string): void {
    const literal = JSON.stringify(text);
    this.#reserve(literal.length * 3);
    this.pos += this.buf.write(literal, this.pos, 'utf8');
  }

  /** Writes src[start, end) (UTF-8) as a JSON string literal. */
  jsonString(src: Buffer, start: number, end: number): void {
    this.#reserve((end - start) * 6 + 2);
    const out = this.buf;
    let pos = this.pos;
    out[pos++] = 0x22;
    if (end - start > 256) {
      // Long strings (log bodies): copy runs natively between escapes.
      let run = start;
      for (let i = start; i < end; i++) {
        if (escapes[src[i] ?? 0] === 0) continue;
        if (i > run) { out.set(src.subarray(run, i), pos); pos += i - run; }
        pos = escape(out, pos, src[i] ?? 0);
        run = i + 1;
      }
      if (end > run) { out.set(src.subarray(run, end), pos); pos += end - run; }
    } else {
      for (let i = start; i < end; i++) {
        const b = src[i] ?? 0;
        if (escapes[b] === 0) out[pos++] = b;
        else pos = escape(out, pos, b);
      }
    }
    out[pos++] = 0x22;
    this.pos = pos;
  }

  /** Writes src[start, end) as a JSON string of lower-case hex. */
  jsonHex(src: Buffer, start: number, end: number): void {
    this.#reserve((end - start) * 2 + 2);
    const out = this.buf;
    let pos = this.pos;
    out[pos++] = 0x22;
    for (let i = start; i < end; i++) {
      const b = src[i] ?? 0;
      out[pos++] = hexDigits[b >> 4] ?? 0;
      out[pos++] = hexDigits[b & 15] ?? 0;
    }
    out[pos++] = 0x22;
    this.pos = pos;
  }

  /** The bytes written so far (a view, not a copy). */
  result(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}
