// Asks Tenantry's Tempo HTTP API (/tempo) and puts its answers in a
// canonical order, so an answer and the expected answer the conformance
// table derives from the corpus compare with one deep equality: traces by
// id, spans by id, attributes and values sorted.
import { opentelemetry } from '../../../../proto/gen/otlp.js';

export interface TempoEndpoint {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface Answer {
  readonly status: number;
  readonly type: string;
  readonly text: string;
  readonly bytes: Buffer;
  readonly body: unknown;
}

/** GET `path` with query parameters. */
export async function ask(
  endpoint: TempoEndpoint,
  path: string,
  params: Readonly<Record<string, string>> = {},
  headers: Readonly<Record<string, string>> = {},
): Promise<Answer> {
  const query = new URLSearchParams(params).toString();
  const response = await fetch(`${endpoint.url}${path}${query === '' ? '' : `?${query}`}`, { headers: { ...endpoint.headers, ...headers } });
  const bytes = Buffer.from(await response.arrayBuffer());
  const text = bytes.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, type: response.headers.get('content-type') ?? '', text, bytes, body };
}

type Json = Record<string, unknown>;
const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);
const byKey = (a: Json, b: Json): number => String(a['key']).localeCompare(String(b['key']));
const str = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

function span(s: Json): Json {
  const attributes = arr(s['attributes']).sort(byKey);
  return {
    spanID: s['spanID'],
    name: s['name'],
    startTimeUnixNano: s['startTimeUnixNano'],
    durationNanos: s['durationNanos'],
    ...(attributes.length === 0 ? {} : { attributes }),
  };
}

/** A search answer: traces sorted by id, each spanset's spans by id; `order` keeps the answer's order of traces. */
export function canonicalSearch(body: unknown, order = false): Json[] {
  const traces = arr((body as Json | undefined)?.['traces']).map((t) => ({
    traceID: t['traceID'],
    rootServiceName: t['rootServiceName'],
    rootTraceName: t['rootTraceName'],
    startTimeUnixNano: t['startTimeUnixNano'],
    durationMs: t['durationMs'],
    ...(t['spanSets'] === undefined
      ? {}
      : {
          spanSets: arr(t['spanSets']).map((set) => ({
            matched: set['matched'],
            spans: arr(set['spans'])
              .map(span)
              .sort((a, b) => str(a['spanID']).localeCompare(str(b['spanID']))),
          })),
        }),
  }));
  return order ? traces : traces.sort((a, b) => str(a.traceID).localeCompare(str(b.traceID)));
}

/** A tag-values answer, v1 (strings) or v2 (typed), sorted. */
export function canonicalValues(body: unknown): string[] {
  return arr((body as Json | undefined)?.['tagValues'])
    .map((v) => (typeof v === 'string' ? v : `${str(v['type'])}:${str(v['value'])}`))
    .sort();
}

/** A v2 tags answer as scope → sorted names. */
export function canonicalScopes(body: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const s of arr((body as Json | undefined)?.['scopes'])) out[str(s['name'])] = arr(s['tags']).map(str).sort();
  return out;
}

/** The OTLP span fields a trace answer is checked on (flags and dropped counts are left out). */
const spanFields = ['traceId', 'spanId', 'parentSpanId', 'name', 'kind', 'startTimeUnixNano', 'endTimeUnixNano', 'status'] as const;

/** A trace (OTLP JSON resource spans) as its spans sorted by id, each with its resource and scope. */
export function canonicalTrace(resourceSpans: unknown): Json[] {
  const spans: Json[] = [];
  for (const rs of arr(resourceSpans)) {
    const resource = arr((rs['resource'] as Json | undefined)?.['attributes']).sort(byKey);
    for (const ss of arr(rs['scopeSpans'])) {
      const scope = ss['scope'] as Json | undefined;
      for (const s of arr(ss['spans'])) {
        const picked: Json = {};
        for (const f of spanFields) if (s[f] !== undefined) picked[f] = s[f];
        spans.push({
          ...picked,
          attributes: arr(s['attributes']).sort(byKey),
          events: arr(s['events']),
          links: arr(s['links']),
          resource,
          scope: { name: scope?.['name'], version: scope?.['version'] },
        });
      }
    }
  }
  return spans.sort((a, b) => str(a['spanId']).localeCompare(str(b['spanId'])));
}

/** Protobuf bytes of the Trace message (v1) as OTLP JSON resource spans. */
export function decodeTraceV1(bytes: Uint8Array): unknown {
  const message = opentelemetry.proto.trace.v1.TracesData.decode(bytes);
  return opentelemetry.proto.trace.v1.TracesData.toObject(message, { longs: String, enums: String, bytes: String, defaults: false })['resourceSpans'];
}

/** Protobuf bytes of Tempo's TraceByIDResponse (v2): field 1 holds the Trace. */
export function decodeTraceV2(bytes: Uint8Array): unknown {
  // Field 1, wire type 2: the tag byte 0x0a, a varint length, then the Trace message.
  if (bytes[0] !== 0x0a) return [];
  let length = 0;
  let shift = 0;
  let at = 1;
  for (;;) {
    const b = bytes[at++] ?? 0;
    length += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) break;
  }
  return decodeTraceV1(bytes.subarray(at, at + length));
}
