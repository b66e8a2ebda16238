// The /v1 API component: the Koa app on ctx.host:config.port, the ops
// endpoints (/healthz, /readyz, /metrics) beside it, graceful stop.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen } from '../src/ops/http-listener.ts';
import { opsPaths, opsResponse } from '../src/ops/ops-endpoints.ts';
import type { ComponentContext, RunningComponent, StartApi } from '../src/target/component.ts';
import type { ApiConfig } from '../src/config/config.ts';
import { createApp } from './app.ts';
import { httpMetrics } from './http/http-metrics.ts';
import { createQueryRunner } from './v1/query/query-runner.ts';
import { nowNs } from './v1/query/time-range.ts';

/** The path of a request target: cut at '?' when it is origin-form (as almost always), else parsed. */
export function requestPath(target: string): string {
  if (!target.startsWith('/')) return new URL(target, 'http://localhost').pathname;
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

export const startApi: StartApi = async (ctx: ComponentContext, config: ApiConfig): Promise<RunningComponent> => {
  const log = ctx.log.child({ component: 'api' });
  const app = createApp({
    schema: { database: ctx.store.database, cluster: ctx.store.cluster },
    runner: createQueryRunner(ctx.store, config.queryTimeoutMs, log),
    now: nowNs,
    keys: ctx.keys,
    log,
    metrics: httpMetrics(ctx.registry),
  });
  const koa = app.callback();
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const path = requestPath(req.url ?? '/');
    if (!opsPaths.has(path)) {
      void koa(req, res);
      return;
    }
    void opsResponse(path, ctx.readiness, ctx.registry).then((ops) => {
      const answer = ops ?? { status: 404, contentType: 'text/plain; charset=utf-8', body: 'not found\n' };
      res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
    });
  };
  const http = await listen(handler, ctx.host, config.port);
  const stop = async (): Promise<void> => {
    // Keep-alive connections whose last request finishes after close() began become idle only then: close those too.
    const sweeper = setInterval(() => { http.server.closeIdleConnections(); }, 50);
    try {
      await http.close();
    } finally {
      clearInterval(sweeper);
    }
  };
  return { name: 'api', ports: { api: http.port }, stop };
};
