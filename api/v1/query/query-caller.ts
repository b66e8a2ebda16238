// Which API key a query runs for, without threading it through every route:
// the app's authentication runs the rest of each request inside the caller's
// context, and the query runner reads it when it asks the store gate for a
// turn (per-key query limits, src/clickhouse/store-gate.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Principal } from '../../../src/auth/api-keys.ts';
import type { QueryCaller } from '../../../src/clickhouse/store-gate.ts';

const current = new AsyncLocalStorage<QueryCaller>();

/** Queries run outside a request (tools, tests calling the runner directly) share this caller. */
const unattributed: QueryCaller = { key: 'unattributed' };

/** The caller of the request being handled. */
export function currentCaller(): QueryCaller {
  return current.getStore() ?? unattributed;
}

/** Runs the rest of a request as `principal`'s: its queries count against that key (called once the app has authenticated it). */
export function asCaller<T>(principal: Principal, work: () => Promise<T>): Promise<T> {
  return current.run({ key: principal }, work);
}
