// bench:grafana's traces phase: the same OTLP/protobuf span bodies (traces
// of 10 spans, tenants round robin) go to Tenantry and to the real Tempo;
// then Explore's typical trace calls are timed on both, one after the
// other: a TraceQL search (service and status, last 15 minutes, limit 20)
// and a trace by id (/api/v2/traces/:id, Accept: application/protobuf, with
// start/end, as Grafana asks). Also the trace index measured in-process:
// the same lookups before migration 8 (bloom filter over the window) and
// after (the index's time range), over one tenant holding every span.
import { randomBytes } from 'node:crypto';
import { opentelemetry } from '../../proto/gen/otlp.js';
import { traceSql } from '../../api/compat/tempo/trace-by-id.ts';
import type { Store } from '../../src/clickhouse/store.ts';
import type { TimeRange } from '../../api/v1/query/time-range.ts';
import { post } from '../peers/load.ts';
import type { Ingest } from '../peers/load.ts';
import type { Request } from '../peers/payloads.ts';

const { ExportTraceServiceRequest } = opentelemetry.proto.collector.trace.v1;

export const spansPerTrace = 10;
export const spansPerRequest = 1000;
const services = 7;

export interface TracesTarget {
  readonly name: 'tenantry' | 'tempo';
  /** OTLP/HTTP traces URL. */
  readonly otlpUrl: string;
  /** Base URL of the Tempo API (Tenantry: <api>/tempo). */
  readonly apiUrl: string;
  /** Headers selecting tenant `t` (and authenticating). */
  headers(tenant: string): Record<string, string>;
}

/** What the load left to query: per request its tenant, number and one trace id. */
export interface LoadedTraces {
  readonly requests: { readonly tenant: string; readonly seq: number; readonly traceId: string }[];
  readonly seconds: number;
  readonly startSec: number;
  readonly endSec: number;
}

const kv = (key: string, value: string | number): object => ({ key, value: typeof value === 'string' ? { stringValue: value } : { intValue: value } });

/** One request body: 100 traces of 10 spans of `tenant`, ending within the last few minutes. */
function traceBody(tenant: string, seq: number): { body: Buffer; traceIds: string[] } {
  const now = BigInt(Date.now()) * 1_000_000n;
  const traceIds: string[] = [];
  const spans = [];
  for (let t = 0; t < spansPerRequest / spansPerTrace; t++) {
    const traceId = randomBytes(16);
    traceId[0] = (traceId[0] ?? 0) | 0x10;
    traceIds.push(traceId.toString('hex'));
    const spanIds = Array.from({ length: spansPerTrace }, () => randomBytes(8));
    const start = now - BigInt((seq * 37 + t * 11) % 120_000) * 1_000_000n;
    for (let s = 0; s < spansPerTrace; s++) {
      const duration = BigInt(1 + ((seq + t * 7 + s * 3) % 500)) * 1_000_000n;
      spans.push({
        traceId, spanId: spanIds[s], parentSpanId: s === 0 ? new Uint8Array() : spanIds[0],
        name: s === 0 ? `GET /api/v1/item/${t % 20}` : `SELECT items_${s}`, kind: s === 0 ? 2 : 3,
        startTimeUnixNano: (start + BigInt(s) * 100_000n).toString(), endTimeUnixNano: (start + BigInt(s) * 100_000n + duration).toString(),
        attributes: s === 0 ? [kv('http.method', 'GET'), kv('http.status_code', t % 10 === 0 ? 500 : 200), kv('bench.request', seq)] : [kv('db.system', 'postgresql')],
        status: { code: s === 0 && t % 10 === 0 ? 2 : 1 },
      });
    }
  }
  const resource = { attributes: [kv('service.name', `svc-${seq % services}`), kv('tenant.id', tenant), kv('k8s.namespace.name', 'shop')] };
  const message = ExportTraceServiceRequest.fromObject({ resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 'bench' }, spans }] }] });
  return { body: Buffer.from(ExportTraceServiceRequest.encode(message).finish()), traceIds };
}

