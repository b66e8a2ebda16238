// OTLP binary protobuf: the generated decoders; any exception they raise
// means the bytes are not a valid message of that type.
import type { DecodeResult, OtlpDecoder } from './otlp-decoder.ts';
import { ExportLogsServiceRequest, ExportMetricsServiceRequest, ExportTraceServiceRequest } from './otlp-messages.ts';
import type { SignalName } from './otlp-messages.ts';

function decode(signal: SignalName, body: Uint8Array): DecodeResult {
  switch (signal) {
    case 'traces': return { ok: true, request: { signal, form: 'messages', resourceSpans: ExportTraceServiceRequest.decode(body).resourceSpans } };
    case 'logs': return { ok: true, request: { signal, form: 'messages', resourceLogs: ExportLogsServiceRequest.decode(body).resourceLogs } };
    case 'metrics': return { ok: true, request: { signal, form: 'messages', resourceMetrics: ExportMetricsServiceRequest.decode(body).resourceMetrics } };
  }
}

const asBuffer = (b: Uint8Array): Buffer => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));

/**
 * Protobuf traces and logs stay encoded: the direct converters read them
 * (and report malformed bytes). Metrics are decoded into messages.
 */
export const protobufDirectDecoder: OtlpDecoder = {
  decode(signal, body) {
    switch (signal) {
      case 'traces': return { ok: true, request: { signal, form: 'protobuf', body: asBuffer(body) } };
      case 'logs': return { ok: true, request: { signal, form: 'protobuf', body: asBuffer(body) } };
      case 'metrics': return protobufDecoder.decode(signal, body);
    }
  },
};

/** Decodes application/x-protobuf and gRPC payloads into messages. */
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
