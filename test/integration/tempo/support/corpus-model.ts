// What the trace corpus holds, read from the spans the OTel SDK made (not
// from Tenantry): the conformance table derives every expected answer from
// this model with the documented rule of its row. Values keep the types the
// OTLP exporter sends them with (a JS integer is an intValue, another number
// a doubleValue), which are the types TraceQL compares.
import type { AttributeValue } from '@opentelemetry/api';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';

export type Kind = 'unspecified' | 'internal' | 'server' | 'client' | 'producer' | 'consumer';
export type Status = 'unset' | 'ok' | 'error';
export type Scalar = string | number | boolean;

export interface ModelSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string | undefined;
  readonly name: string;
  readonly kind: Kind;
  readonly status: Status;
  readonly statusMessage: string;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly durationNs: bigint;
  readonly attributes: Readonly<Record<string, Scalar>>;
  readonly resource: Readonly<Record<string, Scalar>>;
  readonly scope: { readonly name: string; readonly version: string };
  /** The trace this span belongs to. */
  readonly trace: ModelTrace;
}

export interface ModelTrace {
  readonly traceId: string;
  readonly spans: ModelSpan[];
  readonly root: ModelSpan | undefined;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly durationNs: bigint;
}

const kinds: Readonly<Record<number, Kind>> = {
  [SpanKind.INTERNAL]: 'internal',
  [SpanKind.SERVER]: 'server',
  [SpanKind.CLIENT]: 'client',
  [SpanKind.PRODUCER]: 'producer',
  [SpanKind.CONSUMER]: 'consumer',
};
const statuses: Readonly<Record<number, Status>> = { [SpanStatusCode.UNSET]: 'unset', [SpanStatusCode.OK]: 'ok', [SpanStatusCode.ERROR]: 'error' };

const ns = (hr: readonly [number, number]): bigint => BigInt(hr[0]) * 1_000_000_000n + BigInt(hr[1]);

function scalars(attributes: Readonly<Record<string, AttributeValue | undefined>>): Record<string, Scalar> {
  const out: Record<string, Scalar> = {};
  for (const [k, v] of Object.entries(attributes)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  return out;
}

/** The corpus's traces in order of first appearance, each with its spans, root and extent. */
export function corpusModel(spans: readonly ReadableSpan[]): ModelTrace[] {
  const traces = new Map<string, { traceId: string; spans: ModelSpan[] }>();
  for (const s of spans) {
    const traceId = s.spanContext().traceId;
    let t = traces.get(traceId);
    if (t === undefined) {
      t = { traceId, spans: [] };
      traces.set(traceId, t);
    }
    const holder = t;
    const startNs = ns(s.startTime);
    const endNs = ns(s.endTime);
    holder.spans.push({
      traceId,
      spanId: s.spanContext().spanId,
      parentSpanId: s.parentSpanContext?.spanId,
      name: s.name,
      kind: kinds[s.kind] ?? 'unspecified',
      status: statuses[s.status.code] ?? 'unset',
      statusMessage: s.status.message ?? '',
      startNs,
      endNs,
      durationNs: endNs - startNs,
      attributes: scalars(s.attributes),
      resource: scalars(s.resource.attributes),
      scope: { name: s.instrumentationScope.name, version: s.instrumentationScope.version ?? '' },
      get trace(): ModelTrace {
        return built.get(traceId) as ModelTrace;
      },
    });
  }
  const built = new Map<string, ModelTrace>();
  for (const t of traces.values()) {
    const startNs = t.spans.reduce((m, s) => (s.startNs < m ? s.startNs : m), t.spans[0]?.startNs ?? 0n);
    const endNs = t.spans.reduce((m, s) => (s.endNs > m ? s.endNs : m), 0n);
    built.set(t.traceId, {
      traceId: t.traceId,
      spans: t.spans,
      root: t.spans.find((s) => s.parentSpanId === undefined),
      startNs,
      endNs,
      durationNs: endNs - startNs,
    });
  }
  return [...built.values()];
}

/** Every span of the corpus. */
export const allSpans = (traces: readonly ModelTrace[]): ModelSpan[] => traces.flatMap((t) => t.spans);

/** A value as OTLP types it ({"intValue": "3"} for integers, as OTLP JSON writes 64-bit integers). */
export function otlpValue(v: Scalar): Record<string, unknown> {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
}

/** A value as the v2 tag-values endpoint types it: `type:value`. */
export function typedTag(v: Scalar): string {
  if (typeof v === 'string') return `string:${v}`;
  if (typeof v === 'boolean') return `bool:${String(v)}`;
  return `${Number.isInteger(v) ? 'int' : 'float'}:${String(v)}`;
}

/** TraceQL's typed comparisons: each reads a value of its own type only (no conversions). */
export const asString = (v: Scalar | undefined): string | undefined => (typeof v === 'string' ? v : undefined);
export const asInt = (v: Scalar | undefined): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);
export const asFloat = (v: Scalar | undefined): number | undefined => (typeof v === 'number' && !Number.isInteger(v) ? v : undefined);
export const asBool = (v: Scalar | undefined): boolean | undefined => (typeof v === 'boolean' ? v : undefined);

/** A regular expression anchored at both ends, as TraceQL's =~ and !~ match. */
export const anchored = (pattern: string): RegExp => new RegExp(`^(?:${pattern})$`);

/** Milliseconds as ns. */
export const ms = (n: number): bigint => BigInt(n) * 1_000_000n;
