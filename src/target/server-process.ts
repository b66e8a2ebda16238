// Runs a serving target (all, gateway, api): open the components' ports
// first (so probes are answered during start-up: /healthz 200, /readyz 503,
// gRPC health NOT_SERVING, data 503 / UNAVAILABLE), then open the store, make
// sure the schema is there, load keys, start the components on their ports,
// and shut down cleanly on SIGTERM/SIGINT (readiness false, stop accepting,
// drain, close ClickHouse).
import { ensureAdminKey, generatedAdminPrincipal } from '../auth/admin-key.ts';
import { loadKeys } from '../auth/api-keys.ts';
import type { KeyRing } from '../auth/api-keys.ts';
import { migrate } from '../clickhouse/schema/migrator.ts';
import { openStore } from '../clickhouse/store.ts';
import type { Store } from '../clickhouse/store.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../log/logger.ts';
import { Readiness } from '../ops/readiness.ts';
import { fail, ok } from '../result.ts';
import type { Result } from '../result.ts';
import type { OpenComponent, PortContext, RunningComponent } from './component.ts';
import { openProcessContext } from './process-context.ts';
import { schemaIsCurrent } from './schema-gate.ts';
import { openControlConnection } from './control-connection.ts';
import { processRegistry, waitForStopSignal } from './stop-signal.ts';

export type ServingConfig = Extract<Config, { target: 'all' | 'gateway' | 'api' }>;

/** Opens one component's ports (it starts on them later); the CLI supplies these from the deployables. */
export type ComponentStarter = (ctx: PortContext) => Promise<OpenComponent>;

async function resolveKeys(config: ServingConfig, log: Logger): Promise<Result<KeyRing, string>> {
  const loaded = await loadKeys(config.keys);
  if (!loaded.ok) return fail(loaded.error);
  if (loaded.value.size > 0) return ok(loaded.value);
  if (config.target !== 'all') {
    return fail(`target "${config.target}" needs API keys: set TENANTRY_API_KEYS or TENANTRY_API_KEYS_FILE`);
  }
  let admin: Awaited<ReturnType<typeof ensureAdminKey>>;
  try {
    admin = await ensureAdminKey(config.storage.dataDir);
  } catch (error) {
    return fail(`cannot set up the generated admin key: ${(error as Error).message}`);
  }
  if (admin.created) {
    log.warn('no API keys configured: generated an admin key (all scopes, all tenants); it is shown only this once, only its SHA-256 is stored', {
      apiKey: admin.key,
      storedIn: admin.path,
    });
  } else {
    log.info('no API keys configured: using the generated admin key', { storedIn: admin.path });
  }
  return ok(loaded.value.withKey(admin.digest, generatedAdminPrincipal));
}

async function prepareSchema(config: ServingConfig, store: Store, readiness: Readiness, log: Logger): Promise<Result<() => void, string>> {
  if (config.target === 'all') {
    const result = await migrate(store, config.storage.retention, log);
    if (!result.ok) return fail(result.error.message);
    readiness.done('schema');
    return ok(() => undefined);
  }
  // Poll until the migrate Job has run; stop polling at shutdown.
  let timer: NodeJS.Timeout | undefined;
  const poll = async (): Promise<void> => {
    if (await schemaIsCurrent(store)) {
      readiness.done('schema');
      log.info('schema is current');
      return;
    }
    if (readiness.shuttingDown) return;
    log.warn('schema not applied yet; waiting for target "migrate"', { database: store.database });
    timer = setTimeout(() => {
      void poll();
    }, 2000);
  };
  await poll();
  return ok(() => {
    clearTimeout(timer);
  });
}

/** Runs until a signal stops it; resolves with the process exit code. */
export async function runServer(config: ServingConfig, starters: readonly ComponentStarter[], log: Logger): Promise<number> {
  const readiness = new Readiness(['schema', 'listeners']);
  const registry = processRegistry();
  const opened: OpenComponent[] = [];
  const closePorts = async (): Promise<void> => {
    await Promise.allSettled(opened.map((c) => c.close()));
  };
  try {
    for (const open of starters) opened.push(await open({ host: config.host, log, readiness, registry }));
  } catch (error) {
    await closePorts();
    log.error(`cannot listen: ${(error as Error).message}`);
    return 1;
  }
  log.info('listening; starting', { target: config.target, ports: Object.assign({}, ...opened.map((c) => c.ports)) as Record<string, number> });

  const store = await openStore(config.storage.clickhouse);
  if (!store.ok) {
    log.error(store.error);
    await closePorts();
    return 1;
  }
  return serve(config, opened, store.value, { readiness, registry, closePorts }, log);
}

interface ProcessParts {
  readonly readiness: Readiness;
  readonly registry: ReturnType<typeof processRegistry>;
  readonly closePorts: () => Promise<void>;
}

/** Sets the process up on an open store, starts the components on their open ports, and runs until a stop signal. */
async function serve(config: ServingConfig, opened: readonly OpenComponent[], store: Store, parts: ProcessParts, log: Logger): Promise<number> {
  const { readiness, registry } = parts;
  const stopWith = async (message: string): Promise<number> => {
    log.error(message);
    await parts.closePorts();
    await store.close();
    return 1;
  };
  const keys = await resolveKeys(config, log);
  if (!keys.ok) return stopWith(keys.error);
  const schema = await prepareSchema(config, store, readiness, log);
  if (!schema.ok) return stopWith(schema.error);

  const statementControl = await openControlConnection(config.storage.clickhouse);
  // Tenant settings are read once here, before the components start, then every refresh period.
  const { ctx, stop: stopSettings } = await openProcessContext(store, {
    host: config.host,
    keys: keys.value,
    log,
    readiness,
    registry,
    statementControl,
    settings: config.settings,
    queries: 'queries' in config ? config.queries : undefined,
    batchDelayMs: 'gateway' in config ? config.gateway.writer.maxBatchDelayMs : undefined,
  });
  const running: RunningComponent[] = [];
  try {
    for (const component of opened) running.push(await component.start(ctx));
  } catch (error) {
    // Started components close their own ports when stopped; closing them again does nothing.
    await Promise.allSettled(running.map((c) => c.stop()));
    stopSettings();
    await statementControl?.close();
    return stopWith(`cannot start: ${(error as Error).message}`);
  }
  readiness.done('listeners');
  // Listen for the stop signal before saying "started": whoever waits for that line may signal at once.
  const stopSignal = waitForStopSignal(log);
  log.info('tenantry started', {
    target: config.target,
    clickhouse: store.mode,
    database: store.database,
    ports: Object.assign({}, ...running.map((c) => c.ports)) as Record<string, number>,
  });

  await stopSignal;
  readiness.beginShutdown();
  schema.value();
  stopSettings();
  const stopped = await Promise.allSettled(running.map((c) => c.stop()));
  for (const [i, result] of stopped.entries()) {
    if (result.status === 'rejected') log.error('component did not stop cleanly', { component: running[i]?.name, error: result.reason });
  }
  await statementControl?.close();
  await store.close();
  log.info('stopped');
  return stopped.every((r) => r.status === 'fulfilled') ? 0 : 1;
}
