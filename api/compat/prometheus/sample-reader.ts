// Reads the rows of chosen stored series in one statement whose text
// depends only on the columns needed (a few fixed shapes): the series ids,
// their stored metric names (the sort key's second column) and the time
// bounds are bound parameters. Rows are found by their series id (the
// metrics column of migration 14, the index's own hash), which
// ClickHouse's transform() turns into the series' position in the request,
// and come back ordered by (metric_name, timestamp): each series ascending
// with no sort or grouping of our own (a GROUP BY into arrays cost more
// than the rows it saved), cut at the budget inside ClickHouse (LIMIT).
// The answer is RowBinary with only the columns the series' parts need
// (value; sum; count; cumulative buckets or quantiles; the exponential
// histogram columns), times as 4-byte offsets from the range's start when
// the range allows. A row of floats alone is decoded through 32-bit word
// views (values copied as bits: a staleness marker keeps its payload).
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { SchemaTarget } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { internal } from '../../http/api-error.ts';
import type { QueryRunner } from '../../query/query-runner.ts';
import type { SqlParams } from '../../query/sql-params.ts';
import type { ScanStatement, TenantScan } from '../../query/tenant-scan.ts';
import { maskBits } from './series-labels.ts';
import type { ExponentialRow } from './stored-histogram.ts';

export interface SampleRead {
  readonly schema: SchemaTarget;
  /** The query's scan of its tenant's metrics: the statement's tenant and budget. */
  readonly scan: TenantScan;
  /** Decimal UInt64 series ids. */
  readonly ids: readonly string[];
  /** The columns to read: maskBits of every part any series needs. */
  readonly mask: number;
  /** The stored metric names of those series. */
  readonly metricNames: readonly string[];
  readonly fromMs: number;
  readonly toMs: number;
  /** At most this many rows are read; the answer says when there were more. */
  readonly maxRows: number;
  /** Parts of the table whose rows are not read (the sample cache holds them already). */
  readonly excludeParts?: readonly string[];
}

/** An exponential histogram row and its OTLP flags. */
export interface ExponentialSample extends ExponentialRow {
  readonly flags: number;
  /** Whether the stored sum is Prometheus' stale marker (read through its bits). */
  readonly staleSum: boolean;
}

/**
 * The rows of one series, ascending by time, one per timestamp (the first
 * read). Columns not asked for are absent; `*Words` hold each double as its
 * two 32-bit words, so NaN payloads are exact.
 */
export interface SeriesRows {
  readonly times: Float64Array;
  readonly value?: Float64Array;
  readonly sum?: Float64Array;
  readonly count?: Float64Array;
  /** Cumulative bucket counts (histograms) or quantile values (summaries): row x's are values[starts[x], starts[x + 1]). */
  readonly indexed?: IndexedColumn;
  readonly exponential?: readonly ExponentialSample[];
}

/** Arrays of every row, end to end. */
export interface IndexedColumn {
  readonly values: Float64Array;
  readonly starts: Uint32Array;
}

export interface SampleAnswer {
  /** Per requested id (same order); undefined when it had no rows. */
  readonly series: (SeriesRows | undefined)[];
  readonly rows: number;
  /** More rows matched than maxRows (the series then hold only some of them). */
  readonly overBudget: boolean;
}

/** The largest range whose times fit a UInt32 offset in ms (49.7 days). */
const offsetRangeMs = 2 ** 32 - 1;

/** The statement: text from a fixed set (the mask and the time width), everything else bound. */
function statement(r: SampleRead, st: ScanStatement): string {
  const p: SqlParams = st.params;
  const ids = `CAST(${p.bind(r.ids, 'Array(String)')} AS Array(UInt64))`;
  const from = p.bind(r.fromMs, 'Int64');
  const cols = [`toUInt32(transform(series_id, ${ids}, arrayEnumerate(${ids}), 0)) AS i`, ...rowColumns(r, from)];
  const rows = `SELECT ${cols.join(', ')}
    FROM ${queryTable(r.schema, 'metrics')}
    WHERE ${st.tenantIs()} AND metric_name IN ${p.bind(r.metricNames, 'Array(String)')}
      AND timestamp >= fromUnixTimestamp64Milli(${from}) AND timestamp <= fromUnixTimestamp64Milli(${p.bind(r.toMs, 'Int64')})
      AND i != 0${r.excludeParts === undefined || r.excludeParts.length === 0 ? '' : ` AND _part NOT IN ${p.bind(r.excludeParts, 'Array(String)')}`}
    ORDER BY metric_name, timestamp
    LIMIT ${p.bind(r.maxRows + 1, 'Int64')}`;
  // Values alone: grouped into one row per series; the ordered stream usually keeps each array ascending (checked when decoded).
  return columnsOf(r.mask) === maskBits.value ? `SELECT i, groupArray(t), groupArray(value) FROM (${rows}) GROUP BY i` : rows;
}

