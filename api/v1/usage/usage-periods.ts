// UTC day and month periods touching a time range; usage is kept per UTC day.

const dayNs = 86_400_000_000_000n;
const dayMs = 86_400_000;

export interface Period {
  /** First day, as days since the Unix epoch. */
  readonly firstDay: number;
  /** Day after the last, as days since the Unix epoch. */
  readonly endDay: number;
}

/** Whole days or months touching [startNs, endNs) (the start's period when the range is empty); undefined past `max` periods. */
export function periodsTouching(startNs: bigint, endNs: bigint, interval: 'day' | 'month', max: number): Period[] | undefined {
  const first = Number(startNs / dayNs);
  const last = endNs > startNs ? Number((endNs - 1n) / dayNs) : first;
  // A month holds at least 28 days: a cheap upper bound before building anything.
  if ((interval === 'day' ? last - first + 1 : Math.floor((last - first) / 28) + 1) > max) return undefined;
  const periods: Period[] = [];
  if (interval === 'day') {
    for (let d = first; d <= last; d++) periods.push({ firstDay: d, endDay: d + 1 });
    return periods;
  }
  const date = new Date(first * dayMs);
  let y = date.getUTCFullYear();
  let m = date.getUTCMonth();
  for (;;) {
    const start = Date.UTC(y, m, 1) / dayMs;
    if (start > last) break;
    m += 1;
    if (m === 12) {
      m = 0;
      y += 1;
    }
    periods.push({ firstDay: start, endDay: Date.UTC(y, m, 1) / dayMs });
  }
  return periods;
}

/** Days since the epoch → "YYYY-MM-DD". */
export const isoDay = (day: number): string => new Date(day * dayMs).toISOString().slice(0, 10);

export const dayToMs = (day: number): number => day * dayMs;
