// Time bounds of a query (DESIGN.md section 5): documented in seconds, with
// ms/µs/ns recognised by magnitude; fractions allowed; [start, end).
import type { Result } from '../../src/result.ts';
import { fail, ok } from '../../src/result.ts';
import type { ApiError } from '../http/api-error.ts';
import { invalidRequest } from '../http/api-error.ts';

export interface TimeRange {
  /** Inclusive start, Unix nanoseconds. */
  readonly startNs: bigint;
  /** Exclusive end, Unix nanoseconds. */
  readonly endNs: bigint;
}

const scales: readonly (readonly [number, bigint])[] = [
  [1e17, 1n],
  [1e14, 1_000n],
  [1e11, 1_000_000n],
  [0, 1_000_000_000n],
];

/** Converts a Unix time of any accepted magnitude to integer nanoseconds without float loss in the integer part. */
export function toNanoseconds(value: number): bigint {
  const [, factor] = scales.find(([limit]) => value >= limit) ?? [0, 1_000_000_000n];
  // The shortest decimal form of the number is what the client wrote: scale its digits exactly.
  const text = String(value);
  const decimal = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (decimal === null) return BigInt(Math.round(value * Number(factor)));
  const digits = Math.max(0, factor.toString().length - 1);
  const fraction = (decimal[2] ?? '').slice(0, digits).padEnd(digits, '0');
  return BigInt(decimal[1] ?? '0') * factor + (digits === 0 ? 0n : BigInt(fraction));
}

/** The last instant DateTime64(9) holds. */
const maxNs = 9_223_372_036_854_775_807n;

export const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;

/** Resolves startTime/endTime; `endTime` omitted → `fallbackEndNs` (now, or the cursor's frozen now). */
export function resolveRange(startTime: number, endTime: number | undefined, fallbackEndNs: bigint): Result<TimeRange, ApiError> {
  const startNs = toNanoseconds(startTime);
  const endNs = endTime === undefined ? fallbackEndNs : toNanoseconds(endTime);
  if (startNs > maxNs || endNs > maxNs) return fail(invalidRequest('startTime and endTime must be before the year 2262'));
  if (startNs > endNs) return fail(invalidRequest('startTime is after endTime'));
  return ok({ startNs, endNs });
}

/** Unix ns as the decimal text ClickHouse returns → whole ms, as the bigint division would give, without a bigint per row. */
export function nsTextToMs(ns: string): number {
  return ns.length > 6 && ns.charCodeAt(0) !== 45 /* '-' */ ? Number(ns.slice(0, -6)) : Number(BigInt(ns) / 1_000_000n);
}

/** Nanoseconds to whole milliseconds (floor). */
export const nsToMs = (ns: bigint): number => Number(ns / 1_000_000n);
