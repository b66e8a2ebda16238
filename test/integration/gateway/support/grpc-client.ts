// A raw OTLP/gRPC client (bytes in, bytes out) for status-code tests; the
// official exporters hide codes behind retries and logs.
import * as grpc from '@grpc/grpc-js';

export const tracePath = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
export const logsPath = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';

export interface GrpcReply {
  code: grpc.status;
  details: string;
  body: Buffer | undefined;
  trailers: grpc.Metadata | undefined;
}

/** One unary Export on a channel the caller keeps (and closes): its status, details, answer and trailers. */
export function exportOn(client: grpc.Client, path: string, body: Buffer, key: string | undefined): Promise<GrpcReply> {
  const metadata = new grpc.Metadata();
  if (key !== undefined) metadata.set('authorization', `Bearer ${key}`);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      metadata,
      (error, value) => {
        if (error === null) resolve({ code: grpc.status.OK, details: '', body: value, trailers: undefined });
        else resolve({ code: error.code, details: error.details, body: undefined, trailers: error.metadata });
      },
    );
  });
}

/** One unary Export on a channel of its own. */
export async function grpcExport(url: string, path: string, body: Buffer, key: string | undefined, options: grpc.ClientOptions = {}): Promise<GrpcReply> {
  const client = new grpc.Client(url.replace(/^http:\/\//, ''), grpc.credentials.createInsecure(), options);
  try {
    return await exportOn(client, path, body, key);
  } finally {
    client.close();
  }
}
