// What both metric converters share: the metric_type values, and the
// default values of each group of type-specific columns, written for the
// types that leave them empty.
import { RowWriter } from '../../rowbinary/row-writer.ts';

/** The metric_type Enum8 values. */
export const metricType = { gauge: 1, sum: 2, histogram: 3, exponentialHistogram: 4, summary: 5 } as const;

/** Default values of each group of type-specific columns, for the types that leave them empty. */
function defaults(write: (w: RowWriter) => void): Buffer {
  const w = new RowWriter(64);
  write(w);
  return Buffer.from(w.result());
}
export const noValue = defaults((w) => {
  w.f64(0);
});
export const noCountSum = defaults((w) => {
  w.u64(0); // count
  w.f64(0); // sum
  w.u8(1); // min NULL
  w.u8(1); // max NULL
});
export const noBuckets = defaults((w) => {
  w.varint(0); // bucket_counts
  w.varint(0); // explicit_bounds
});
export const noExponential = defaults((w) => {
  w.i32(0); // exp_scale
  w.u64(0); // exp_zero_count
  w.f64(0); // exp_zero_threshold
  w.i32(0); // exp_positive_offset
  w.varint(0); // exp_positive_bucket_counts
  w.i32(0); // exp_negative_offset
  w.varint(0); // exp_negative_bucket_counts
});
export const noQuantiles = noBuckets;
