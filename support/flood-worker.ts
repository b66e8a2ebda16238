// A tenant's flood in a worker thread (noisy-neighbour test, bench:noisy):
// `clients` loops each send `body` every `intervalMs` (paced, not faster when
// refused) until the parent posts 'stop', then post back what was accepted.
// A thread of its own keeps the flood's client work off the event loop that
// times the other tenant's requests.
import { parentPort, workerData } from 'node:worker_threads';

export interface FloodJob {
  readonly url: string;
  readonly key: string;
  readonly body: Uint8Array;
  readonly clients: number;
  readonly intervalMs: number;
}

export interface FloodReport {
  readonly acceptedBytes: number;
  /** From the first request sent to the last. */
  readonly seconds: number;
  readonly statuses: Record<number, number>;
  readonly retryAfters: string[];
  /** Answer times of the refused requests, ms. */
  readonly refusedMs: number[];
}

const job = workerData as FloodJob;
const state = { stopped: false };
/** Read through a call: the flag changes while a loop awaits. */
const stopped = (): boolean => state.stopped;
/** Every client's pending pause, ended at once by 'stop'. */
const sleepers = new Set<() => void>();
parentPort?.on('message', (m) => {
  if (m === 'stop') {
    state.stopped = true;
    for (const wake of sleepers) wake();
  }
});

/** Waits `ms`, or less if stopped meanwhile. */
const pause = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    const wake = (): void => {
      clearTimeout(timer);
      sleepers.delete(wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    sleepers.add(wake);
  });

let acceptedBytes = 0;
let first = Number.POSITIVE_INFINITY;
let last = 0;
const statuses: Record<number, number> = {};
const retryAfters = new Set<string>();
const refusedMs: number[] = [];
const body = Buffer.from(job.body);
await Promise.all(
  Array.from({ length: job.clients }, async (_, c) => {
    const start = performance.now() + (c * job.intervalMs) / job.clients;
    for (let i = 0; !stopped(); i++) {
      const wait = start + i * job.intervalMs - performance.now();
      if (wait > 0) await pause(wait);
      if (stopped()) break;
      const sent = performance.now();
      first = Math.min(first, sent);
      last = Math.max(last, sent);
      const reply = await fetch(job.url, { method: 'POST', body, headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${job.key}` } });
      await reply.arrayBuffer();
      statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
      if (reply.status === 200) acceptedBytes += body.length;
      else refusedMs.push(performance.now() - sent);
      const retry = reply.headers.get('retry-after');
      if (retry !== null) retryAfters.add(retry);
    }
  }),
);
const report: FloodReport = { acceptedBytes, seconds: last > first ? (last - first) / 1000 : 0, statuses, retryAfters: [...retryAfters], refusedMs };
parentPort?.postMessage(report);
