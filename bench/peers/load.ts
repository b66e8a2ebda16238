// Closed-loop OTLP/HTTP clients for bench:peers: each client sends a request,
// waits for its acknowledgement, sends the next. One module for the three
// systems so they see the same client: the same bodies, connections kept
// alive, the same back-off on a refusal. Bounded by time or by a request
// count, whichever the caller gives, and always by a hard time limit.
import { Agent, request as httpRequest } from 'node:http';
import type { Request, RequestFactory, Signal } from './payloads.ts';
import { itemsPerRequest } from './payloads.ts';

/** Where and how one system takes a signal in. */
export interface Ingest {
  readonly system: string;
  readonly signal: Signal;
  readonly url: string;
  headers(request: Request): Record<string, string>;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

export interface Ack {
  readonly status: number;
  readonly ms: number;
  /** performance.now() when the acknowledgement arrived. */
  readonly at: number;
}

/** POSTs one request and resolves when its response has been read; status 0 on a network error or after 60 s. */
export function post(ingest: Ingest, request: Request): Promise<Ack> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status: number): void => {
      const at = performance.now();
      resolve({ status, ms: at - started, at });
    };
    const req = httpRequest(
      ingest.url,
      {
        method: 'POST',
        agent,
        timeout: 60_000,
        headers: { 'content-type': 'application/x-protobuf', 'content-length': String(request.body.length), ...ingest.headers(request) },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          done(res.statusCode ?? 0);
        });
        res.on('error', () => {
          done(0);
        });
      },
    );
    req.on('timeout', () => {
      req.destroy();
    });
    req.on('error', () => {
      done(0);
    });
    req.end(request.body);
  });
}

export interface LoadResult {
  readonly requests: number;
  readonly acknowledged: number;
  readonly items: number;
  readonly seconds: number;
  readonly itemsPerSecond: number;
  readonly p50ms: number;
  readonly p99ms: number;
  readonly statuses: Record<string, number>;
}

export interface LoadOptions {
  readonly clients: number;
  /** Stop starting requests after this many seconds. */
  readonly seconds?: number;
  /** Stop after this many requests in all (a fixed corpus). */
  readonly requests?: number;
  /** Hard limit in seconds, whatever else (default: 600). */
  readonly maxSeconds?: number;
  /** Called with every acknowledged request (the visibility probes use it). */
  readonly onAck?: (request: Request, ack: Ack) => void;
}

const ok = (status: number): boolean => status >= 200 && status < 300;

/** Runs closed-loop clients against one system until the time or the request count is used up. */
export async function closedLoop(ingest: Ingest, factory: RequestFactory, options: LoadOptions): Promise<LoadResult> {
  const started = performance.now();
  const hardLimit = started + (options.maxSeconds ?? 600) * 1000;
  const until = options.seconds === undefined ? hardLimit : Math.min(hardLimit, started + options.seconds * 1000);
  const budget = options.requests ?? Number.POSITIVE_INFINITY;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let sent = 0;
  let inFlight = 0;
  let acknowledged = 0;
  await Promise.all(
    Array.from({ length: options.clients }, async () => {
      // A fixed corpus retries refused requests (at most twice the budget), so that exactly
      // `requests` are acknowledged.
      while (performance.now() < until && acknowledged + inFlight < budget && sent < budget * 3) {
        sent++;
        inFlight++;
        const request = factory.next(ingest.signal);
        const ack = await post(ingest, request);
        inFlight--;
        statuses[ack.status] = (statuses[ack.status] ?? 0) + 1;
        if (ok(ack.status)) {
          acknowledged++;
          latencies.push(ack.ms);
          options.onAck?.(request, ack);
        } else {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => Math.round(latencies[Math.floor(q * (latencies.length - 1))] ?? 0);
  return {
    requests: sent,
    acknowledged,
    items: acknowledged * itemsPerRequest,
    seconds: Math.round(seconds * 10) / 10,
    itemsPerSecond: Math.round((acknowledged * itemsPerRequest) / seconds),
    p50ms: at(0.5),
    p99ms: at(0.99),
    statuses,
  };
}

export interface OpenLoopOptions {
  /** Items offered per second, whatever the acknowledgements do. */
  readonly itemsPerSecond: number;
  readonly seconds: number;
  /** Requests outstanding at most; a send due beyond it is skipped and counted. */
  readonly maxInFlight: number;
}

export interface OpenLoopResult extends LoadResult {
  readonly offeredItemsPerSecond: number;
  /** Sends skipped because maxInFlight requests were outstanding: the system fell behind the offered rate. */
  readonly skipped: number;
}

/**
 * Sends requests at a fixed rate, not waiting for acknowledgements (an open
 * loop), so two systems are compared at the same offered load: their ack
 * latency then reflects the path of a request, not how far each can be
 * pushed. Bounded by `seconds` plus the last answers (each at most 60 s).
 */
export async function openLoop(ingest: Ingest, factory: RequestFactory, options: OpenLoopOptions): Promise<OpenLoopResult> {
  const intervalMs = (itemsPerRequest * 1000) / options.itemsPerSecond;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const answers: Promise<void>[] = [];
  let inFlight = 0;
  let skipped = 0;
  let acknowledged = 0;
  const started = performance.now();
  for (let i = 0; ; i++) {
    const due = started + i * intervalMs;
    if (due >= started + options.seconds * 1000) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (inFlight >= options.maxInFlight) {
      skipped++;
      continue;
    }
    inFlight++;
    answers.push(
      post(ingest, factory.next(ingest.signal)).then((ack) => {
        inFlight--;
        statuses[ack.status] = (statuses[ack.status] ?? 0) + 1;
        if (ok(ack.status)) {
          acknowledged++;
          latencies.push(ack.ms);
        }
      }),
    );
  }
  await Promise.all(answers);
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => Math.round(latencies[Math.floor(q * (latencies.length - 1))] ?? 0);
  return {
    requests: answers.length,
    acknowledged,
    items: acknowledged * itemsPerRequest,
    seconds: Math.round(seconds * 10) / 10,
    itemsPerSecond: Math.round((acknowledged * itemsPerRequest) / seconds),
    p50ms: at(0.5),
    p99ms: at(0.99),
    statuses,
    offeredItemsPerSecond: options.itemsPerSecond,
    skipped,
  };
}
