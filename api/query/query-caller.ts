// Which API key a query runs for, without threading it through every route:
// the app's authentication runs the rest of each request inside the caller's
// context, and the query runner reads it when it asks the store gate for a
// turn (per-key query limits, src/clickhouse/store-gate.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from '../../src/auth/api-keys.ts';
import type { QueryCaller } from '../../src/clickhouse/store-gate.ts';

/**
 * The caller, the time limit of its queries when the request is about one
 * tenant (its limits.queryTimeoutSeconds), and the request's signal, which
 * aborts when its client goes away (the runner then stops its statement).
 */
interface CallerContext extends QueryCaller {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

const current = new AsyncLocalStorage<CallerContext>();

/** Queries run outside a request (tools, tests calling the runner directly) share this caller. */
const unattributed: QueryCaller = { key: 'unattributed' };

/** The caller of the request being handled. */
export function currentCaller(): QueryCaller {
  return current.getStore() ?? unattributed;
}

/** The time limit of the current request's queries, when its tenant sets one. */
export function currentTimeoutMs(): number | undefined {
  return current.getStore()?.timeoutMs;
}

/** The signal of the current request: aborted once its client stopped waiting. */
export function currentSignal(): AbortSignal | undefined {
  return current.getStore()?.signal;
}

/** Runs a request whose client stops waiting when `signal` aborts (set by the app before anything else). */
export function withRequestSignal<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T> {
  return current.run({ ...currentCaller(), signal }, work);
}

/**
 * Runs the rest of a request about one tenant: its queries count against the
 * tenant's limit of queries in flight (beside the key's) and run within the
 * tenant's time limit.
 */
export function asTenantCaller<T>(tenant: { readonly id: string; readonly maxConcurrentQueries: number; readonly timeoutMs: number }, work: () => Promise<T>): Promise<T> {
  const { timeoutMs, ...limit } = tenant;
  return current.run({ ...currentCaller(), tenant: limit, timeoutMs }, work);
}

/** Runs the rest of a request as `principal`'s: its queries count against that key (called once the app has authenticated it). */
export function asCaller<T>(principal: Principal, work: () => Promise<T>): Promise<T> {
  const signal = currentSignal();
  return current.run(signal === undefined ? { key: principal } : { key: principal, signal }, work);
}
