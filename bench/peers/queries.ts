// bench:peers' queries: comparable questions put to Tenantry and to its peer,
// each through the system's own API, on the same corpus, once every process is
// idle. Logs (Tenantry's /v1 logs beside VictoriaLogs' LogsQL): the newest 100
// logs of a tenant, a rare substring, a trace id, a severity. Traces (Tenantry's
// /v1 traces beside Jaeger's /api/traces, the API its UI uses): trace by id,
// service + error, span name + minimum duration (Jaeger needs a service for a
// search, so both are given one). The systems take turns call by call. An
// answer counts only when it holds what the question must find.
import { spansPerTrace } from './payloads.ts';
import type { Signal } from './payloads.ts';
import type { HttpPeer, Jaeger, SystemName, Tenantry } from './servers.ts';
import { victoriaLogsTenant } from './tenants.ts';

/** A request of the corpus the queries pick their tenant, service and trace id from. */
export interface Pick {
  readonly signal: 'logs' | 'traces';
  readonly tenant: string;
  readonly service: string;
  readonly traceId: string;
}

/** Tenantry's side of a case: the /v1 route and JSON body (bench/peers/breakdown.ts replays it in-process). */
export interface TenantryCall {
  readonly route: 'logs' | 'traces';
  readonly tenant: string;
  readonly body: Record<string, unknown>;
}

export interface QueryCase {
  readonly name: string;
  readonly signal: Signal;
  readonly peer: SystemName;
  tenantry(pick: Pick, window: Window): TenantryCall;
  /** Items Tenantry's answer must hold at least. */
  readonly tenantryMin: number;
  /** Calls the peer; true when its answer holds what it must. */
  askPeer(pick: Pick, window: Window): Promise<boolean>;
}

/** The corpus' time range, seconds. */
export interface Window {
  readonly startSec: number;
  readonly endSec: number;
}

export interface QueryTiming {
  readonly name: string;
  readonly system: SystemName;
  readonly p50: number;
  readonly p95: number;
  readonly n: number;
  readonly failures: number;
}

/**
 * A substring one log in 8,000 holds, in tenant-N: log 42 of template N + 3, the
 * tenant's (bench/peers/payloads.ts: `request ${i + seed} served …`, seed = 1000 × template).
 */
export const rareSubstring = (tenant: string): string => `request ${(Number(/(\d+)$/.exec(tenant)?.[1] ?? '0') + 3) * 1000 + 42} served`;
const spanName = 'SELECT shop.cart_3';
/** Spans s ≤ 5 of a trace last at least this long (payloads: 2,345,678 ns − s µs). */
const minDurationNs = 2_340_000;

async function text(url: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(30_000) });
  return { status: response.status, text: await response.text() };
}

/** VictoriaLogs' /select/logsql/query: its JSON lines, at least `min` of them. */
function logsql(vl: HttpPeer, query: (pick: Pick) => string, min: number, limit: number): (pick: Pick, window: Window) => Promise<boolean> {
  return async (pick, window) => {
    const params = new URLSearchParams({ query: query(pick), start: String(window.startSec), end: String(window.endSec), limit: String(limit) });
    const answer = await text(`${vl.url}/select/logsql/query?${params.toString()}`, victoriaLogsTenant(pick.tenant));
    return answer.status === 200 && answer.text.split('\n').filter((l) => l.length > 0).length >= min;
  };
}

/** Jaeger's /api/traces: traces with at least `minSpans` spans in all, `minTraces` traces. */
function jaegerSearch(
  jaeger: Jaeger,
  params: (pick: Pick, window: Window) => Record<string, string>,
  minTraces: number,
): (pick: Pick, window: Window) => Promise<boolean> {
  return async (pick, window) => {
    const answer = await text(`${jaeger.queryUrl}/api/traces?${new URLSearchParams(params(pick, window)).toString()}`, {});
    const traces = (JSON.parse(answer.text) as { data?: { spans?: unknown[] }[] | null }).data ?? [];
    return answer.status === 200 && traces.length >= minTraces;
  };
}

const micros = (sec: number): string => `${sec}000000`;

