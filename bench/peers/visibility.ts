// How long after its acknowledgement an item can be queried, for bench:peers:
// each system is asked through its own query API, as a user (or Grafana)
// would ask it, for the trace id of one acknowledged request, over and over
// until the answer holds all of that trace's items. Tenantry: the /v1 logs
// and traces API; VictoriaLogs: a LogsQL filter on the trace_id field its
// OTLP ingest stores; Jaeger: trace by id.
import type { Request } from './payloads.ts';
import { spansPerTrace } from './payloads.ts';
import type { HttpPeer, Jaeger, Tenantry } from './servers.ts';
import { victoriaLogsTenant } from './tenants.ts';

/** One way of asking a system whether a request's items are visible. */
export interface VisibilityQuery {
  readonly label: string;
  visible(request: Request): Promise<boolean>;
}

const lastTrace = (request: Request): string => request.traceIds[request.traceIds.length - 1] ?? '';
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

async function getJson(url: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) as unknown };
  } catch {
    return { status: response.status, body: text };
  }
}

/** Tenantry's /v1 API: POST /v1/tenants/{tenant}/{logs|traces} with the trace id. */
export function tenantryQuery(tenantry: Tenantry, signal: 'logs' | 'traces'): VisibilityQuery {
  return {
    label: `tenantry ${signal} by trace id (/v1 API)`,
    visible: async (request) => {
      const response = await fetch(`${tenantry.apiUrl}/v1/tenants/${request.tenant}/${signal}`, {
        method: 'POST',
        signal: AbortSignal.timeout(10_000),
        headers: { authorization: `Bearer ${tenantry.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ startTime: nowSeconds() - 300, endTime: nowSeconds() + 60, traceId: lastTrace(request), pagination: { limit: 100 } }),
      });
      const body = (await response.json()) as { data?: unknown[] };
      return response.status === 200 && (body.data?.length ?? 0) >= spansPerTrace;
    },
  };
}

/** VictoriaLogs: LogsQL `trace_id:="…"` over the last 5 minutes (/select/logsql/query), in the request's tenant. */
export function victoriaLogsQuery(vl: HttpPeer): VisibilityQuery {
  return {
    label: 'victoria-logs logs by trace_id (LogsQL)',
    visible: async (request) => {
      const params = new URLSearchParams({
        query: `trace_id:="${lastTrace(request)}"`,
        start: String(nowSeconds() - 300),
        end: String(nowSeconds() + 60),
        limit: '100',
      });
      const response = await fetch(`${vl.url}/select/logsql/query?${params.toString()}`, {
        headers: victoriaLogsTenant(request.tenant),
        signal: AbortSignal.timeout(10_000),
      });
      const lines = (await response.text()).split('\n').filter((l) => l.length > 0);
      return response.status === 200 && lines.length >= spansPerTrace;
    },
  };
}

/** Jaeger: GET /api/traces/{id} (the API its UI uses), visible once it returns all of the trace's spans. */
export function jaegerTraceByIdQuery(jaeger: Jaeger): VisibilityQuery {
  return {
    label: 'jaeger trace by id (/api/traces)',
    visible: async (request) => {
      const { status, body } = await getJson(`${jaeger.queryUrl}/api/traces/${lastTrace(request)}`, {});
      const traces = (body as { data?: { spans?: unknown[] }[] }).data ?? [];
      return status === 200 && traces.reduce((n, t) => n + (t.spans?.length ?? 0), 0) >= spansPerTrace;
    },
  };
}

export interface VisibilityResult {
  readonly label: string;
  readonly probes: number;
  /** Probes that never saw their items within the time limit. */
  readonly missed: number;
  readonly p50ms: number;
  readonly maxMs: number;
  readonly delaysMs: readonly number[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Probes acknowledged requests: `probe(request, ackAt)` starts polling each query every
 * `pollMs` until it answers visible or `limitMs` passes. A delay is measured from the ack
 * to the start of the first query that saw the items. At most one probe per `everyMs`.
 */
export class VisibilityProbes {
  readonly #queries: readonly VisibilityQuery[];
  readonly #delays: Map<string, number[]>;
  readonly #missed: Map<string, number>;
  readonly #running: Promise<void>[] = [];
  readonly #options: { readonly everyMs: number; readonly pollMs: number; readonly limitMs: number; readonly maxProbes: number };
  #last = Number.NEGATIVE_INFINITY;

  constructor(queries: readonly VisibilityQuery[], options: { everyMs?: number; pollMs?: number; limitMs?: number; maxProbes?: number } = {}) {
    this.#queries = queries;
    this.#delays = new Map(queries.map((q) => [q.label, []]));
    this.#missed = new Map(queries.map((q) => [q.label, 0]));
    this.#options = { everyMs: options.everyMs ?? 1000, pollMs: options.pollMs ?? 100, limitMs: options.limitMs ?? 60_000, maxProbes: options.maxProbes ?? 30 };
  }

  /** Called with every acknowledged request; probes one now and then. */
  offer(request: Request, ackAt: number): void {
    if (ackAt - this.#last < this.#options.everyMs || this.#running.length >= this.#options.maxProbes) return;
    this.#last = ackAt;
    for (const query of this.#queries) this.#running.push(this.#probe(query, request, ackAt));
  }

  async #probe(query: VisibilityQuery, request: Request, ackAt: number): Promise<void> {
    while (performance.now() - ackAt < this.#options.limitMs) {
      const asked = performance.now();
      let seen = false;
      try {
        seen = await query.visible(request);
      } catch {
        // a failed query counts as not visible yet
      }
      if (seen) {
        this.#delays.get(query.label)?.push(Math.max(0, asked - ackAt));
        return;
      }
      await sleep(this.#options.pollMs);
    }
    this.#missed.set(query.label, (this.#missed.get(query.label) ?? 0) + 1);
  }

  /** Waits for every probe (each bounded by its time limit) and returns one result per query. */
  async results(): Promise<VisibilityResult[]> {
    await Promise.all(this.#running);
    return this.#queries.map((q) => {
      const delays = [...(this.#delays.get(q.label) ?? [])].sort((a, b) => a - b);
      return {
        label: q.label,
        probes: delays.length + (this.#missed.get(q.label) ?? 0),
        missed: this.#missed.get(q.label) ?? 0,
        p50ms: Math.round(delays[Math.floor((delays.length - 1) / 2)] ?? Number.NaN),
        maxMs: Math.round(delays[delays.length - 1] ?? Number.NaN),
        delaysMs: delays.map(Math.round),
      };
    });
  }
}
