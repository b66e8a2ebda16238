// Export responses (with partial success) and google.rpc.Status error bodies,
// in protobuf or OTLP/JSON.
import type { Accepted } from '../ingest/outcome.ts';
import { ExportLogsServiceResponse, ExportMetricsServiceResponse, ExportTraceServiceResponse, RetryInfo, RpcStatus } from '../wire/otlp-messages.ts';
import type { SignalName, WireFormat } from '../wire/otlp-messages.ts';

const rejectedField: Readonly<Record<SignalName, string>> = { traces: 'rejectedSpans', logs: 'rejectedLogRecords', metrics: 'rejectedDataPoints' };

/** The Export*ServiceResponse for an accepted request; partial_success only when something was rejected. */
export function encodeExportResponse(signal: SignalName, format: WireFormat, outcome: Accepted): Uint8Array | string {
  const partial =
    outcome.rejected === 0 && outcome.errorMessage === '' ? undefined : { [rejectedField[signal]]: outcome.rejected, errorMessage: outcome.errorMessage };
  if (format === 'json') return JSON.stringify(partial === undefined ? {} : { partialSuccess: partial });
  const message = partial === undefined ? {} : { partialSuccess: partial };
  switch (signal) {
    case 'traces':
      return ExportTraceServiceResponse.encode(message).finish();
    case 'logs':
      return ExportLogsServiceResponse.encode(message).finish();
    case 'metrics':
      return ExportMetricsServiceResponse.encode(message).finish();
  }
}

export const retryInfoTypeUrl = 'type.googleapis.com/google.rpc.RetryInfo';

/** google.rpc.Status bytes; with RetryInfo when the client should come back after `retryAfterSeconds`. */
export function encodeStatusProtobuf(code: number, message: string, retryAfterSeconds?: number): Uint8Array {
  const details =
    retryAfterSeconds === undefined
      ? []
      : [{ type_url: retryInfoTypeUrl, value: RetryInfo.encode({ retryDelay: { seconds: retryAfterSeconds, nanos: 0 } }).finish() }];
  return RpcStatus.encode({ code, message, details }).finish();
}

/** google.rpc.Status in proto3 JSON. */
export function encodeStatusJson(code: number, message: string, retryAfterSeconds?: number): string {
  const details = retryAfterSeconds === undefined ? [] : [{ '@type': retryInfoTypeUrl, retryDelay: `${retryAfterSeconds}s` }];
  return JSON.stringify({ code, message, details });
}
