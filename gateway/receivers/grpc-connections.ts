// The TCP side of the OTLP/gRPC port. grpc-js cannot cap connections, so we
// accept them ourselves and inject each into the grpc-js server: at the cap
// a new connection is closed on arrival (as on the HTTP ports) and those
// still silent are closed too; one that has not sent a byte (the HTTP/2
// preface) within the headers timeout is closed without ever becoming an
// HTTP/2 session. grpc-js's own keepalive and idle settings reap the rest.
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import * as http2 from 'node:http2';
import type { ServerHttp2Stream } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { connectionCap } from '../../src/ops/listener-limits.ts';
import type { ListenerLimits } from '../../src/ops/listener-limits.ts';
import { listenerMetrics } from '../../src/ops/listener-metrics.ts';

/**
 * Ends one call's HTTP/2 stream with RST_STREAM(NO_ERROR) once its status is
 * sent: RFC 9113 §8.1 lets a server that has answered ask the client to stop
 * sending that request. A slow client's other calls on the same connection
 * carry on (closing the connection would fail them all). grpc-js keeps the
 * stream in a private field of its base call, read here because no public API
 * resets one stream; without it the stream stays half-closed, its data
 * discarded, until the client ends it or the connection is recycled.
 */
export function resetStream(call: object): void {
  const stream: unknown = (call as { stream?: unknown }).stream;
  if (!isServerStream(stream) || stream.closed || stream.destroyed) return;
  stream.close(http2.constants.NGHTTP2_NO_ERROR);
}

function isServerStream(value: unknown): value is ServerHttp2Stream {
  return typeof value === 'object' && value !== null && typeof (value as { close?: unknown }).close === 'function' && 'rstCode' in value;
}

export interface GrpcConnections {
  readonly port: number;
  /** Stops accepting, closes connections still silent, and resolves once every injected one has closed. */
  close(): Promise<void>;
}

/** Accepts connections on host:port for `server`, within `limits`. */
export async function serveConnections(
  server: grpc.Server,
  host: string,
  port: number,
  limits: ListenerLimits,
  registry: Registry,
  name = 'otlp-grpc',
): Promise<GrpcConnections> {
  const metrics = listenerMetrics(registry);
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const silent = new Set<Socket>();
  const tcp = createServer((socket) => {
    metrics.connections.inc({ listener: name });
    socket.once('close', () => {
      metrics.connections.dec({ listener: name });
    });
    // Until HTTP/2 owns the socket, errors (a reset) are ours to swallow; close follows.
    socket.on('error', () => undefined);
    silent.add(socket);
    const timer = setTimeout(() => {
      socket.destroy();
    }, limits.headersTimeoutMs);
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
      const closed = new Promise<void>((resolve) => {
        tcp.close(() => {
          resolve();
        });
      });
      for (const socket of silent) socket.destroy();
      // Answers the calls in flight, then closes every session (the injected ones included).
      await new Promise<void>((resolve) => {
        server.tryShutdown(() => {
          resolve();
        });
      });
      await closed;
    },
  };
}
