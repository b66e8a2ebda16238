// A gRPC health client (grpc.health.v1.Health) on @grpc/grpc-js, as a
// Kubernetes gRPC probe or a load balancer asks. Its messages are encoded
// here independently of the server's code: HealthCheckRequest { string
// service = 1; }, HealthCheckResponse { ServingStatus status = 1; }.
import * as grpc from '@grpc/grpc-js';

export const statusNames = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'] as const;
export type StatusName = (typeof statusNames)[number];

function request(service: string): Buffer {
  const name = Buffer.from(service, 'utf8');
  return name.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a, name.length]), name]);
}

function statusOf(response: Buffer): StatusName {
  // An absent field is the default, UNKNOWN.
  if (response.length === 0) return 'UNKNOWN';
  if (response[0] !== 0x08 || response.length !== 2) throw new Error(`not a HealthCheckResponse: ${response.toString('hex')}`);
  return statusNames[response[1] ?? 0] ?? 'UNKNOWN';
}

/** Check: the serving status, or the gRPC error code when the call failed. */
export function healthCheck(address: string, service = ''): Promise<StatusName | grpc.status> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      '/grpc.health.v1.Health/Check',
      (b: Buffer) => b,
      (b: Buffer) => b,
      request(service),
      new grpc.Metadata(),
      { deadline: Date.now() + 10_000 },
      (error, value) => {
        client.close();
        resolve(error === null ? statusOf(value ?? Buffer.alloc(0)) : error.code);
      },
    );
  });
}

export interface HealthWatch {
  /** Resolves with the next status the server sends (each once), or rejects when the stream ends first. */
  next(): Promise<StatusName>;
  /** Resolves with the call's final status code when the server ends the stream. */
  readonly ended: Promise<grpc.status>;
  cancel(): void;
}

/** Watch: the statuses the server streams, one by one. */
export function healthWatch(address: string, service = ''): HealthWatch {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const call = client.makeServerStreamRequest(
    '/grpc.health.v1.Health/Watch',
    (b: Buffer) => b,
    (b: Buffer) => b,
    request(service),
    new grpc.Metadata(),
  );
  const received: StatusName[] = [];
  const waiting: { resolve: (s: StatusName) => void; reject: (e: Error) => void }[] = [];
  let done = false;
  call.on('data', (b: Buffer) => {
    const status = statusOf(b);
    const waiter = waiting.shift();
    if (waiter === undefined) received.push(status);
    else waiter.resolve(status);
  });
  const ended = new Promise<grpc.status>((resolve) => {
    call.on('error', (error: grpc.ServiceError) => {
      resolve(error.code);
    });
    call.on('status', (status: grpc.StatusObject) => {
      resolve(status.code);
    });
  });
  void ended.then(() => {
    done = true;
    client.close();
    for (const w of waiting.splice(0)) w.reject(new Error('the watch ended'));
  });
  return {
    next: () => {
      const first = received.shift();
      if (first !== undefined) return Promise.resolve(first);
      if (done) return Promise.reject(new Error('the watch ended'));
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
      });
    },
    ended,
    cancel: () => {
      call.cancel();
    },
  };
}