/** A row's time (bound to the range's start `from`) and the columns of the mask, as the decoders read them. */
function rowColumns(r: { readonly mask: number; readonly fromMs: number; readonly toMs: number }, from: string): string[] {
  const time = r.toMs - r.fromMs <= offsetRangeMs ? `toUInt32(toUnixTimestamp64Milli(timestamp) - ${from})` : 'toFloat64(toUnixTimestamp64Milli(timestamp))';
  const cols = [`${time} AS t`];
  const m = columnsOf(r.mask);
  if (m & maskBits.value) cols.push('value');
  if (m & maskBits.sum) cols.push('sum');
  if (m & maskBits.count) cols.push('toFloat64(count)');
  if (m & maskBits.indexed) cols.push("if(metric_type = 'summary', quantile_values, arrayMap(c -> toFloat64(c), arrayCumSum(bucket_counts)))");
  if (m & maskBits.native) {
    cols.push(
      'exp_scale',
      'toFloat64(exp_zero_count)',
      'exp_zero_threshold',
      'exp_positive_offset',
      'arrayMap(c -> toFloat64(c), exp_positive_bucket_counts)',
      'exp_negative_offset',
      'arrayMap(c -> toFloat64(c), exp_negative_bucket_counts)',
      'flags',
    );
  }
  return cols;
}

/** The column groups read for a mask: buckets need count (a row without buckets is its +Inf), native histograms sum and count. */
export function columnsOf(mask: number): number {
  let m = mask;
  if (m & maskBits.indexed) m |= maskBits.count;
  if (m & maskBits.native) m |= maskBits.sum | maskBits.count;
  return m;
}

/** Reads the rows; a store failure is the runner's ApiError. */
export async function readSamples(runner: QueryRunner, r: SampleRead): Promise<Result<SampleAnswer, ApiError>> {
  if (runner.binary === undefined) return fail(internal());
  const st = r.scan.statement();
  const body = await runner.binary(st.finish(statement(r, st)));
  if (!body.ok) return body;
  try {
    const offsetFrom = r.toMs - r.fromMs <= offsetRangeMs ? r.fromMs : undefined;
    const mask = columnsOf(r.mask);
    const decoded = mask === maskBits.value ? decodeGrouped(body.value, r.ids.length, offsetFrom) : decodeRows(body.value, r.ids.length, mask, offsetFrom);
    return ok({ ...decoded, overBudget: decoded.rows > r.maxRows });
  } catch {
    return fail(internal());
  }
}

/**
 * The sample cache's catch-up (sample-cache.ts): the rows of several
 * tenants in the parts the cache does not hold yet, run for the cache in one
 * query's turn (TenantScan.cacheStatement, bound to exactly those tenants).
 * The text grows with the tenants and parts, never with the series: each
 * row comes back with its tenant's position in `tenants` and its series id,
 * and only the rows of the series asked for are kept, each at the position
 * `keys` gives its tenant and series, so a row reaches only its own tenant's
 * entries (tenants' series ids may be equal).
 */
export interface CatchUpRead {
  readonly schema: SchemaTarget;
  readonly statement: ScanStatement;
  readonly tenants: readonly string[];
  /** Per tenant (same order), the positions of its series by decimal id. */
  readonly keys: readonly ReadonlyMap<string, number>[];
  /** The positions in all. */
  readonly size: number;
  /** The columns: maskBits of every entry caught up. */
  readonly mask: number;
  readonly fromMs: number;
  readonly toMs: number;
  /** Parts whose rows every entry caught up holds already. */
  readonly excludeParts: readonly string[];
  readonly maxRows: number;
}

