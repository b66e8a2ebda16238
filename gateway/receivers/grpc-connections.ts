// The TCP side of the OTLP/gRPC port. grpc-js cannot cap connections, so we
// accept them ourselves and inject each into the grpc-js server: at the cap
// a new connection is closed on arrival (as on the HTTP ports) and those
// still silent are closed too; one that has not sent a byte (the HTTP/2
// preface) within the headers timeout is closed without ever becoming an
// HTTP/2 session. grpc-js's own keepalive and idle settings reap the rest.
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { connectionCap } from '../../src/ops/listener-limits.ts';
import type { ListenerLimits } from '../../src/ops/listener-limits.ts';
import { listenerMetrics } from '../../src/ops/listener-metrics.ts';

/**
 * The open connections by peer address, so a call that proved its client too
 * slow can close that client's connection (grpc-js lets a call end its
 * stream, but a raw HTTP/2 client may keep sending on it).
 */
export class PeerConnections {
  readonly #sockets = new Map<string, Socket>();

  /** Tracks `socket` until it closes. */
  add(socket: Socket): void {
    const key = `${socket.remoteAddress ?? ''}:${socket.remotePort ?? 0}`;
    this.#sockets.set(key, socket);
    socket.once('close', () => { this.#sockets.delete(key); });
  }

  /** Closes the connection of a peer after `graceMs`, time for the call's status to reach it. */
  closeLater(peer: { readonly remoteAddress?: string | undefined; readonly remotePort?: number | undefined }, graceMs: number): void {
    const socket = this.#sockets.get(`${peer.remoteAddress ?? ''}:${peer.remotePort ?? 0}`);
    if (socket === undefined) return;
    setTimeout(() => { socket.destroy(); }, graceMs).unref();
  }
}

export interface GrpcConnections {
  readonly port: number;
  /** Stops accepting, closes connections still silent, and resolves once every injected one has closed. */
  close(): Promise<void>;
}

/** Accepts connections on host:port for `server`, within `limits`. */
export async function serveConnections(server: grpc.Server, peers: PeerConnections, host: string, port: number, limits: ListenerLimits, registry: Registry, name = 'otlp-grpc'): Promise<GrpcConnections> {
  const metrics = listenerMetrics(registry);
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const silent = new Set<Socket>();
  const tcp = createServer((socket) => {
    metrics.connections.inc({ listener: name });
    socket.once('close', () => { metrics.connections.dec({ listener: name }); });
    // Until HTTP/2 owns the socket, errors (a reset) are ours to swallow; close follows.
    socket.on('error', () => undefined);
    peers.add(socket);
    silent.add(socket);
    const timer = setTimeout(() => { socket.destroy(); }, limits.headersTimeoutMs);
    socket.once('close', () => {
      clearTimeout(timer);
      silent.delete(socket);
    });
    // The first bytes stay buffered in the socket; HTTP/2 reads them when it takes the socket over.
    socket.once('readable', () => {
      clearTimeout(timer);
      silent.delete(socket);
      injector.injectConnection(socket);
    });
  });
  tcp.maxConnections = connectionCap(limits.maxConnections);
  metrics.connections.set({ listener: name }, 0);
  tcp.on('drop', () => {
    metrics.refused.inc({ listener: name });
    // As on the HTTP ports, the cap reclaims connections that have not started: those still silent.
    for (const socket of silent) socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(port, host, () => {
      tcp.off('error', reject);
      resolve();
    });
  });
  return {
    port: (tcp.address() as AddressInfo).port,
    close: async () => {
      const closed = new Promise<void>((resolve) => { tcp.close(() => { resolve(); }); });
      for (const socket of silent) socket.destroy();
      // Answers the calls in flight, then closes every session (the injected ones included).
      await new Promise<void>((resolve) => { server.tryShutdown(() => { resolve(); }); });
      await closed;
    },
  };
}
