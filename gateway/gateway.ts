// The OTLP gateway component. This skeleton binds the OTLP/HTTP port and
// answers the ops endpoints; the receivers arrive with the gateway issue.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen } from '../src/ops/http-listener.ts';
import { opsResponse } from '../src/ops/ops-endpoints.ts';
import type { ComponentContext, RunningComponent, StartGateway } from '../src/target/component.ts';
import type { GatewayConfig } from '../src/config/config.ts';

export const startGateway: StartGateway = async (ctx: ComponentContext, config: GatewayConfig): Promise<RunningComponent> => {
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    void opsResponse(path, ctx.readiness, ctx.registry).then((ops) => {
      const answer = ops ?? { status: 404, contentType: 'text/plain; charset=utf-8', body: 'not found\n' };
      res.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
    });
  };
  const http = await listen(handler, ctx.host, config.otlpHttpPort);
  return { name: 'gateway', ports: { otlpHttp: http.port }, stop: () => http.close() };
};