/** Reads a catch-up's rows: no sort and no grouping in ClickHouse (they are few: the rows of the newest inserts). */
export async function readCatchUp(runner: QueryRunner, r: CatchUpRead): Promise<Result<SampleAnswer, ApiError>> {
  if (runner.binary === undefined) return fail(internal());
  const st = r.statement;
  const p = st.params;
  const from = p.bind(r.fromMs, 'Int64');
  const cols = [`toUInt32(indexOf(${p.bind(r.tenants, 'Array(String)')}, tenant_id)) AS ti`, 'series_id', ...rowColumns(r, from)];
  const sql = `SELECT ${cols.join(', ')}
    FROM ${queryTable(r.schema, 'metrics')}
    WHERE ${st.tenantIs()}${r.excludeParts.length === 0 ? '' : ` AND _part NOT IN ${p.bind(r.excludeParts, 'Array(String)')}`}
      AND timestamp >= fromUnixTimestamp64Milli(${from}) AND timestamp <= fromUnixTimestamp64Milli(${p.bind(r.toMs, 'Int64')})
    LIMIT ${p.bind(r.maxRows + 1, 'Int64')}`;
  const body = await runner.binary(st.finish(sql));
  if (!body.ok) return body;
  try {
    const offsetFrom = r.toMs - r.fromMs <= offsetRangeMs ? r.fromMs : undefined;
    const mask = columnsOf(r.mask);
    const { rows, all } = positioned(body.value, r.keys, mask, offsetFrom === undefined ? 8 : 4);
    const decoded = decodeRows(rows, r.size, mask, offsetFrom);
    return ok({ series: decoded.series, rows: all, overBudget: all > r.maxRows });
  } catch {
    return fail(internal());
  }
}

/**
 * Rows of (tenant position, series id, the rest) as the decoders read them,
 * (position of the series, the rest): rows of series not asked for are
 * dropped. `all` counts every row read.
 */
function positioned(buf: Buffer, keys: readonly ReadonlyMap<string, number>[], mask: number, timeBytes: number): { rows: Buffer; all: number } {
  const floats = floatColumns(mask);
  const indexed = (mask & maskBits.indexed) !== 0;
  const native = (mask & maskBits.native) !== 0;
  const out = Buffer.allocUnsafe(buf.length);
  let end = 0;
  let all = 0;
  const r = new Reader(buf);
  while (r.more()) {
    const tenant = keys[r.u32() - 1];
    if (tenant === undefined) throw new Error('tenant position out of range in RowBinary');
    const id = r.u64();
    const start = r.pos;
    r.skip(timeBytes + 8 * floats);
    if (indexed) r.skipF64Array();
    if (native) r.skipExponential();
    all++;
    const at = tenant.get(id);
    if (at === undefined) continue;
    end = out.writeUInt32LE(at + 1, end);
    end += buf.copy(out, end, start, r.pos);
  }
  return { rows: out.subarray(0, end), all };
}

/** How many of the plain float columns (value, sum, count) a mask reads. */
function floatColumns(mask: number): number {
  return [maskBits.value, maskBits.sum, maskBits.count].filter((b) => (mask & b) !== 0).length;
}

/** One row per series of (i, times, values), arrays copied as bytes. */
function decodeGrouped(buf: Buffer, n: number, offsetFrom: number | undefined): { series: (SeriesRows | undefined)[]; rows: number } {
  const series = new Array<SeriesRows | undefined>(n).fill(undefined);
  const r = new Reader(buf);
  let rows = 0;
  while (r.more()) {
    const i = r.u32() - 1;
    if (i < 0 || i >= n) throw new Error('series position out of range in RowBinary');
    const times = offsetFrom !== undefined ? r.offsetTimes(offsetFrom) : r.f64s();
    const value = r.f64s();
    if (value.length !== times.length) throw new Error('times and values of one series differ in length');
    rows += times.length;
    const s: SeriesRows = { times, value };
    series[i] = strictlyAscending(times) ? s : sortRows(s);
  }
  return { series, rows };
}