/** Sends `spans` spans over `tenants` tenants to every target with `clients` concurrent clients; each body goes to all targets. */
export async function loadTraces(targets: readonly TracesTarget[], spans: number, tenants: number, clients = 4): Promise<LoadedTraces> {
  const total = Math.max(1, Math.round(spans / spansPerRequest));
  const requests: LoadedTraces['requests'] = [];
  const started = performance.now();
  const startSec = Math.floor(Date.now() / 1000) - 180;
  let next = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < total) {
      const seq = next++;
      const tenant = `tenant-${seq % tenants}`;
      const { body, traceIds } = traceBody(tenant, seq);
      const request: Request = { signal: 'traces', seq, tenant, service: `svc-${seq % services}`, body, traceIds };
      for (const target of targets) {
        const ingest: Ingest = { system: target.name, signal: 'traces', url: target.otlpUrl, headers: () => target.headers(tenant) };
        // A refused request is retried after a pause (rate limits); the body is the same.
        for (let attempt = 0; attempt < 20; attempt++) {
          const ack = await post(ingest, request);
          if (ack.status >= 200 && ack.status < 300) break;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
      requests.push({ tenant, seq, traceId: traceIds[0] ?? '' });
    }
  }));
  return { requests, seconds: (performance.now() - started) / 1000, startSec, endSec: Math.ceil(Date.now() / 1000) + 60 };
}

async function get(url: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { headers });
  return { status: response.status, text: await response.text() };
}

/** Waits until a target's search finds the last request's traces (bounded poll: neither system reports when a trace becomes searchable). */
export async function waitSearchable(target: TracesTarget, loaded: LoadedTraces, timeoutMs = 300_000): Promise<boolean> {
  const last = loaded.requests.reduce((a, b) => (b.seq > a.seq ? b : a));
  const q = encodeURIComponent(`{ span.bench.request = ${last.seq} }`);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = await get(`${target.apiUrl}/api/search?q=${q}&limit=1&start=${loaded.startSec}&end=${loaded.endSec}`, target.headers(last.tenant));
    if (r.status === 200 && r.text.includes('"traceID"')) return true;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return false;
}

export interface Timing { readonly call: string; readonly system: string; readonly p50: number; readonly p95: number; readonly n: number; readonly failures: number }

function percentiles(call: string, system: string, ms: number[], failures: number): Timing {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number): number => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;
  return { call, system, p50: at(0.5), p95: at(0.95), n: ms.length, failures };
}

/** Times Explore's two trace calls on each target, `n` of each, the targets taking turns per call. */
export async function timeTraceCalls(targets: readonly TracesTarget[], loaded: LoadedTraces, n: number): Promise<Timing[]> {
  const picks = Array.from({ length: n }, (_, i) => loaded.requests[Math.floor((i * 7919) % loaded.requests.length)]).filter((r) => r !== undefined);
  const calls: { name: string; url: (t: TracesTarget, r: (typeof picks)[number]) => string; accept?: string; ok: (text: string) => boolean }[] = [
    {
      name: 'TraceQL search { service && status = error }',
      url: (t, r) => `${t.apiUrl}/api/search?q=${encodeURIComponent(`{ resource.service.name = "svc-${r.seq % services}" && status = error }`)}&limit=20&spss=3&start=${loaded.startSec}&end=${loaded.endSec}`,
      ok: (text) => text.includes('"traces"'),
    },
    {
      name: 'trace by id (v2, protobuf)',
      url: (t, r) => `${t.apiUrl}/api/v2/traces/${r.traceId}?start=${loaded.startSec}&end=${loaded.endSec}`,
      accept: 'application/protobuf',
      ok: (text) => text.length > 100,
    },
  ];
  const out: Timing[] = [];
  for (const call of calls) {
    const ms = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const failures = new Map<string, number>(targets.map((t) => [t.name, 0]));
    for (const r of picks) {
      for (const t of targets) {
        const started = performance.now();
        const answer = await get(call.url(t, r), { ...t.headers(r.tenant), ...(call.accept === undefined ? {} : { accept: call.accept }) });
        const took = performance.now() - started;
        if (answer.status === 200 && call.ok(answer.text)) ms.get(t.name)?.push(took);
        else failures.set(t.name, (failures.get(t.name) ?? 0) + 1);
      }
    }
    for (const t of targets) out.push(percentiles(call.name, t.name, ms.get(t.name) ?? [], failures.get(t.name) ?? 0));
  }
  return out;
}

