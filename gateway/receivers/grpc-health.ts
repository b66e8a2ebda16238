// The standard gRPC health service (grpc.health.v1.Health) on the OTLP/gRPC
// port, for Kubernetes' gRPC probes and load balancers: SERVING while the
// process is ready, NOT_SERVING while it starts and once it drains. Its two
// messages are tiny, so they are encoded here by hand instead of generated.
import * as grpc from '@grpc/grpc-js';
import type { Readiness } from '../../src/ops/readiness.ts';

/** The service name probes ask for (`grpc.health.v1.Health`), and the paths of its two methods. */
export const healthServiceName = 'grpc.health.v1.Health';
export const healthCheckPath = `/${healthServiceName}/Check`;
export const healthWatchPath = `/${healthServiceName}/Watch`;

/**
 * The service a liveness probe asks for: SERVING whenever the process
 * answers, also while it starts, drains or waits for storage (restarting it
 * then would not help), as /healthz on the HTTP ports.
 */
export const livenessService = 'liveness';

/** HealthCheckResponse.ServingStatus. */
export const servingStatus = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;
type ServingStatus = (typeof servingStatus)[keyof typeof servingStatus];

/** The field `service` (1, a string) of a HealthCheckRequest; undefined when the bytes are not one. */
export function requestedService(bytes: Buffer): string | undefined {
  let service = '';
  let at = 0;
  const varint = (): number | undefined => {
    let value = 0;
    for (let shift = 0; shift < 35 && at < bytes.length; shift += 7) {
      const byte = bytes[at++] ?? 0;
      value += (byte & 0x7f) * 2 ** shift;
      if (byte < 0x80) return value;
    }
    return undefined;
  };
  while (at < bytes.length) {
    const key = varint();
    if (key === undefined || key >>> 3 === 0) return undefined;
    const wire = key & 7;
    if (wire === 0) {
      if (varint() === undefined) return undefined;
    } else if (wire === 1 || wire === 5) {
      at += wire === 1 ? 8 : 4;
    } else if (wire === 2) {
      const length = varint();
      if (length === undefined || at + length > bytes.length) return undefined;
      if (key >>> 3 === 1) service = bytes.toString('utf8', at, at + length);
      at += length;
    } else {
      return undefined;
    }
  }
  return at === bytes.length ? service : undefined;
}

/** A HealthCheckResponse: field 1, the status as a varint (every status is below 128). */
export function encodeHealthResponse(status: ServingStatus): Buffer {
  return Buffer.from([0x08, status]);
}

const raw = {
  requestSerialize: (b: Buffer): Buffer => b,
  requestDeserialize: (b: Buffer): Buffer => b,
  responseSerialize: (b: Buffer): Buffer => b,
  responseDeserialize: (b: Buffer): Buffer => b,
} as const;

const definition = {
  Check: { path: healthCheckPath, originalName: 'check', requestStream: false, responseStream: false, ...raw },
  Watch: { path: healthWatchPath, originalName: 'watch', requestStream: false, responseStream: true, ...raw },
} satisfies grpc.ServiceDefinition;

/** Adds the health service to `server`: `services` (and "", the whole server) follow `readiness`, `liveness` is always SERVING; any other name is unknown. */
export function addHealthService(server: grpc.Server, readiness: Readiness, services: readonly string[]): void {
  const known = new Set(['', livenessService, ...services]);
  const current = (service: string): ServingStatus => {
    if (!known.has(service)) return servingStatus.SERVICE_UNKNOWN;
    if (service === livenessService) return servingStatus.SERVING;
    return readiness.isReady() ? servingStatus.SERVING : servingStatus.NOT_SERVING;
  };
  const check: grpc.handleUnaryCall<Buffer, Buffer> = (call, callback) => {
    const service = requestedService(call.request);
    if (service === undefined) callback({ code: grpc.status.INVALID_ARGUMENT, details: 'not a grpc.health.v1.HealthCheckRequest' });
    else if (!known.has(service)) callback({ code: grpc.status.NOT_FOUND, details: `unknown service "${service}"` });
    else callback(null, encodeHealthResponse(current(service)));
  };
  // The current status at once, then each change; an unknown service is reported and watched too, as the protocol asks.
  const watch: grpc.handleServerStreamingCall<Buffer, Buffer> = (call) => {
    const service = requestedService(call.request);
    if (service === undefined) {
      call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'not a grpc.health.v1.HealthCheckRequest' });
      return;
    }
    let sent: ServingStatus | undefined;
    const send = (): void => {
      const status = current(service);
      if (status !== sent) call.write(encodeHealthResponse(status));
      sent = status;
      // Draining ends the stream after NOT_SERVING: the server's shutdown waits for open calls, and a watch never ends by itself.
      if (readiness.shuttingDown) {
        stop();
        call.end();
      }
    };
    const stop = readiness.onChange(send);
    call.on('cancelled', stop);
    send();
  };
  server.addService(definition, { Check: check, Watch: watch });
}
