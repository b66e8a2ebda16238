// The one retry schedule of the tree (the operator's reconciles and watches,
// the gateway's INSERT retries): exponential backoff with jitter. The delay
// doubles with each consecutive failure up to a cap, and resets on success;
// the jitter keeps replicas and keys that failed together from retrying in
// lockstep against the API server or ClickHouse that just came back.

export interface BackoffPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
}

/** Delay before retry number `failures` (1 = first retry), with ±20 % jitter. */
export function backoffDelay(policy: BackoffPolicy, failures: number, random: () => number = Math.random): number {
  // The exponent's cap keeps a zero base from making 0 × Infinity.
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(0, failures - 1), 30));
  return Math.round(exp * (0.8 + 0.4 * random()));
}
