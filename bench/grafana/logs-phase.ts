// bench:grafana's logs phase (bench/grafana.ts calls runLogsPhase): the same
// OTLP/protobuf log bodies (1,000 records each, tenants round robin, the
// last 10 minutes) go to Tenantry and to the real Loki; then the two calls
// Explore makes for a logs query are timed on both, taking turns: the log
// query with a line filter (limit 1000, backward, categorize-labels, as
// Grafana asks) and the log volume histogram (`sum by (level,
// detected_level) (count_over_time(… | drop __error__ [1m]))`).
import { opentelemetry } from '../../proto/gen/otlp.js';
import type { LogsPhaseContext } from '../grafana.ts';
import { post } from '../peers/load.ts';
import type { Ingest } from '../peers/load.ts';
import type { Request } from '../peers/payloads.ts';
import type { Timing } from './traces-phase.ts';

const { ExportLogsServiceRequest } = opentelemetry.proto.collector.logs.v1;

export const logsPerRequest = 1000;
const services = 7;
const words = ['request done', 'cache miss', 'timeout calling payments', 'user logged in', 'retrying', 'connection reset', 'slow query', 'rendered page'];
const severities: readonly (readonly [number, string])[] = [[9, 'INFO'], [9, 'INFO'], [9, 'INFO'], [13, 'WARN'], [17, 'ERROR'], [5, 'DEBUG']];

const kv = (key: string, value: string | number): object => ({ key, value: typeof value === 'string' ? { stringValue: value } : { intValue: value } });

interface LogsTarget {
  readonly name: 'tenantry' | 'loki';
  readonly otlpUrl: string;
  /** Base of the Loki API (Tenantry: <api>/loki). */
  readonly apiUrl: string;
  headers(tenant: string): Record<string, string>;
}

/** One request: 1,000 records of one tenant and service over the last 10 minutes, every line distinct (Loki drops exact duplicates). */
function logsBody(tenant: string, seq: number, nowNs: bigint): Buffer {
  const logRecords = Array.from({ length: logsPerRequest }, (_, i) => {
    const [severityNumber, severityText] = severities[(seq + i) % severities.length] ?? [9, 'INFO'];
    const t = nowNs - BigInt(((seq * 7919 + i * 613) % 600_000)) * 1_000_000n;
    return {
      timeUnixNano: t.toString(), observedTimeUnixNano: t.toString(), severityNumber, severityText,
      body: { stringValue: `${words[(seq + i * 3) % words.length] ?? ''} request_id=${seq}-${i} path=/api/v1/item/${i % 50} duration_ms=${(i * 37) % 900}` },
      attributes: [kv('http.method', i % 3 === 0 ? 'POST' : 'GET'), kv('http.status_code', i % 20 === 0 ? 500 : 200)],
    };
  });
  const resource = { attributes: [kv('service.name', `svc-${seq % services}`), kv('tenant.id', tenant), kv('k8s.namespace.name', 'shop'), kv('deployment.environment', 'production')] };
  const message = ExportLogsServiceRequest.fromObject({ resourceLogs: [{ resource, scopeLogs: [{ scope: { name: 'bench' }, logRecords }] }] });
  return Buffer.from(ExportLogsServiceRequest.encode(message).finish());
}

/** Sends `logs` records over `tenants` tenants to both targets with `clients` concurrent clients; each body goes to both. */
async function loadLogs(targets: readonly LogsTarget[], logs: number, tenants: number, clients = 4): Promise<{ requests: number; seconds: number }> {
  const total = Math.max(1, Math.round(logs / logsPerRequest));
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    while (next < total) {
      const seq = next++;
      const tenant = `tenant-${seq % tenants}`;
      const body = logsBody(tenant, seq, BigInt(Date.now()) * 1_000_000n);
      const request: Request = { signal: 'logs', seq, tenant, service: `svc-${seq % services}`, body, traceIds: [] };
      for (const target of targets) {
        const ingest: Ingest = { system: target.name, signal: 'logs', url: target.otlpUrl, headers: () => target.headers(tenant) };
        // A refused request is retried after a pause (rate limits); the body is the same.
        for (let attempt = 0; attempt < 20; attempt++) {
          const ack = await post(ingest, request);
          if (ack.status >= 200 && ack.status < 300) break;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    }
  }));
  return { requests: total, seconds: (performance.now() - started) / 1000 };
}

async function get(url: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { headers });
  return { status: response.status, text: await response.text() };
}

