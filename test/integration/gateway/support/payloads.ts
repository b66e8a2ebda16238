// Hand-built OTLP requests (for the cases the SDK never produces: missing or
// bad tenant ids, odd types) and a raw HTTP client for them.
import { gzipSync } from 'node:zlib';
import { ExportLogsServiceRequest, ExportMetricsServiceRequest, ExportTraceServiceRequest, RpcStatus } from '../../../../gateway/wire/otlp-messages.ts';
import { ExportTraceServiceResponse } from '../../../../gateway/wire/otlp-messages.ts';

type Attr = Record<string, string | number | boolean | { double: number }>;

export function kv(attrs: Attr): object[] {
  return Object.entries(attrs).map(([key, v]) => ({
    key,
    value:
      typeof v === 'string'
        ? { stringValue: v }
        : typeof v === 'boolean'
          ? { boolValue: v }
          : typeof v === 'number'
            ? { intValue: v }
            : { doubleValue: v.double },
  }));
}

let counter = 0;
/** A unique 16-byte trace id as hex. */
export function traceIdHex(): string {
  counter++;
  return (Date.now().toString(16) + counter.toString(16).padStart(8, '0')).padStart(32, 'a');
}

export interface SpanSpec {
  name: string;
  attrs?: Attr;
}

/** An ExportTraceServiceRequest object (OTLP/JSON shape with hex ids) of one resource. */
export function tracesJson(resource: Attr, spans: SpanSpec[], traceId = traceIdHex()): Record<string, unknown> {
  const now = BigInt(Date.now()) * 1_000_000n;
  return {
    resourceSpans: [
      {
        resource: { attributes: kv(resource) },
        scopeSpans: [
          {
            scope: { name: 'raw' },
            spans: spans.map((s, i) => ({
              traceId,
              spanId: (i + 1).toString(16).padStart(16, '0'),
              name: s.name,
              kind: 2,
              startTimeUnixNano: now.toString(),
              endTimeUnixNano: (now + 1_500_000n).toString(),
              attributes: kv(s.attrs ?? {}),
            })),
          },
        ],
      },
    ],
  };
}

/** Converts an OTLP/JSON traces object to protobuf bytes. */
export function tracesProtobuf(json: Record<string, unknown>): Buffer {
  const copy = structuredClone(json) as { resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[] };
  for (const rs of copy.resourceSpans)
    for (const ss of rs.scopeSpans)
      for (const s of ss.spans) {
        for (const f of ['traceId', 'spanId', 'parentSpanId']) if (typeof s[f] === 'string') s[f] = Buffer.from(s[f], 'hex');
      }
  return Buffer.from(ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(copy)).finish());
}

export function logsProtobuf(resource: Attr, records: { body: string; attrs?: Attr }[]): Buffer {
  const now = (BigInt(Date.now()) * 1_000_000n).toString();
  const message = ExportLogsServiceRequest.fromObject({
    resourceLogs: [
      {
        resource: { attributes: kv(resource) },
        scopeLogs: [{ logRecords: records.map((r) => ({ timeUnixNano: now, body: { stringValue: r.body }, attributes: kv(r.attrs ?? {}) })) }],
      },
    ],
  });
  return Buffer.from(ExportLogsServiceRequest.encode(message).finish());
}

export function metricsProtobuf(resource: Attr, points: Attr[]): Buffer {
  const now = (BigInt(Date.now()) * 1_000_000n).toString();
  const message = ExportMetricsServiceRequest.fromObject({
    resourceMetrics: [
      {
        resource: { attributes: kv(resource) },
        scopeMetrics: [{ metrics: [{ name: 'raw.gauge', gauge: { dataPoints: points.map((p) => ({ timeUnixNano: now, asDouble: 1, attributes: kv(p) })) } }] }],
      },
    ],
  });
  return Buffer.from(ExportMetricsServiceRequest.encode(message).finish());
}

export interface RawResponse {
  status: number;
  headers: Headers;
  body: Buffer;
}

/** POSTs a body to the gateway. */
export async function post(url: string, body: Uint8Array | string, headers: Record<string, string>): Promise<RawResponse> {
  const res = await fetch(url, { method: 'POST', body, headers });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

export const protobufHeaders = (key: string): Record<string, string> => ({ 'content-type': 'application/x-protobuf', authorization: `Bearer ${key}` });
export const jsonHeaders = (key: string): Record<string, string> => ({ 'content-type': 'application/json', authorization: `Bearer ${key}` });

/** The partial success of a protobuf trace response. */
export function tracePartialSuccess(body: Buffer): { rejected: number; message: string } {
  const decoded = ExportTraceServiceResponse.decode(body);
  return { rejected: Number(decoded.partialSuccess?.rejectedSpans ?? 0), message: decoded.partialSuccess?.errorMessage ?? '' };
}

/** A google.rpc.Status body in protobuf. */
export function statusOf(body: Buffer): { code: number; message: string; details: string[] } {
  const s = RpcStatus.decode(body);
  return { code: s.code, message: s.message, details: s.details.map((d) => d.type_url ?? '') };
}

export const gzip = (b: Uint8Array | string): Buffer => gzipSync(b);
