// The /v1 API component. This skeleton binds the API port and answers the
// ops endpoints; the routes arrive with the API issue.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen } from '../src/ops/http-listener.ts';
import { opsResponse } from '../src/ops/ops-endpoints.ts';
import type { ComponentContext, RunningComponent, StartApi } from '../src/target/component.ts';
import type { ApiConfig } from '../src/config/config.ts';

export const startApi: StartApi = async (ctx: ComponentContext, config: ApiConfig): Promise<RunningComponent> => {
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    void opsResponse(path, ctx.readiness, ctx.registry).then((ops) => {
      const answer = ops ?? { status: 404, contentType: 'text/plain; charset=utf-8', body: 'not found\n' };
      res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
    });
  };
  const http = await listen(handler, ctx.host, config.port);
  return { name: 'api', ports: { api: http.port }, stop: () => http.close() };
};
