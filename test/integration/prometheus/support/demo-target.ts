// A scrape target for the Prometheus differential and compliance tests: an
// HTTP server exposing, in the text format, metrics shaped like the demo
// service the PromQL compliance tester's query suite expects (demo_* names,
// the same label names), through prom-client with its own Registry. Every
// scrape advances the values one step, so the data changes at each sample;
// the scrape count drives the events the tests need: a counter reset, a label
// value that disappears and one that appears, a metric present only part of
// the time (staleness).
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Scrape numbers at which the data changes shape. */
export interface DemoSchedule {
  /** The CPU counter of this instance starts again from zero at this scrape. */
  readonly counterResetAt: number;
  /** `demo_build_info{version="v1"}` disappears and `{version="v2"}` appears at this scrape. */
  readonly churnAt: number;
  /** `demo_intermittent_metric` is exposed from `intermittentFrom` until before `intermittentUntil`. */
  readonly intermittentFrom: number;
  readonly intermittentUntil: number;
}

export interface DemoTarget {
  /** `127.0.0.1:<port>`, the instance label Prometheus gives it. */
  readonly address: string;
  /** How many scrapes it has answered. */
  scrapes(): number;
  /** Resolves once it has answered `count` scrapes. */
  scraped(count: number): Promise<void>;
  close(): Promise<void>;
}

const modes = ['idle', 'user', 'system'] as const;
const memoryTypes = ['free', 'used', 'buffers', 'cached'] as const;
const requests = [
  { method: 'GET', path: '/api/foo', status: '200' },
  { method: 'POST', path: '/api/foo', status: '200' },
  { method: 'GET', path: '/api/bar', status: '500' },
] as const;

/** A deterministic pseudo-random sequence (so a failure can be reproduced from its seed). */
function sequence(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

function demoRegistry(seed: number, schedule: DemoSchedule): { registry: Registry; step: (scrape: number) => void } {
  const registry = new Registry();
  const registers = [registry];
  const random = sequence(seed);
  const cpu = new Counter({ name: 'demo_cpu_usage_seconds_total', help: 'CPU seconds by mode.', labelNames: ['mode'], registers });
  const memory = new Gauge({ name: 'demo_memory_usage_bytes', help: 'Memory by type.', labelNames: ['type'], registers });
  const cpus = new Gauge({ name: 'demo_num_cpus', help: 'CPUs.', registers });
  const disk = new Gauge({ name: 'demo_disk_usage_bytes', help: 'Disk usage.', registers });
  const batch = new Gauge({ name: 'demo_batch_last_success_timestamp_seconds', help: 'Last batch success.', registers });
  const intermittent = new Gauge({ name: 'demo_intermittent_metric', help: 'Present part of the time.', labelNames: ['phase'], registers });
  const build = new Gauge({ name: 'demo_build_info', help: 'Build version (label churn).', labelNames: ['version'], registers });
  const duration = new Histogram({
    name: 'demo_api_request_duration_seconds',
    help: 'API request durations.',
    labelNames: ['method', 'path', 'status'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers,
  });
  cpus.set(seed % 2 === 0 ? 4 : 8);
  const step = (scrape: number): void => {
    if (scrape === schedule.counterResetAt) cpu.reset();
    for (const mode of modes) cpu.inc({ mode }, Math.round(random() * 1000) / 100);
    for (const [i, type] of memoryTypes.entries()) memory.set({ type }, Math.round((i + 1) * 1e8 + random() * 5e7));
    disk.set(1e9 + scrape * 12_345 + Math.round(random() * 1000));
    if (scrape % 5 === 0) batch.set(Math.floor(Date.now() / 1000));
    if (scrape >= schedule.intermittentFrom && scrape < schedule.intermittentUntil) intermittent.set({ phase: 'on' }, scrape);
    else intermittent.reset(); // a labelled metric with no children exposes no sample
    build.reset();
    build.set({ version: scrape < schedule.churnAt ? 'v1' : 'v2' }, 1);
    for (const labels of requests) {
      const count = 1 + Math.floor(random() * 6);
      for (let i = 0; i < count; i++) duration.observe(labels, random() ** 2 * (labels.status === '500' ? 3 : 0.6));
    }
  };
  return { registry, step };
}

/** Starts one demo target on 127.0.0.1 on a free port. */
export async function startDemoTarget(seed: number, schedule: DemoSchedule): Promise<DemoTarget> {
  const { registry, step } = demoRegistry(seed, schedule);
  let scrapes = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server: Server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    scrapes += 1;
    step(scrapes);
    void registry.metrics().then((text) => {
      res.writeHead(200, { 'content-type': registry.contentType }).end(text);
      for (const w of waiters.filter((x) => x.count <= scrapes)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    scrapes: () => scrapes,
    scraped: (count) =>
      scrapes >= count
        ? Promise.resolve()
        : new Promise((resolve) => {
            waiters.push({ count, resolve });
          }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
