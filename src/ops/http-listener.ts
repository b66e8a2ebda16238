// Starts a node:http server on host:port and stops it gracefully: stop
// accepting, let in-flight requests finish, then close idle connections.
import { createServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listener {
  readonly server: Server;
  /** The bound port (the chosen one when 0 was asked for). */
  readonly port: number;
  /** Stops accepting; resolves when in-flight requests have been answered. */
  close(): Promise<void>;
}

export async function listen(handler: RequestListener, host: string, port: number): Promise<Listener> {
  const server = createServer({ keepAliveTimeout: 65_000 }, handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    server,
    port: bound,
    close: () => new Promise<void>((resolve) => {
      server.close(() => { resolve(); });
      server.closeIdleConnections();
    }),
  };
}
