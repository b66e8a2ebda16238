// OTLP/JSON (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding):
// proto3 JSON with lowerCamelCase names, except that trace and span ids are
// hex strings rather than base64. The ids are turned into bytes first, then
// the generated fromObject does the rest (int64 as string or number, enums as
// integers, unknown fields ignored). The one place that reports invalid JSON.
import type { SignalName } from '../../wire/otlp-messages.ts';

class InvalidJson extends Error {}

export type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

function hexToBytes(value: unknown, field: string): unknown {
  if (typeof value !== 'string') return value;
  if (value.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(value)) throw new InvalidJson(`${field} is not a hex string: ${JSON.stringify(value.slice(0, 40))}`);
  return Buffer.from(value, 'hex');
}

function convertIds(item: unknown, fields: readonly string[]): void {
  if (!isObject(item)) return;
  for (const field of fields) if (field in item) item[field] = hexToBytes(item[field], field);
}

/** Every place OTLP/JSON carries a hex id, per signal. */
function convertAllIds(signal: SignalName, root: Json): void {
  switch (signal) {
    case 'traces':
      for (const rs of list(root['resourceSpans'])) for (const ss of list(isObject(rs) ? rs['scopeSpans'] : undefined)) {
        for (const span of list(isObject(ss) ? ss['spans'] : undefined)) {
          convertIds(span, ['traceId', 'spanId', 'parentSpanId']);
          for (const link of list(isObject(span) ? span['links'] : undefined)) convertIds(link, ['traceId', 'spanId']);
        }
      }
      return;
    case 'logs':
      for (const rl of list(root['resourceLogs'])) for (const sl of list(isObject(rl) ? rl['scopeLogs'] : undefined)) {
        for (const record of list(isObject(sl) ? sl['logRecords'] : undefined)) convertIds(record, ['traceId', 'spanId']);
      }
      return;
    case 'metrics':
      for (const rm of list(root['resourceMetrics'])) for (const sm of list(isObject(rm) ? rm['scopeMetrics'] : undefined)) {
        for (const metric of list(isObject(sm) ? sm['metrics'] : undefined)) {
          if (!isObject(metric)) continue;
          for (const kind of ['gauge', 'sum', 'histogram', 'exponentialHistogram', 'summary']) {
            const data = metric[kind];
            for (const point of list(isObject(data) ? data['dataPoints'] : undefined)) {
              for (const exemplar of list(isObject(point) ? point['exemplars'] : undefined)) convertIds(exemplar, ['traceId', 'spanId']);
            }
          }
        }
      }
      return;
  }
}

export type JsonResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

/** Parses an OTLP/JSON request of `signal` into the message `fromObject` builds, or says why it is not one. */
export function readOtlpJson<T>(signal: SignalName, body: Buffer, fromObject: (root: Json) => T): JsonResult<T> {
  try {
    const root: unknown = JSON.parse(body.toString('utf8'));
    if (!isObject(root)) return { ok: false, message: 'invalid JSON: the request must be a JSON object' };
    convertAllIds(signal, root);
    return { ok: true, value: fromObject(root) };
  } catch (error) {
    // JSON.parse (SyntaxError), fromObject (TypeError on a wrong shape) and hex ids (InvalidJson) are bad input.
    return { ok: false, message: `invalid OTLP/JSON: ${(error as Error).message}` };
  }
}
