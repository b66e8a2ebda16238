// Every PromQL function Prometheus 3 offers without a feature flag, by name.
// Experimental ones (sort_by_label, mad_over_time, double_exponential_smoothing,
// info, ts_of_*, first_over_time, histogram_quantiles, start_timestamp, step(),
// range(), start()/end() as functions, min_of/max_of) are left out, so the
// parser refuses them as unknown.
import type { FunctionDef } from './function-types.ts';
import { histogramFunctions } from './histogram-functions.ts';
import { labelFunctions } from './label-functions.ts';
import { mathFunctions } from './math-functions.ts';
import { overTimeFunctions } from './over-time-functions.ts';
import { rateFunctions } from './rate-functions.ts';
import { timeFunctions } from './time-functions.ts';

/** The function library, keyed by function name. */
export const functionTable: ReadonlyMap<string, FunctionDef> = new Map(
  [...rateFunctions, ...overTimeFunctions, ...mathFunctions, ...timeFunctions, ...labelFunctions, ...histogramFunctions].map((def) => [def.name, def]),
);
