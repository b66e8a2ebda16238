// Time buckets of a timeseries query: the interval (given, or the default
// rule of DESIGN.md section 5), bucket starts aligned to multiples of it.
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import { invalidRequest } from '../../http/api-error.ts';

export const defaultIntervals = [1, 5, 10, 15, 30, 60, 300, 900, 3600, 21600, 86400] as const;
export const defaultMaxPoints = 300;
export const maxPoints = 11_000;

export interface BucketPlan {
  /** Start of the first bucket, Unix ms (a multiple of stepMs). */
  readonly originMs: number;
  readonly stepMs: number;
  readonly points: number;
}

const countPoints = (startMs: number, endMs: number, stepMs: number): number => {
  const origin = Math.floor(startMs / stepMs) * stepMs;
  return endMs <= startMs ? 0 : Math.ceil((endMs - origin) / stepMs);
};

/** Resolves the buckets of [startMs, endMs); `intervalSeconds` undefined → the default rule. */
export function planBuckets(startMs: number, endMs: number, intervalSeconds: number | undefined): Result<BucketPlan, ApiError> {
  const stepMs =
    intervalSeconds === undefined
      ? 1000 * (defaultIntervals.find((s) => countPoints(startMs, endMs, s * 1000) <= defaultMaxPoints) ?? 86400)
      : Math.max(1, Math.round(intervalSeconds * 1000));
  const points = countPoints(startMs, endMs, stepMs);
  if (points > maxPoints)
    return fail(
      invalidRequest(`the range holds ${points} intervals of ${stepMs / 1000} s; at most ${maxPoints} are allowed: widen interval or narrow the range`),
    );
  return ok({ originMs: Math.floor(startMs / stepMs) * stepMs, stepMs, points });
}

/** Bucket starts in ms. */
export function bucketTimes(plan: BucketPlan): number[] {
  return Array.from({ length: plan.points }, (_, i) => plan.originMs + i * plan.stepMs);
}