/**
 * Trace by id before and after migration 8, in one embedded store: `spans`
 * synthetic spans of one tenant over 24 hours (the worst case: one tenant's
 * window holds every granule), then `n` lookups each way. Before: the
 * bloom filter on trace_id over a 30-day window; after: traceSql (the
 * index's time range first). Beside them the least a lookup costs in this
 * store: the spans of a trace whose time range is already known, and
 * `SELECT 1`.
 */
export async function traceIndexComparison(store: Store, spans: number, n: number): Promise<{ insertSeconds: number; before: Timing; after: Timing; floor: Timing; nothing: Timing }> {
  const db = store.database;
  const started = performance.now();
  const perTrace = 5;
  await store.client.command({
    query: `INSERT INTO ${db}.spans (tenant_id, timestamp, trace_id, span_id, parent_span_id, span_name, service_name, duration_ns, span_attributes, resource_attributes)
      SELECT 'big', now64(9) - toIntervalSecond(86400) + toIntervalMillisecond(intDiv(number, ${perTrace}) * ${Math.max(1, Math.floor(86_400_000 / (spans / perTrace)))}),
        lower(hex(MD5(toString(intDiv(number, ${perTrace}))))), lower(hex(substring(MD5(toString(number)), 1, 8))), if(number % ${perTrace} = 0, '', 'aaaaaaaaaaaaaaaa'),
        concat('op-', toString(number % 20)), 'svc', 1000000 + number % 1000, map('http.method', 'GET'), map('service.name', 'svc')
      FROM numbers(${spans})`,
  });
  const insertSeconds = (performance.now() - started) / 1000;
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const rs = await store.client.query({ query: `SELECT lower(hex(MD5(toString(${Math.floor(((i * 104729) % (spans / perTrace)))})))) AS id`, format: 'JSONEachRow' });
    ids.push(((await rs.json<{ id: string }>())[0])?.id ?? '');
  }
  const nowNs = BigInt(Date.now()) * 1_000_000n;
  const range = { startNs: nowNs - 30n * 86_400_000_000_000n, endNs: nowNs + 86_400_000_000_000n };
  const time = async (sql: (id: string) => { sql: string; params: Record<string, unknown> }): Promise<number[]> => {
    const ms: number[] = [];
    for (const id of ids) {
      const q = sql(id);
      const t0 = performance.now();
      const rs = await store.client.query({ query: q.sql, query_params: q.params, format: 'JSONEachRow' });
      const rows = await rs.json();
      ms.push(performance.now() - t0);
      if (rows.length !== perTrace) throw new Error(`trace ${id}: ${rows.length} spans, expected ${perTrace}`);
    }
    return ms;
  };
  const before = await time((id) => { const q = traceSql(store, 'big', id, range, false); return { sql: q.sql, params: q.params.values }; });
  const after = await time((id) => { const q = traceSql(store, 'big', id, range); return { sql: q.sql, params: q.params.values }; });
  // The least a lookup costs here: the spans of a trace whose time range is already known (no index read, the
  // window that narrow), and a statement that reads nothing. Each trace's range is read first, untimed.
  const known = new Map<string, TimeRange>();
  for (const id of ids) {
    const rs = await store.client.query({
      query: `SELECT toString(toUnixTimestamp64Nano(min(first_seen))) AS first, toString(toUnixTimestamp64Nano(max(last_seen))) AS last FROM ${db}.trace_index WHERE tenant_id = 'big' AND trace_id = {id:String}`,
      query_params: { id }, format: 'JSONEachRow',
    });
    const [bounds] = await rs.json<{ first: string; last: string }>();
    if (bounds !== undefined) known.set(id, { startNs: BigInt(bounds.first), endNs: BigInt(bounds.last) });
  }
  const floor = await time((id) => { const q = traceSql(store, 'big', id, known.get(id) ?? range, false); return { sql: q.sql, params: q.params.values }; });
  const nothing: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    const t0 = performance.now();
    await (await store.client.query({ query: 'SELECT 1', format: 'JSONEachRow' })).json();
    nothing.push(performance.now() - t0);
  }
  return {
    insertSeconds,
    before: percentiles('trace by id, 1 tenant', 'before (bloom filter)', before, 0),
    after: percentiles('trace by id, 1 tenant', 'after (trace_index)', after, 0),
    floor: percentiles('trace by id, 1 tenant', 'range known (no index)', floor, 0),
    nothing: percentiles('SELECT 1', 'the same store', nothing, 0),
  };
}
