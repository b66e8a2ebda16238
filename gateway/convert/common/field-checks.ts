// Fields an item must not be stored with, checked the same way by the
// protobuf and OTLP/JSON converters: an enum value its OTLP definition does
// not have (span kind 99 or -1 is not a kind; storing it clamped to a valid
// one would store a different fact), and a histogram bound that is NaN or
// infinite (buckets must be ordered finite boundaries; +Inf is implied after
// the last). Such an item is rejected through partial success, with the value
// as the example in the message; the rest of the request is stored.
import type { ItemRejection } from './item-tally.ts';

/** The largest value of each checked OTLP enum; every one starts at 0 (unspecified). */
const enumMax = { 'span kind': 5, 'severity number': 24, 'aggregation temporality': 2 } as const;

export type CheckedEnum = keyof typeof enumMax;

/** The rejection of an item whose enum `name` holds `value`, or undefined when the value is defined. */
export function enumRejection(name: CheckedEnum, value: number): ItemRejection | undefined {
  const max = enumMax[name];
  return value >= 0 && value <= max ? undefined : { reason: 'enum_out_of_range', example: `${name} ${value} (0 to ${max})` };
}

/** The rejection of a histogram point with `bound` among its explicit bounds, or undefined when it is finite. */
export function boundRejection(bound: number): ItemRejection | undefined {
  return Number.isFinite(bound) ? undefined : { reason: 'bound_not_finite', example: `explicit bound ${bound}` };
}
