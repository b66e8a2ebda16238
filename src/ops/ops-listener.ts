// The one HTTP listener every port uses: it answers the ops paths
// (/healthz, /readyz, /metrics) itself, hands everything else to the
// component's handler, owns the server's timeouts, and closes cleanly (stop
// accepting, let in-flight requests finish, close keep-alive connections as
// soon as they go idle).
import { createServer } from 'node:http';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '../log/logger.ts';
import { opsPaths, opsResponse } from './ops-endpoints.ts';
import type { Readiness } from './readiness.ts';

export interface ListenOptions {
  /** The component's own requests; without one, every other path is 404 (the operator's port). */
  readonly handler?: RequestListener;
  readonly readiness: Readiness;
  readonly registry: Registry;
  readonly log: Logger;
  readonly host: string;
  readonly port: number;
}

export interface Listener {
  readonly server: Server;
  /** The bound port (the chosen one when 0 was asked for). */
  readonly port: number;
  /** Stops accepting; resolves when in-flight requests have been answered and every connection is closed. */
  close(): Promise<void>;
}

/**
 * Server timeouts, the same on every port. Keep-alive outlives the 60 s idle
 * timeout of common load balancers, so they close first; a client gets 30 s
 * to send its headers and 2 minutes for the whole request.
 */
export const listenerTimeouts = { keepAliveMs: 65_000, headersMs: 30_000, requestMs: 120_000 } as const;

/** How often close() looks for keep-alive connections that went idle after it began. */
const idleSweepMs = 50;

/** The path of a request target: cut at '?' when it is origin-form (as almost always), else parsed. */
export function requestPath(target: string): string {
  if (!target.startsWith('/')) return new URL(target, 'http://localhost').pathname;
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

function answerOps(req: IncomingMessage, res: ServerResponse, path: string, options: ListenOptions): void {
  opsResponse(path, options.readiness, options.registry).then((ops) => {
    const reply = ops ?? { status: 404, contentType: 'text/plain; charset=utf-8', body: 'not found\n' };
    res.writeHead(reply.status, { 'content-type': reply.contentType }).end(reply.body);
  }).catch((error: unknown) => {
    // Only a failing metrics collector gets here.
    options.log.error('ops endpoint failed', { path, method: req.method, error: (error as Error).message });
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('internal error\n');
  });
}

/** Listens on host:port; ops paths are answered here, the rest by `handler`. */
export async function listen(options: ListenOptions): Promise<Listener> {
  const { handler } = options;
  const server = createServer({
    keepAliveTimeout: listenerTimeouts.keepAliveMs,
    headersTimeout: listenerTimeouts.headersMs,
    requestTimeout: listenerTimeouts.requestMs,
  }, (req, res) => {
    const path = requestPath(req.url ?? '/');
    if (handler !== undefined && !opsPaths.has(path)) {
      handler(req, res);
      return;
    }
    answerOps(req, res, path, options);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    server,
    port: bound,
    close: () => new Promise<void>((resolve) => {
      // close() drops only the connections idle at that moment; keep-alive ones become idle once answered.
      const sweep = setInterval(() => { server.closeIdleConnections(); }, idleSweepMs);
      server.close(() => {
        clearInterval(sweep);
        resolve();
      });
      server.closeIdleConnections();
    }),
  };
}
