// The one builder of a serving process's ComponentContext over its store:
// the store gate, the tenant settings cache and the statement bounds the
// gateway and the API share. runServer builds its context here, and so do
// the tests and benchmarks that start components on a store of their own,
// so that what they run is what the process runs.
import type { ClickHouseClient } from '@clickhouse/client';
import type { KeyRing } from '../auth/api-keys.ts';
import { createStoreGate } from '../clickhouse/store-gate.ts';
import type { Store } from '../clickhouse/store.ts';
import type { QueryLimitsConfig, TenantSettingsConfig } from '../config/config.ts';
import { SettingsCache } from '../tenant/settings/settings-cache.ts';
import { createSettingsStore } from '../tenant/settings/settings-store.ts';
import type { ComponentContext, PortContext } from './component.ts';
import { statementLimits } from './statement-limits.ts';
import { storeGatePolicy } from './store-gate-policy.ts';

/** What a process's context is built from besides its store. */
export interface ProcessContextOptions extends PortContext {
  readonly keys: KeyRing;
  readonly settings: TenantSettingsConfig;
  /** The API's query limits; absent in a gateway-only process (no queries, no statement bounds). */
  readonly queries?: QueryLimitsConfig | undefined;
  /** The writer's longest wait before an INSERT; absent in an API-only process. */
  readonly batchDelayMs?: number | undefined;
  /** Embedded mode's connection that kills statements (see ComponentContext.statementControl). */
  readonly statementControl?: Pick<ClickHouseClient, 'command'> | undefined;
}

/** A process's context and what stops the settings cache it started. */
export interface ProcessContext {
  readonly ctx: ComponentContext;
  /** Stops re-reading the tenant settings. */
  readonly stop: () => void;
}

/** Builds the context of a process on `store`, its tenant settings read once before it resolves. */
export async function openProcessContext(store: Store, options: ProcessContextOptions): Promise<ProcessContext> {
  // One gate for the gateway's block INSERTs and the API's queries (embedded ClickHouse runs one statement at a time per connection).
  const storeGate = createStoreGate(storeGatePolicy(store.mode, options.queries, options.batchDelayMs));
  const settings = new SettingsCache(createSettingsStore(store, { database: store.database, cluster: store.cluster }), {
    defaults: options.settings.defaults,
    refreshMs: options.settings.refreshMs,
    log: options.log.child({ component: 'settings' }),
  });
  await settings.start();
  const ctx: ComponentContext = {
    host: options.host,
    store,
    storeGate,
    settings,
    keys: options.keys,
    log: options.log,
    readiness: options.readiness,
    registry: options.registry,
    statementLimits: options.queries === undefined ? undefined : statementLimits(store.mode, options.queries),
    ...(options.statementControl === undefined ? {} : { statementControl: options.statementControl }),
  };
  return {
    ctx,
    stop: () => {
      settings.stop();
    },
  };
}
