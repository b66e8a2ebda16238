// One decoder per wire format behind one interface: the HTTP and gRPC
// receivers hand over bytes and get a decoded request or a reason, so
// everything after decoding is shared.
import type { SignalName, SignalRequest } from './otlp-messages.ts';

export type DecodeResult = { readonly ok: true; readonly request: SignalRequest } | { readonly ok: false; readonly message: string };

export type WireFormat = 'protobuf' | 'json';

export interface OtlpDecoder {
  decode(signal: SignalName, body: Uint8Array): DecodeResult;
}
