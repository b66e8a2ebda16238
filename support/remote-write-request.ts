// Prometheus remote write requests for tests and benchmarks, encoded by
// protobufjs from proto/prometheus/remote.proto (an encoder independent of
// the gateway's wire reader) and snappy-compressed as Prometheus sends them.
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { compressSync } from 'snappy';

const root = protobuf.loadSync(join(import.meta.dirname, '..', 'proto', 'prometheus', 'remote.proto'));
const writeRequest = root.lookupType('prometheus.WriteRequest');

export interface SampleSpec {
  readonly value: number;
  readonly timestampMs: number;
}
export interface SpanSpec {
  readonly offset: number;
  readonly length: number;
}
export interface HistogramSpec {
  readonly countInt?: number;
  readonly countFloat?: number;
  readonly sum: number;
  readonly schema: number;
  readonly zeroThreshold?: number;
  readonly zeroCountInt?: number;
  readonly zeroCountFloat?: number;
  readonly positiveSpans?: readonly SpanSpec[];
  readonly positiveDeltas?: readonly number[];
  readonly positiveCounts?: readonly number[];
  readonly negativeSpans?: readonly SpanSpec[];
  readonly negativeDeltas?: readonly number[];
  readonly negativeCounts?: readonly number[];
  readonly resetHint?: number;
  readonly timestampMs: number;
}
export interface SeriesSpec {
  /** Sent in this order (Prometheus sorts them; the gateway does not need it). */
  readonly labels: Readonly<Record<string, string>>;
  readonly samples?: readonly SampleSpec[];
  readonly histograms?: readonly HistogramSpec[];
  readonly exemplars?: readonly { readonly labels: Readonly<Record<string, string>>; readonly value: number; readonly timestampMs: number }[];
}
export interface MetadataSpec {
  readonly type: number;
  readonly family: string;
  readonly help: string;
  readonly unit: string;
}

/** MetricMetadata.MetricType numbers. */
export const metadataType = { unknown: 0, counter: 1, gauge: 2, histogram: 3, gaugehistogram: 4, summary: 5, info: 6, stateset: 7 } as const;

const labelList = (labels: Readonly<Record<string, string>>): { name: string; value: string }[] =>
  Object.entries(labels).map(([name, value]) => ({ name, value }));

/** An encoded (uncompressed) WriteRequest. */
export function encodeWriteRequest(series: readonly SeriesSpec[], metadata: readonly MetadataSpec[] = []): Buffer {
  const message = writeRequest.fromObject({
    timeseries: series.map((s) => ({
      labels: labelList(s.labels),
      samples: (s.samples ?? []).map((x) => ({ value: x.value, timestamp: x.timestampMs })),
      exemplars: (s.exemplars ?? []).map((e) => ({ labels: labelList(e.labels), value: e.value, timestamp: e.timestampMs })),
      histograms: (s.histograms ?? []).map((h) => ({ ...h, timestamp: h.timestampMs })),
    })),
    metadata: metadata.map((m) => ({ type: m.type, metricFamilyName: m.family, help: m.help, unit: m.unit })),
  });
  return Buffer.from(writeRequest.encode(message).finish());
}

/** Prometheus' stale marker, as its bits. */
export const staleNaNBits = 0x7ff0000000000002n;

/**
 * Replaces every little-endian occurrence of the double `sentinel` by the
 * stale marker's bits: JavaScript numbers need not keep a NaN's payload, so
 * the marker is written into the encoded bytes directly.
 */
export function withStaleMarkers(encoded: Buffer, sentinel: number): Buffer {
  const needle = Buffer.alloc(8);
  needle.writeDoubleLE(sentinel);
  const marker = Buffer.alloc(8);
  marker.writeBigUInt64LE(staleNaNBits);
  const out = Buffer.from(encoded);
  for (let at = out.indexOf(needle); at >= 0; at = out.indexOf(needle, at + 8)) marker.copy(out, at);
  return out;
}

/** A snappy block of `encoded`, as Prometheus sends it. */
export const snappyBlock = (encoded: Buffer): Buffer => compressSync(encoded);

/** The headers Prometheus sends, plus `extra` (auth, X-Scope-OrgID). */
export function remoteWriteHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0', ...extra };
}

/** HTTP Basic with `key` as the password, as Prometheus' basic_auth sends it. */
export const basicAuth = (key: string, user = 'prometheus'): string => `Basic ${Buffer.from(`${user}:${key}`).toString('base64')}`;

/** POSTs a body to `${url}/api/v1/push`. */
export async function pushRemoteWrite(
  url: string,
  body: Buffer,
  headers: Record<string, string>,
): Promise<{ status: number; text: string; retryAfter: string | null }> {
  const res = await fetch(`${url}/api/v1/push`, { method: 'POST', body, headers });
  return { status: res.status, text: await res.text(), retryAfter: res.headers.get('retry-after') };
}