/** The seven cases, Tenantry beside VictoriaLogs (logs) and Jaeger (traces). */
export function queryCases(vl: HttpPeer, jaeger: Jaeger): QueryCase[] {
  const logs = (tenant: string, window: Window, extra: Record<string, unknown>): TenantryCall => ({
    route: 'logs',
    tenant,
    body: { startTime: window.startSec, endTime: window.endSec, pagination: { limit: 100 }, ...extra },
  });
  const traces = (tenant: string, window: Window, extra: Record<string, unknown>, limit = 100): TenantryCall => ({
    route: 'traces',
    tenant,
    body: { startTime: window.startSec, endTime: window.endSec, pagination: { limit }, ...extra },
  });
  return [
    {
      name: 'logs: newest 100 of a tenant',
      signal: 'logs',
      peer: 'victoria-logs',
      tenantryMin: 100,
      tenantry: (p, w) => logs(p.tenant, w, {}),
      // `limit` returns the newest entries matching the query.
      askPeer: logsql(vl, () => '*', 100, 100),
    },
    {
      name: 'logs: rare substring ("request N042 served")',
      signal: 'logs',
      peer: 'victoria-logs',
      tenantryMin: 1,
      tenantry: (p, w) => logs(p.tenant, w, { body: `%${rareSubstring(p.tenant)}%` }),
      askPeer: logsql(vl, (p) => `"${rareSubstring(p.tenant)}"`, 1, 100),
    },
    {
      name: 'logs: a trace id',
      signal: 'logs',
      peer: 'victoria-logs',
      tenantryMin: spansPerTrace,
      tenantry: (p, w) => logs(p.tenant, w, { traceId: p.traceId }),
      askPeer: logsql(vl, (p) => `trace_id:="${p.traceId}"`, spansPerTrace, 100),
    },
    {
      name: 'logs: severity ERROR, newest 100',
      signal: 'logs',
      peer: 'victoria-logs',
      tenantryMin: 100,
      tenantry: (p, w) => logs(p.tenant, w, { severity: 'ERROR' }),
      askPeer: logsql(vl, () => 'severity_text:=ERROR', 100, 100),
    },
    {
      name: 'traces: trace by id',
      signal: 'traces',
      peer: 'jaeger',
      tenantryMin: spansPerTrace,
      tenantry: (p, w) => traces(p.tenant, w, { traceId: p.traceId }),
      askPeer: async (p) => {
        const answer = await text(`${jaeger.queryUrl}/api/traces/${p.traceId}`, {});
        const found = (JSON.parse(answer.text) as { data?: { spans?: unknown[] }[] | null }).data ?? [];
        return answer.status === 200 && found.reduce((n, t) => n + (t.spans?.length ?? 0), 0) >= spansPerTrace;
      },
    },
    {
      name: 'traces: service + error, 20',
      signal: 'traces',
      peer: 'jaeger',
      tenantryMin: 20,
      tenantry: (p, w) => traces(p.tenant, w, { statusCode: 'ERROR', attributes: { 'service.name': p.service } }, 20),
      askPeer: jaegerSearch(
        jaeger,
        (p, w) => ({ service: p.service, tags: JSON.stringify({ error: 'true' }), limit: '20', start: micros(w.startSec), end: micros(w.endSec) }),
        20,
      ),
    },
    {
      name: `traces: name + min duration, 20`,
      signal: 'traces',
      peer: 'jaeger',
      tenantryMin: 20,
      tenantry: (p, w) => traces(p.tenant, w, { spanName, durationMin: minDurationNs, attributes: { 'service.name': p.service } }, 20),
      askPeer: jaegerSearch(
        jaeger,
        (p, w) => ({
          service: p.service,
          operation: spanName,
          minDuration: `${minDurationNs / 1000}us`,
          limit: '20',
          start: micros(w.startSec),
          end: micros(w.endSec),
        }),
        20,
      ),
    },
  ];
}

/** POSTs Tenantry's /v1 call; true when its `data` holds at least `min` records. */
export async function callTenantry(tenantry: Tenantry, call: TenantryCall, min: number): Promise<boolean> {
  const response = await fetch(`${tenantry.apiUrl}/v1/tenants/${call.tenant}/${call.route}`, {
    method: 'POST',
    signal: AbortSignal.timeout(30_000),
    headers: { authorization: `Bearer ${tenantry.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(call.body),
  });
  const body = (await response.json()) as { data?: unknown[] };
  return response.status === 200 && (body.data?.length ?? 0) >= min;
}

function percentiles(name: string, system: SystemName, ms: number[], failures: number): QueryTiming {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number): number => Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN) * 10) / 10;
  return { name, system, p50: at(0.5), p95: at(0.95), n: ms.length, failures };
}

/** Times every case `calls` times on each side, the two taking turns call by call. */
export async function timeQueries(
  tenantry: Tenantry,
  cases: readonly QueryCase[],
  picks: readonly Pick[],
  window: Window,
  calls: number,
): Promise<QueryTiming[]> {
  const out: QueryTiming[] = [];
  for (const c of cases) {
    const ms: Record<'tenantry' | 'peer', number[]> = { tenantry: [], peer: [] };
    const failures = { tenantry: 0, peer: 0 };
    for (let i = 0; i < calls; i++) {
      const pick = picks[(i * 7919) % picks.length];
      if (pick === undefined) break;
      for (const side of i % 2 === 0 ? (['tenantry', 'peer'] as const) : (['peer', 'tenantry'] as const)) {
        const started = performance.now();
        let ok: boolean;
        try {
          ok = side === 'tenantry' ? await callTenantry(tenantry, c.tenantry(pick, window), c.tenantryMin) : await c.askPeer(pick, window);
        } catch {
          ok = false;
        }
        const took = performance.now() - started;
        if (ok) ms[side].push(took);
        else failures[side]++;
      }
    }
    out.push(percentiles(c.name, 'tenantry', ms.tenantry, failures.tenantry), percentiles(c.name, c.peer, ms.peer, failures.peer));
  }
  return out;
}
