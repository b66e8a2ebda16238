// The /v1 API component: the Koa app on ctx.host:config.port behind the
// shared ops listener (which answers /healthz, /readyz, /metrics), graceful
// stop. Its port opens first (openApi) and answers 503 until the app starts.
import { listenEarly } from '../src/ops/ops-listener.ts';
import type { EarlyListener } from '../src/ops/ops-listener.ts';
import type { ComponentContext, OpenApi, OpenComponent, PortContext, RunningComponent, StartApi } from '../src/target/component.ts';
import type { ApiConfig } from '../src/config/config.ts';
import { createApp } from './app.ts';
import { httpMetrics } from './http/http-metrics.ts';
import { createQueryRunner } from './query/query-runner.ts';
import type { QueryRunner, StoppableQueryRunner } from './query/query-runner.ts';
import { nowNs } from './query/time-range.ts';

function openPort(ctx: PortContext, config: ApiConfig): Promise<EarlyListener> {
  return listenEarly({
    readiness: ctx.readiness,
    registry: ctx.registry,
    log: ctx.log.child({ component: 'api' }),
    host: ctx.host,
    port: config.port,
    name: 'api',
    limits: config.listener,
  });
}

/** Starts the app on its open port. */
function startOn(http: EarlyListener, ctx: ComponentContext, config: ApiConfig, runner: QueryRunner | StoppableQueryRunner): RunningComponent {
  const log = ctx.log.child({ component: 'api' });
  const app = createApp({
    settings: ctx.settings,
    schema: { database: ctx.store.database, cluster: ctx.store.cluster },
    runner,
    now: nowNs,
    pageMaxBytes: config.pageMaxBytes,
    ...(ctx.store.writes === undefined ? {} : { writes: ctx.store.writes }),
    keys: ctx.keys,
    log,
    metrics: httpMetrics(ctx.registry),
    bodyTimeoutMs: config.listener.bodyTimeoutMs,
  });
  const koa = app.callback();
  http.attach((req, res) => {
    void koa(req, res);
  });
  return {
    name: 'api',
    ports: { api: http.port },
    stop: async () => {
      // Running statements are killed first, so that in-flight requests answer at once and the listener closes without waiting for them.
      const closing = http.close();
      if ('stopAll' in runner) await runner.stopAll();
      await closing;
    },
  };
}

/** Starts the API reading the store through `runner`: the seam tests use to inject store failures. A runner that can stop its statements is stopped first at shutdown. */
export async function startApiWith(ctx: ComponentContext, config: ApiConfig, runner: QueryRunner | StoppableQueryRunner): Promise<RunningComponent> {
  const http = await openPort(ctx, config);
  try {
    return startOn(http, ctx, config, runner);
  } catch (error) {
    await http.close();
    throw error;
  }
}

/** Opens the API's port; the app starts on it (on the process's store, as startApi) once the process is set up. */
export const openApi: OpenApi = async (portCtx: PortContext, config: ApiConfig): Promise<OpenComponent> => {
  const http = await openPort(portCtx, config);
  return {
    ports: { api: http.port },
    // A throw while starting rejects, as the other components' start() does.
    start: (ctx) => Promise.resolve().then(() => startOn(http, ctx, config, apiQueryRunner(ctx, config))),
    close: () => http.close(),
  };
};

/** The runner of the API on the store's ClickHouse client: the process's store gate, query time limit and statement bounds, and the connection that kills statements. */
export function apiQueryRunner(ctx: ComponentContext, config: ApiConfig): StoppableQueryRunner {
  const { store } = ctx;
  const control = store.mode === 'embedded' ? (ctx.statementControl ?? store.insertClients.at(-1) ?? store.client) : store.client;
  return createQueryRunner(
    { client: store.client, mode: store.mode, cluster: store.cluster, control },
    config.queryTimeoutMs,
    ctx.log.child({ component: 'api' }),
    ctx.storeGate,
    ctx.statementLimits,
  );
}

/** Starts the API on the store's ClickHouse client through the process's store gate, with the configured query time limit. */
export const startApi: StartApi = (ctx: ComponentContext, config: ApiConfig): Promise<RunningComponent> =>
  startApiWith(ctx, config, apiQueryRunner(ctx, config));
