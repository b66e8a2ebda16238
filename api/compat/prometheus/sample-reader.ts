// Reads the samples of chosen stored series in one statement whose text
// never changes: the series ids, the parts each needs (a bit mask: value,
// sum, count, buckets or quantiles), their stored metric names (the sort
// key's second column) and the time bounds are bound parameters. Rows are
// found by their series id (the metrics column of migration 14, the index's
// own hash), expanded into (part, value) samples, cut at the sample
// budget inside ClickHouse (LIMIT), and grouped per (series, part) into two
// time-sorted Float64 arrays. The answer is RowBinary: each array is a
// length and its raw 8-byte values, copied as they are into Float64Arrays,
// so JavaScript parses nothing per sample and a staleness marker keeps its
// bits. Times are read as Float64 milliseconds (exact below 2^53).
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { SchemaTarget } from '../../../src/clickhouse/schema/ddl.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { internal } from '../../http/api-error.ts';
import type { QueryRunner } from '../../v1/query/query-runner.ts';
import { SqlParams } from '../../v1/query/sql-params.ts';

export interface SampleRead {
  readonly schema: SchemaTarget;
  readonly tenantId: string;
  /** Decimal UInt64 series ids, and the part mask each needs (same order). */
  readonly ids: readonly string[];
  readonly masks: readonly number[];
  /** The stored metric names of those series. */
  readonly metricNames: readonly string[];
  readonly fromMs: number;
  readonly toMs: number;
  /** At most this many samples are read; the answer says when there were more. */
  readonly maxSamples: number;
}

/** The samples of one (series, part), ascending by time. */
export interface PartSamples {
  readonly id: string;
  readonly part: number;
  readonly times: Float64Array;
  readonly values: Float64Array;
}

export interface SampleAnswer {
  readonly parts: PartSamples[];
  /** More samples matched than maxSamples (the parts then hold only some of them). */
  readonly overBudget: boolean;
}

/**
 * The statement when every series reads its value alone (gauges and
 * counters, most selectors): no per-row expansion into parts, which cost
 * ClickHouse most of the general statement's time.
 */
function valuesStatement(r: SampleRead, p: SqlParams): string {
  return `SELECT series_id AS sid, toUInt16(0) AS part, arraySort(groupArray(t)) AS ts, arraySort((v, x) -> x, groupArray(value), groupArray(t)) AS vs FROM (
    SELECT series_id, toFloat64(toUnixTimestamp64Milli(timestamp)) AS t, value
    FROM ${queryTable(r.schema, 'metrics')}
    WHERE tenant_id = ${p.bind(r.tenantId, 'String')} AND metric_name IN ${p.bind(r.metricNames, 'Array(String)')}
      AND timestamp >= fromUnixTimestamp64Milli(${p.bind(r.fromMs, 'Int64')}) AND timestamp <= fromUnixTimestamp64Milli(${p.bind(r.toMs, 'Int64')})
      AND series_id IN CAST(${p.bind(r.ids, 'Array(String)')} AS Array(UInt64))
    LIMIT ${p.bind(r.maxSamples + 1, 'Int64')})
  GROUP BY series_id`;
}

