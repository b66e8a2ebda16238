// What the /v1 routes need from the outside world: the store's table names,
// a query runner with the time limit, a clock (tests freeze it) and the
// byte budget of a records page.
import type { SchemaTarget } from '../../src/clickhouse/schema/ddl.ts';
import type { QueryRunner } from './query/query-runner.ts';

export interface RouteDeps {
  readonly schema: SchemaTarget;
  readonly runner: QueryRunner;
  /** Current time in Unix nanoseconds. */
  readonly now: () => bigint;
  /** Most bytes the records of one logs or traces page may take (TENANTRY_API_PAGE_MAX_BYTES). */
  readonly pageMaxBytes: number;
}
