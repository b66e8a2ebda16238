// The one HTTP listener every port uses: it answers the ops paths
// (/healthz, /readyz, /metrics) itself, hands everything else to the
// component's handler, owns the server's timeouts and connection cap, and
// closes cleanly (stop accepting, let in-flight requests finish, close
// keep-alive connections as soon as they go idle). A port may open before
// its component is set up (listenEarly): probes get their answers at once,
// and every other request 503 with Retry-After until the handler arrives.
import { createServer } from 'node:http';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '../log/logger.ts';
import { connectionCap, defaultListenerLimits } from './listener-limits.ts';
import type { ListenerLimits } from './listener-limits.ts';
import { listenerMetrics } from './listener-metrics.ts';
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
  /** The listener's name in metrics and logs (otlp-http, api, operator). */
  readonly name?: string;
  /** Connection cap and timeouts; the defaults when absent (the operator's port). */
  readonly limits?: ListenerLimits;
}

export interface Listener {
  readonly server: Server;
  /** The bound port (the chosen one when 0 was asked for). */
  readonly port: number;
  /** Stops accepting; resolves when in-flight requests have been answered and every connection is closed. */
  close(): Promise<void>;
}

/**
 * Keep-alive outlives the 60 s idle timeout of common load balancers, so
 * they close first. The headers and body timeouts come from ListenerLimits.
 */
export const keepAliveMs = 65_000;

/** Node checks the headers and request timeouts on a timer: often enough that a timeout is overshot by at most a quarter of it, at most a second. */
function checkingIntervalMs(limits: ListenerLimits): number {
  return Math.max(10, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4)));
}

/** How often close() looks for keep-alive connections that went idle after it began. */
const idleSweepMs = 50;

/** The path of a request target: cut at '?' when it is origin-form (as almost always), else parsed. */
export function requestPath(target: string): string {
  if (!target.startsWith('/')) return new URL(target, 'http://localhost').pathname;
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}

function answerOps(req: IncomingMessage, res: ServerResponse, path: string, options: ListenOptions): void {
  opsResponse(path, options.readiness, options.registry, options.limits?.metricsKey, req.headers.authorization)
    .then((ops) => {
      const reply = ops ?? { status: 404, contentType: 'text/plain; charset=utf-8', body: 'not found\n' };
      res.writeHead(reply.status, { 'content-type': reply.contentType, ...(reply.status === 401 ? { 'www-authenticate': 'Bearer' } : {}) }).end(reply.body);
    })
    .catch((error: unknown) => {
      // Only a failing metrics collector gets here.
      options.log.error('ops endpoint failed', { path, method: req.method, error: (error as Error).message });
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('internal error\n');
    });
}

/** Seconds a client is asked to wait before retrying a request that arrived while the process starts. */
export const startingRetryAfterSeconds = 1;

/** The answer to a data request that arrives before its component is set up: 503, retry shortly (as the API's error envelope). */
function answerStarting(res: ServerResponse): void {
  const body = JSON.stringify({ error: { code: 'unavailable', message: 'starting: not ready to serve yet, retry later' } });
  res.writeHead(503, { 'content-type': 'application/json', 'retry-after': String(startingRetryAfterSeconds) }).end(body);
}

/** Least time between two reclaims of idle connections at the cap. */
const reclaimIntervalMs = 250;

/**
 * At the cap Node closes a new connection as soon as it is accepted (before
 * any byte is read), so one port's flood cannot take the descriptors of the
 * others. Each time that happens the listener also reclaims the connections
 * that cost a client nothing to reopen: keep-alive ones between requests,
 * and those that have not sent a byte since they opened. Requests being
 * handled (or whose headers are arriving) are never cut, so the port
 * recovers at once instead of after the keep-alive or headers timeout.
 */
function capConnections(server: Server, name: string, limits: ListenerLimits, registry: Registry): void {
  const metrics = listenerMetrics(registry);
  server.maxConnections = connectionCap(limits.maxConnections);
  metrics.connections.set({ listener: name }, 0);
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    metrics.connections.inc({ listener: name });
    open.add(socket);
    socket.once('close', () => {
      metrics.connections.dec({ listener: name });
      open.delete(socket);
    });
  });
  let lastReclaim = Number.NEGATIVE_INFINITY;
  server.on('drop', () => {
    metrics.refused.inc({ listener: name });
    const now = performance.now();
    if (now - lastReclaim < reclaimIntervalMs) return;
    lastReclaim = now;
    server.closeIdleConnections();
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
  });
}

/** Listens on host:port; ops paths are answered here, the rest by `handler`. */
export async function listen(options: ListenOptions): Promise<Listener> {
  const { handler } = options;
  const limits = options.limits ?? defaultListenerLimits;
  const server = createServer(
    {
      keepAliveTimeout: keepAliveMs,
      // Headers slowloris: Node answers 408 and closes the connection, also one that never sent a byte.
      headersTimeout: limits.headersTimeoutMs,
      // A backstop for bodies no handler reads under its own deadline (the API's): 408 and close.
      requestTimeout: limits.headersTimeoutMs + limits.bodyTimeoutMs,
      connectionsCheckingInterval: checkingIntervalMs(limits),
    },
    (req, res) => {
      const path = requestPath(req.url ?? '/');
      if (handler !== undefined && !opsPaths.has(path)) {
        handler(req, res);
        return;
      }
      answerOps(req, res, path, options);
    },
  );
  capConnections(server, options.name ?? 'ops', limits, options.registry);
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
    close: () =>
      new Promise<void>((resolve) => {
        // close() drops only the connections idle at that moment; keep-alive ones become idle once answered.
        const sweep = setInterval(() => {
          server.closeIdleConnections();
        }, idleSweepMs);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

/** A port opened before its component is set up: the component attaches its handler when it starts. */
export interface EarlyListener extends Listener {
  /** Hands every non-ops request to `handler` from now on. */
  attach(handler: RequestListener): void;
}

/** Listens on host:port at once: ops paths are answered, every other request 503 with Retry-After until attach(). */
export async function listenEarly(options: Omit<ListenOptions, 'handler'>): Promise<EarlyListener> {
  let attached: RequestListener | undefined;
  const listener = await listen({
    ...options,
    handler: (req, res) => {
      if (attached === undefined) {
        // The body is not read; Node discards what still arrives, bounded by the listener's request timeout.
        answerStarting(res);
        return;
      }
      attached(req, res);
    },
  });
  return {
    ...listener,
    attach: (handler) => {
      attached = handler;
    },
  };
}
