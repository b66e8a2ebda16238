// Which API key a query runs for, without threading it through every route:
// the API's request handler runs each request inside the caller's context,
// and the query runner reads it when it asks the store gate for a turn
// (per-key query limits, src/clickhouse/store-gate.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeyRing } from '../../../src/auth/api-keys.ts';
import { presentedKey } from '../../../src/auth/api-keys.ts';
import type { QueryCaller } from '../../../src/clickhouse/store-gate.ts';

const current = new AsyncLocalStorage<QueryCaller>();

/** Queries run outside a request (tools, tests calling the runner directly) share this caller. */
const unattributed: QueryCaller = { key: 'unattributed' };

/** The caller of the request being handled. */
export function currentCaller(): QueryCaller {
  return current.getStore() ?? unattributed;
}

/**
 * Wraps the API's handler so that its queries count against the key the
 * request presents. The key is looked up here as well as in the app's
 * authentication (a hash per request): a request whose key is unknown is
 * answered 401 before it can query, so it never reaches the gate.
 */
export function withQueryCaller<R>(keys: KeyRing, handler: (req: IncomingMessage, res: ServerResponse) => R): (req: IncomingMessage, res: ServerResponse) => R {
  return (req, res) => {
    const header = (name: string): string | undefined => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const principal = keys.authenticate(presentedKey(header('authorization'), header('x-api-key')));
    return principal === undefined ? handler(req, res) : current.run({ key: principal }, handler, req, res);
  };
}
