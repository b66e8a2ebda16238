// OTLP binary protobuf: the generated decoders; any exception they raise
// means the bytes are not a valid message of that type.
import type { DecodeResult, OtlpDecoder } from './otlp-decoder.ts';
import { ExportLogsServiceRequest, ExportMetricsServiceRequest, ExportTraceServiceRequest } from './otlp-messages.ts';
import type { SignalName } from './otlp-messages.ts';

function decode(signal: SignalName, body: Uint8Array): DecodeResult {
  switch (signal) {
    case 'traces': return { ok: true, request: { signal, resourceSpans: ExportTraceServiceRequest.decode(body).resourceSpans } };
    case 'logs': return { ok: true, request: { signal, resourceLogs: ExportLogsServiceRequest.decode(body).resourceLogs } };
    case 'metrics': return { ok: true, request: { signal, resourceMetrics: ExportMetricsServiceRequest.decode(body).resourceMetrics } };
  }
}

/** Decodes application/x-protobuf and gRPC payloads. */
export const protobufDecoder: OtlpDecoder = {
  decode(signal, body) {
    try {
      return decode(signal, body);
    } catch (error) {
      // protobufjs throws plain Errors/RangeErrors for malformed input: that is the expected failure here.
      return { ok: false, message: `invalid protobuf: ${(error as Error).message}` };
    }
  },
};