/** Rows holding arrays, read in two passes: sizes first, then each series' columns filled in place. */
export function decodeRows(buf: Buffer, n: number, mask: number, offsetFrom: number | undefined): { series: (SeriesRows | undefined)[]; rows: number } {
  const floats = floatColumns(mask);
  if ((mask & (maskBits.indexed | maskBits.native)) === 0) return decodeFixed(buf, n, mask, floats, offsetFrom);
  const timeBytes = offsetFrom !== undefined ? 4 : 8;
  const indexed = (mask & maskBits.indexed) !== 0;
  const native = (mask & maskBits.native) !== 0;
  // Pass 1: rows and indexed values per series, skipping everything else.
  const rowCounts = new Uint32Array(n);
  const valueCounts = new Uint32Array(n);
  const r = new Reader(buf);
  let rows = 0;
  while (r.more()) {
    const i = r.u32() - 1;
    if (i < 0 || i >= n) throw new Error('series position out of range in RowBinary');
    r.skip(timeBytes + 8 * floats);
    rows++;
    rowCounts[i] = (rowCounts[i] ?? 0) + 1;
    if (indexed) valueCounts[i] = (valueCounts[i] ?? 0) + r.skipF64Array();
    if (native) r.skipExponential();
  }
  // Pass 2: each series' columns, allocated once at their size.
  const cols = Array.from({ length: n }, (_, i) => {
    const c = rowCounts[i] ?? 0;
    return c === 0
      ? undefined
      : {
          times: new Float64Array(c),
          words: new Uint32Array(2 * floats * c),
          filled: 0,
          unsorted: false,
          values: new Float64Array(indexed ? (valueCounts[i] ?? 0) : 0),
          starts: new Uint32Array(indexed ? c + 1 : 0),
          exponential: [] as ExponentialSample[],
        };
  });
  r.pos = 0;
  while (r.more()) {
    const c = cols[r.u32() - 1];
    if (c === undefined) throw new Error('series position out of range in RowBinary');
    const t = offsetFrom !== undefined ? offsetFrom + r.u32() : r.f64();
    const at = c.filled;
    const last = c.times[at - 1];
    const keep = at === 0 || t !== last;
    if (last !== undefined && t < last) c.unsorted = true;
    if (keep) {
      c.times[at] = t;
      for (let k = 0; k < 2 * floats; k++) c.words[2 * floats * at + k] = r.u32();
    } else r.skip(8 * floats);
    if (indexed) {
      const start = c.starts[at] ?? 0;
      if (keep) c.starts[at + 1] = start + r.f64sInto(c.values, start);
      else r.skipF64Array();
    }
    if (native) {
      const scale = r.i32();
      const zeroCount = r.f64();
      const zeroThreshold = r.f64();
      const positiveOffset = r.i32();
      const positiveCounts = r.f64Array();
      const negativeOffset = r.i32();
      const negativeCounts = r.f64Array();
      const flags = r.u32();
      if (keep) {
        // Sum and count are the last two float columns when native histograms are read.
        const w = 2 * floats * at + 2 * (floats - 2);
        const sumLo = c.words[w] ?? 0;
        const sumHi = c.words[w + 1] ?? 0;
        c.exponential.push({
          scale,
          zeroCount,
          zeroThreshold,
          positiveOffset,
          positiveCounts,
          negativeOffset,
          negativeCounts,
          flags,
          sum: wordsToFloat(sumLo, sumHi),
          count: wordsToFloat(c.words[w + 2] ?? 0, c.words[w + 3] ?? 0),
          staleSum: sumLo === staleLo && sumHi === staleHi,
        });
      }
    }
    if (keep) c.filled = at + 1;
  }
  const series = cols.map((c): SeriesRows | undefined => {
    if (c === undefined) return undefined;
    const count = c.filled;
    const own: Float64Array[] = [];
    for (let k = 0; k < floats; k++) own.push(column(c.words, floats, k, 0, count));
    let k = 0;
    const pick = (bit: number): Float64Array | undefined => ((mask & bit) !== 0 ? own[k++] : undefined);
    const out: SeriesRows = {
      times: c.times.subarray(0, count),
      value: pick(maskBits.value),
      sum: pick(maskBits.sum),
      count: pick(maskBits.count),
      ...(indexed ? { indexed: { values: c.values, starts: c.starts.subarray(0, count + 1) } } : {}),
      ...(native ? { exponential: c.exponential } : {}),
    };
    return c.unsorted ? sortRows(out) : out;
  });
  return { series, rows };
}

/** Prometheus' stale marker as little-endian words. */
const staleLo = 2;
const staleHi = 0x7ff00000;

const pair = new Uint32Array(2);
const pairFloat = new Float64Array(pair.buffer);

function wordsToFloat(lo: number, hi: number): number {
  pair[0] = lo;
  pair[1] = hi;
  return pairFloat[0] ?? 0;
}

