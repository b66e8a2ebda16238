// Query runners that simulate store trouble, injected through startApiWith:
// the real runner (time limit, failure classification) over an endless
// query or over a client that fails every call.
import type { ClickHouseClient } from '@clickhouse/client';
import type { ApiError } from '../../../../api/http/api-error.ts';
import { createQueryRunner } from '../../../../api/query/query-runner.ts';
import type { QueryRunner, QueryTarget } from '../../../../api/query/query-runner.ts';
import type { Statement } from '../../../../api/query/tenant-scan.ts';
import { silentLogger } from '../../../../src/log/logger.ts';
import type { Logger } from '../../../../src/log/logger.ts';
import type { Result } from '../../../../src/result.ts';
import type { Store } from '../../../../src/clickhouse/store.ts';

/** A query that runs for minutes unless ClickHouse cancels it. */
const endless = 'SELECT count() FROM numbers(100000000000) WHERE sipHash64(number) % 7 = 1';

/** Every read runs the endless query on the real store, so ClickHouse cancels it at `timeoutMs`; `started` resolves when the first read begins. */
export function slowRunner(store: QueryTarget, timeoutMs: number): { readonly runner: QueryRunner; readonly started: Promise<undefined> } {
  const real = createQueryRunner(store, timeoutMs, silentLogger);
  const started = Promise.withResolvers<undefined>();
  const slow = <T>(asked: Statement): Promise<Result<T[], ApiError>> => {
    started.resolve(undefined);
    return real.rows<T>({ ...asked, sql: endless });
  };
  return { runner: { rows: slow, manyRows: slow, command: (st) => real.command(st) }, started: started.promise };
}

/** The real runner over a client whose every call fails with `error`, logging to `log`. */
export function failingRunner(error: Error, timeoutMs: number, log: Logger = silentLogger): QueryRunner {
  const refuse = (): Promise<never> => Promise.reject(error);
  return createQueryRunner({ client: { query: refuse, command: refuse } }, timeoutMs, log);
}

/**
 * The store's client, except that queries of the tables `tables` matches (as
 * `.<table>`) for tenant "held" wait until release(), and those for tenant
 * "slow" run the endless query (with the runner's SETTINGS).
 */
export function trappingTarget(store: Store, tables: RegExp): { target: QueryTarget; firstHeld: Promise<void>; release: () => void } {
  const gate = Promise.withResolvers<undefined>();
  const arrived = Promise.withResolvers<undefined>();
  const query: ClickHouseClient['query'] = async (params) => {
    const values = tables.test(params.query) ? Object.values(params.query_params ?? {}) : [];
    if (values.includes('held')) {
      arrived.resolve(undefined);
      await gate.promise;
    }
    if (values.includes('slow')) {
      const settings = params.query.slice(params.query.lastIndexOf('\nSETTINGS'));
      return store.client.query({ ...params, query: `${endless}${settings}`, query_params: {} });
    }
    return store.client.query(params);
  };
  return {
    target: { client: { query, command: (params) => store.client.command(params) } },
    firstHeld: arrived.promise.then(() => undefined),
    release: () => {
      gate.resolve(undefined);
    },
  };
}