/** The statement (its text depends on nothing but the schema and whether only values are read). */
function statement(r: SampleRead, p: SqlParams): string {
  if (r.masks.every((m) => m === 1)) return valuesStatement(r, p);
  // CAST, which ClickHouse folds to a constant (an IN over arrayMap(toUInt64) of the same parameter took 20x as long on 720k rows).
  const ids = `CAST(${p.bind(r.ids, 'Array(String)')} AS Array(UInt64))`;
  const masks = `CAST(${p.bind(r.masks.map(String), 'Array(String)')} AS Array(UInt8))`;
  const indexed = `multiIf(metric_type = 'summary', arrayMap((q, i) -> (toUInt16(2 + i), q), quantile_values, arrayEnumerate(quantile_values)),
        empty(bucket_counts), [(toUInt16(3 + length(explicit_bounds)), toFloat64(count))],
        arrayMap((c, i) -> (toUInt16(2 + i), toFloat64(c)), arrayCumSum(bucket_counts), arrayEnumerate(bucket_counts)))`;
  return `SELECT sid, part, arraySort(groupArray(t)) AS ts, arraySort((v, x) -> x, groupArray(v), groupArray(t)) AS vs FROM (
    SELECT sid, t, e.1 AS part, e.2 AS v FROM (
      SELECT series_id AS sid, transform(sid, ${ids}, ${masks}, toUInt8(0)) AS mask,
        toFloat64(toUnixTimestamp64Milli(timestamp)) AS t, metric_type, value, sum, count, bucket_counts, explicit_bounds, quantile_values
      FROM ${queryTable(r.schema, 'metrics')}
      WHERE tenant_id = ${p.bind(r.tenantId, 'String')} AND metric_name IN ${p.bind(r.metricNames, 'Array(String)')}
        AND timestamp >= fromUnixTimestamp64Milli(${p.bind(r.fromMs, 'Int64')}) AND timestamp <= fromUnixTimestamp64Milli(${p.bind(r.toMs, 'Int64')})
        AND mask != 0)
    ARRAY JOIN arrayConcat(
      if(bitTest(mask, 0), [(toUInt16(0), value)], []),
      if(bitTest(mask, 1), [(toUInt16(1), sum)], []),
      if(bitTest(mask, 2), [(toUInt16(2), toFloat64(count))], []),
      if(bitTest(mask, 3), ${indexed}, [])) AS e
    LIMIT ${p.bind(r.maxSamples + 1, 'Int64')})
  GROUP BY sid, part`;
}

/** A LEB128 length at `pos`: [value, next position]. */
function varint(buf: Buffer, pos: number): [number, number] {
  let n = 0;
  for (let shift = 0; ; shift += 7) {
    const b = buf[pos++];
    if (b === undefined || shift > 35) throw new Error('truncated or oversized length in RowBinary');
    n += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return [n, pos];
  }
}

/** `n` Float64 values at `pos`, copied byte for byte (NaN payloads kept). */
function float64s(buf: Buffer, pos: number, n: number): Float64Array {
  if (pos + n * 8 > buf.length) throw new Error('truncated array in RowBinary');
  const out = new Float64Array(n);
  new Uint8Array(out.buffer).set(buf.subarray(pos, pos + n * 8));
  return out;
}

/** Decodes rows of (UInt64, UInt16, Array(Float64), Array(Float64)). */
export function decodeParts(buf: Buffer): PartSamples[] {
  const out: PartSamples[] = [];
  let pos = 0;
  while (pos < buf.length) {
    if (pos + 10 > buf.length) throw new Error('truncated row in RowBinary');
    const id = buf.readBigUInt64LE(pos).toString();
    const part = buf.readUInt16LE(pos + 8);
    let n: number;
    [n, pos] = varint(buf, pos + 10);
    const times = float64s(buf, pos, n);
    pos += n * 8;
    let m: number;
    [m, pos] = varint(buf, pos);
    const values = float64s(buf, pos, m);
    pos += m * 8;
    if (m !== n) throw new Error('times and values of one series differ in length');
    out.push({ id, part, times, values });
  }
  return out;
}

/** Reads the samples; a store failure is the runner's ApiError. */
export async function readSamples(runner: QueryRunner, r: SampleRead): Promise<Result<SampleAnswer, ApiError>> {
  if (runner.binary === undefined) return fail(internal());
  const p = new SqlParams();
  const body = await runner.binary(statement(r, p), p);
  if (!body.ok) return body;
  let parts: PartSamples[];
  try {
    parts = decodeParts(body.value);
  } catch {
    return fail(internal());
  }
  let total = 0;
  for (const s of parts) total += s.times.length;
  return ok({ parts, overBudget: total > r.maxSamples });
}