/**
 * Rows of fixed width (floats only), the common case: two passes over
 * 32-bit words, counting rows per series, then copying each into its
 * place in one array per column (each series a view of its stretch).
 */
function decodeFixed(
  raw: Buffer,
  n: number,
  mask: number,
  floats: number,
  offsetFrom: number | undefined,
): { series: (SeriesRows | undefined)[]; rows: number } {
  const timeWords = offsetFrom !== undefined ? 1 : 2;
  const width = 1 + timeWords + 2 * floats;
  if (raw.length % (width * 4) !== 0) throw new Error('truncated row in RowBinary');
  // Word views need 4-byte alignment: copy when the body is not aligned.
  const buf = raw.byteOffset % 4 === 0 ? raw : Buffer.from(raw);
  const words = new Uint32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const rows = words.length / width;
  // starts[i]: where series i's stretch begins; filled[i]: rows written into it.
  const starts = new Uint32Array(n + 1);
  for (let o = 0; o < words.length; o += width) {
    const i = words[o] ?? 0;
    if (i < 1 || i > n) throw new Error('series position out of range in RowBinary');
    starts[i] = (starts[i] ?? 0) + 1;
  }
  for (let i = 1; i <= n; i++) starts[i] = (starts[i] ?? 0) + (starts[i - 1] ?? 0);
  const times = new Float64Array(rows);
  const cols = new Uint32Array(rows * 2 * floats);
  const from = offsetFrom ?? 0;
  let disorder = false;
  // starts[i] moves on as series i is filled (so it ends where series i + 1 begins); begins keeps the first.
  const begins = starts.slice();
  const span = 2 * floats;
  for (let o = 0; o < words.length; o += width) {
    const i = (words[o] ?? 0) - 1;
    const at = starts[i] ?? 0;
    const t = timeWords === 1 ? from + (words[o + 1] ?? 0) : wordsToFloat(words[o + 1] ?? 0, words[o + 2] ?? 0);
    if (at > (begins[i] ?? 0) && t <= (times[at - 1] ?? 0)) disorder = true;
    times[at] = t;
    const c = at * span;
    const v = o + 1 + timeWords;
    for (let k = 0; k < span; k++) cols[c + k] = words[v + k] ?? 0;
    starts[i] = at + 1;
  }
  const series: (SeriesRows | undefined)[] = [];
  for (let i = 0; i < n; i++) {
    const first = begins[i] ?? 0;
    const end = begins[i + 1] ?? 0;
    if (end === first) {
      series.push(undefined);
      continue;
    }
    const own: Float64Array[] = [];
    for (let k = 0; k < floats; k++) own.push(column(cols, floats, k, first, end));
    let k = 0;
    const pick = (bit: number): Float64Array | undefined => ((mask & bit) !== 0 ? own[k++] : undefined);
    const s: SeriesRows = { times: times.subarray(first, end), value: pick(maskBits.value), sum: pick(maskBits.sum), count: pick(maskBits.count) };
    series.push(disorder && !strictlyAscending(s.times) ? sortRows(s) : s);
  }
  return { series, rows };
}

/** Column k of rows [first, end) of interleaved doubles (as words): a view when it is the only column. */
function column(cols: Uint32Array, floats: number, k: number, first: number, end: number): Float64Array {
  if (floats === 1) return new Float64Array(cols.buffer, first * 8, end - first);
  const out = new Uint32Array((end - first) * 2);
  for (let r = first; r < end; r++) {
    out[2 * (r - first)] = cols[2 * (r * floats + k)] ?? 0;
    out[2 * (r - first) + 1] = cols[2 * (r * floats + k) + 1] ?? 0;
  }
  return new Float64Array(out.buffer);
}

/** Whether times rise strictly (no sort or deduplication needed). */
export function strictlyAscending(times: Float64Array): boolean {
  for (let i = 1; i < times.length; i++) if ((times[i] ?? 0) <= (times[i - 1] ?? 0)) return false;
  return true;
}

