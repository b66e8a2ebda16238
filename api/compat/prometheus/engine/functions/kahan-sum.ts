// Kahan-Babuska (Neumaier) compensated summation, as Prometheus sums floats in
// sum_over_time, avg_over_time, the variance functions and deriv: the same
// order of operations, so the same rounding.

/** One compensated addition: `sum + inc` and the running compensation `c`. */
export function kahanInc(inc: number, sum: number, c: number): readonly [number, number] {
  const t = sum + inc;
  if (t === Infinity || t === -Infinity) return [t, 0];
  if (Math.abs(sum) >= Math.abs(inc)) return [t, c + (sum - t + inc)];
  return [t, c + (inc - t + sum)];
}