/** Lines of tenant-0 the target holds (the last tenant filled is as full: bodies go round robin). */
async function held(target: LogsTarget, tenant: string, endSec: number): Promise<number> {
  const q = new URLSearchParams({ query: 'sum(count_over_time({service_name=~".+"}[30m]))', time: String(endSec) });
  const answer = await get(`${target.apiUrl}/api/v1/query?${q.toString()}`, target.headers(tenant));
  const match = /"value":\[[\d.]+,"(\d+)"\]/.exec(answer.text);
  return match === null ? 0 : Number(match[1]);
}

function percentiles(call: string, system: string, ms: number[], failures: number): Timing {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number): number => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;
  return { call, system, p50: at(0.5), p95: at(0.95), n: ms.length, failures };
}

/** Loads the logs into Tenantry and Loki, waits until both hold them, and times Explore's two log calls on each. */
export async function runLogsPhase(context: LogsPhaseContext): Promise<Timing[]> {
  const { tenantry, loki, logs, tenants, calls } = context;
  const targets: LogsTarget[] = [
    { name: 'tenantry', otlpUrl: `${tenantry.otlpUrl}/v1/logs`, apiUrl: `${tenantry.apiUrl}/loki`, headers: (t) => ({ authorization: `Bearer ${tenantry.key}`, 'x-scope-orgid': t }) },
    { name: 'loki', otlpUrl: `${loki.url}/otlp/v1/logs`, apiUrl: loki.url + '/loki', headers: (t) => ({ 'x-scope-orgid': t }) },
  ];
  const loaded = await loadLogs(targets, logs, tenants);
  console.log(`\nlogs: ${loaded.requests * logsPerRequest} records sent to each system in ${loaded.seconds.toFixed(0)} s`);
  const endSec = Math.ceil(Date.now() / 1000) + 5;
  const startSec = endSec - 15 * 60;
  const expected = Math.ceil(loaded.requests / tenants) * logsPerRequest;
  // Neither system reports when accepted lines become queryable: poll tenant-0's count, bounded.
  for (const target of targets) {
    const deadline = Date.now() + 300_000;
    let count = 0;
    while (Date.now() < deadline && (count = await held(target, 'tenant-0', endSec)) < expected) await new Promise((r) => setTimeout(r, 1000));
    if (count < expected) console.log(`logs: ${target.name} holds ${count} of tenant-0's ${expected} lines after 5 minutes; timing anyway`);
  }
  await context.settle('logs');
  const kinds: { name: string; url: (t: LogsTarget, tenant: string, service: string) => string; headers: Record<string, string>; ok: (text: string) => boolean }[] = [
    {
      name: 'log query |= "timeout" (limit 1000)',
      url: (t, _tenant, service) => `${t.apiUrl}/api/v1/query_range?${new URLSearchParams({ query: `{service_name="${service}"} |= "timeout"`, start: `${startSec}000000000`, end: `${endSec}000000000`, limit: '1000', direction: 'backward' }).toString()}`,
      headers: { 'x-loki-response-encoding-flags': 'categorize-labels' },
      ok: (text) => text.includes('"streams"'),
    },
    {
      name: 'log volume sum by (level, detected_level)',
      url: (t, _tenant, service) => `${t.apiUrl}/api/v1/query_range?${new URLSearchParams({ query: `sum by (level, detected_level) (count_over_time({service_name="${service}"} | drop __error__ [15s]))`, start: `${startSec}000000000`, end: `${endSec}000000000`, step: '15' }).toString()}`,
      headers: {},
      ok: (text) => text.includes('"matrix"'),
    },
  ];
  const out: Timing[] = [];
  for (const kind of kinds) {
    const ms = new Map<string, number[]>(targets.map((t) => [t.name, []]));
    const failures = new Map<string, number>(targets.map((t) => [t.name, 0]));
    for (let i = 0; i < calls; i++) {
      const tenant = `tenant-${(i * 37) % tenants}`;
      const service = `svc-${i % services}`;
      for (const t of targets) {
        const started = performance.now();
        const answer = await get(kind.url(t, tenant, service), { ...t.headers(tenant), ...kind.headers });
        const took = performance.now() - started;
        if (answer.status === 200 && kind.ok(answer.text)) ms.get(t.name)?.push(took);
        else failures.set(t.name, (failures.get(t.name) ?? 0) + 1);
      }
    }
    for (const t of targets) out.push(percentiles(kind.name, t.name, ms.get(t.name) ?? [], failures.get(t.name) ?? 0));
  }
  return out;
}