/** A series' rows sorted by time, one per timestamp (the first read): only when the store answered out of order. */
export function sortRows(s: SeriesRows): SeriesRows {
  const order = [...s.times.keys()].sort((a, b) => (s.times[a] ?? 0) - (s.times[b] ?? 0) || a - b);
  const kept = order.filter((j, x) => x === 0 || s.times[j] !== s.times[order[x - 1] ?? 0]);
  const col = (c: Float64Array | undefined): Float64Array | undefined => {
    if (c === undefined) return undefined;
    const w = new Uint32Array(c.buffer, c.byteOffset, c.length * 2);
    const out = new Uint32Array(kept.length * 2);
    kept.forEach((j, x) => {
      out[2 * x] = w[2 * j] ?? 0;
      out[2 * x + 1] = w[2 * j + 1] ?? 0;
    });
    return new Float64Array(out.buffer);
  };
  return {
    times: Float64Array.from(kept, (j) => s.times[j] ?? 0),
    value: col(s.value),
    sum: col(s.sum),
    count: col(s.count),
    ...(s.indexed !== undefined ? { indexed: keptIndexed(s.indexed, kept) } : {}),
    ...(s.exponential !== undefined
      ? {
          exponential: kept.flatMap((j) => {
            const e = s.exponential?.[j];
            return e === undefined ? [] : [e];
          }),
        }
      : {}),
  };
}

/** The rows `kept` of an indexed column, in that order. */
function keptIndexed(c: IndexedColumn, kept: readonly number[]): IndexedColumn {
  const values: number[] = [];
  const starts = [0];
  for (const j of kept) {
    for (let x = c.starts[j] ?? 0; x < (c.starts[j + 1] ?? 0); x++) values.push(c.values[x] ?? 0);
    starts.push(values.length);
  }
  return { values: Float64Array.from(values), starts: Uint32Array.from(starts) };
}

/** A cursor over RowBinary. */
class Reader {
  pos = 0;
  readonly #buf: Buffer;
  constructor(buf: Buffer) {
    this.#buf = buf;
  }
  more(): boolean {
    return this.pos < this.#buf.length;
  }
  #need(n: number): void {
    if (this.pos + n > this.#buf.length) throw new Error('truncated row in RowBinary');
  }
  u32(): number {
    this.#need(4);
    const v = this.#buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  i32(): number {
    this.#need(4);
    const v = this.#buf.readInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  /** A UInt64 as its decimal text. */
  u64(): string {
    this.#need(8);
    const v = this.#buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    return v.toString();
  }
  f64(): number {
    this.#need(8);
    const v = this.#buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }
  /** A LEB128 length. */
  #varint(): number {
    let n = 0;
    for (let shift = 0; ; shift += 7) {
      this.#need(1);
      const b = this.#buf[this.pos++] ?? 0;
      if (shift > 35) throw new Error('oversized length in RowBinary');
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return n;
    }
  }
  skip(n: number): void {
    this.#need(n);
    this.pos += n;
  }
  /** An Array(Float64) copied as bytes. */
  f64s(): Float64Array {
    const len = this.#varint();
    const out = new Float64Array(len);
    this.f64sInto(out, 0, len);
    return out;
  }
  /** An Array(UInt32) of ms offsets from `from`, as times. */
  offsetTimes(from: number): Float64Array {
    const len = this.#varint();
    this.#need(len * 4);
    const out = new Float64Array(len);
    for (let k = 0; k < len; k++) out[k] = from + this.#buf.readUInt32LE(this.pos + 4 * k);
    this.pos += len * 4;
    return out;
  }
  /** Skips a row's native histogram columns: scale, zero count and threshold, both spans' offset and counts, flags. */
  skipExponential(): void {
    this.skip(4 + 8 + 8 + 4);
    this.skipF64Array();
    this.skip(4);
    this.skipF64Array();
    this.skip(4);
  }
  /** Skips an Array(Float64), returning its length. */
  skipF64Array(): number {
    const len = this.#varint();
    this.skip(len * 8);
    return len;
  }
  /** Copies an Array(Float64) into `out` from `at` as bytes, returning its length. */
  f64sInto(out: Float64Array, at: number, known?: number): number {
    const len = known ?? this.#varint();
    this.#need(len * 8);
    if (at + len > out.length) throw new Error('more array values than counted in RowBinary');
    new Uint8Array(out.buffer, out.byteOffset + at * 8, len * 8).set(this.#buf.subarray(this.pos, this.pos + len * 8));
    this.pos += len * 8;
    return len;
  }
  f64Array(): number[] {
    const len = this.#varint();
    this.#need(len * 8);
    const out = new Array<number>(len);
    for (let k = 0; k < len; k++) out[k] = this.#buf.readDoubleLE(this.pos + 8 * k);
    this.pos += len * 8;
    return out;
  }
}
