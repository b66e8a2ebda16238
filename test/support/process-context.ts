// A serving process's context for tests that start a component on a store of
// their own: the process's builder (src/target/process-context.ts) with the
// built-in tenant defaults, so the component runs behind the real store gate
// and settings cache.
import { Registry } from 'prom-client';
import type { KeyRing } from '../../src/auth/api-keys.ts';
import type { Store } from '../../src/clickhouse/store.ts';
import type { QueryLimitsConfig } from '../../src/config/config.ts';
import type { Logger } from '../../src/log/logger.ts';
import { silentLogger } from '../../src/log/logger.ts';
import { Readiness } from '../../src/ops/readiness.ts';
import type { ProcessContext } from '../../src/target/process-context.ts';
import { openProcessContext } from '../../src/target/process-context.ts';
import { fixedSettings } from '../../support/fixed-settings.ts';
import { builtInDefaults } from '../../src/tenant/settings/tenant-settings.ts';
import type { TenantSettingsView } from '../../src/tenant/settings/tenant-settings.ts';

/** What a test may set; the rest is a silent, ready-when-told process on 127.0.0.1. */
export interface TestContextOptions {
  readonly keys: KeyRing;
  readonly log?: Logger;
  readonly readiness?: Readiness;
  readonly registry?: Registry;
  readonly queries?: QueryLimitsConfig;
  readonly batchDelayMs?: number;
  /** Every tenant's effective settings instead of the store's (writes refused): a fake of the settings port. */
  readonly settings?: TenantSettingsView;
}

/** The process's context on `store`; stop() it when done. */
export async function testProcessContext(store: Store, options: TestContextOptions): Promise<ProcessContext> {
  const opened = await openProcessContext(store, {
    host: '127.0.0.1',
    keys: options.keys,
    log: options.log ?? silentLogger,
    readiness: options.readiness ?? new Readiness([]),
    registry: options.registry ?? new Registry(),
    settings: { defaults: builtInDefaults, refreshMs: 5000 },
    queries: options.queries,
    batchDelayMs: options.batchDelayMs,
  });
  if (options.settings === undefined) return opened;
  return { ctx: { ...opened.ctx, settings: fixedSettings(options.settings) }, stop: opened.stop };
}
