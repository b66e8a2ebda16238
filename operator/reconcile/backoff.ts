// Exponential backoff with jitter, per key: the delay doubles with each
// consecutive failure up to a cap, and resets on success.

export interface BackoffPolicy { readonly baseMs: number; readonly maxMs: number }

export const defaultBackoff: BackoffPolicy = { baseMs: 500, maxMs: 60_000 };

/** Delay before retry number `failures` (1 = first retry), with ±20 % jitter. */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(exp * (0.8 + 0.4 * random()));
}
