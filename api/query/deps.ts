// What the /v1 routes need from the outside world: the store's table names,
// a query runner with the time limit, a clock (tests freeze it) and the
// byte budget of a records page, and the tenant settings (limits, retention).
import type { SchemaTarget } from '../../src/clickhouse/schema/ddl.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { WriteEpoch } from '../../src/clickhouse/write-epoch.ts';
import type { TenantSettingsAdmin } from '../../src/tenant/settings/settings-cache.ts';
import type { QueryRunner } from './query-runner.ts';

export interface RouteDeps {
  readonly schema: SchemaTarget;
  readonly runner: QueryRunner;
  /** Current time in Unix nanoseconds. */
  readonly now: () => bigint;
  /** Most bytes the records of one logs or traces page may take (TENANTRY_API_PAGE_MAX_BYTES). */
  readonly pageMaxBytes: number;
  /** Per-tenant limits and retention, with the writes of the settings routes. */
  readonly settings: TenantSettingsAdmin;
  /** Embedded store: its write epoch, which tells a cache that nothing was written since it last looked (absent: a server, which others write). */
  readonly writes?: Pick<WriteEpoch, 'quiet' | 'onQuiet'>;
  /** Where failures that are the server's fault are logged (absent: not logged). */
  readonly log?: Logger;
}
