// npm run bench:grafana — what Grafana's Explore waits for, Tenantry beside
// the real Loki and Tempo holding the same data: p50/p95 of a log query
// with a line filter and of the log volume histogram (bench/grafana/
// logs-phase.ts), of a TraceQL search and of a trace by id
// (bench/grafana/traces-phase.ts), each next to its peer with the p95
// ratio; and trace by id before and after migration 8's trace index, in
// one embedded store, beside the least a lookup costs there (the spans of a
// trace whose range is known; SELECT 1). Targets (issue 17): trace by id
// p95 < 50 ms; every figure within 2x of the peer at p95.
// Calls are timed once the data is searchable and every process has been
// idle for 2 s (for Tenantry: its write-ahead log drained, its merges done):
// Tenantry's store gate paces queries while ingest is active, which would
// time its isolation policy rather than its queries.
//
//   bash test/peers/build-peers.sh        # once: Loki and Tempo binaries
//   npm run bench:grafana                 # 10 M spans + 10 M logs over 100 tenants
//   BENCH_GRAFANA_SPANS=1000000 BENCH_GRAFANA_LOGS=1000000 npm run bench:grafana   # scaled down
//
// BENCH_GRAFANA_TENANTS (100), BENCH_GRAFANA_CALLS (timed calls per kind,
// 50), BENCH_GRAFANA_INDEX_SPANS (spans of the index comparison, 10 M).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migratedStore } from '../test/support/embedded-store.ts';
import { findPeerBinaries } from '../test/peers/peer-binaries.ts';
import { startTempo } from '../test/peers/tempo-server.ts';
import type { Tempo } from '../test/peers/tempo-server.ts';
import { settleOrSay } from './peers/process-cpu.ts';
import { defaultTenantryRoot, startLoki, startTenantryAll } from './peers/servers.ts';
import type { Loki, Tenantry } from './peers/servers.ts';
import { loadTraces, timeTraceCalls, traceIndexComparison, waitSearchable } from './grafana/traces-phase.ts';
import type { Timing, TracesTarget } from './grafana/traces-phase.ts';

const count = (name: string, fallback: number): number => {
  const raw = process.env[name];
  const n = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name}=${raw ?? ''} is not a whole number`);
  return n;
};

const spans = count('BENCH_GRAFANA_SPANS', 10_000_000);
const logs = count('BENCH_GRAFANA_LOGS', 10_000_000);
const tenants = count('BENCH_GRAFANA_TENANTS', 100);
const calls = count('BENCH_GRAFANA_CALLS', 50);
const indexSpans = count('BENCH_GRAFANA_INDEX_SPANS', 10_000_000);

/** What the logs phase (helper D's bench/grafana/logs-phase.ts) gets: the running systems and the sizes. */
export interface LogsPhaseContext {
  readonly tenantry: Tenantry;
  readonly loki: Loki;
  readonly logs: number;
  readonly tenants: number;
  readonly calls: number;
  /** Resolves once every system's process has been idle for 2 s (settleOrSay), so that the load's deferred work is done before timing. */
  readonly settle: (why: string) => Promise<void>;
}

interface LogsPhaseModule { runLogsPhase(context: LogsPhaseContext): Promise<Timing[]> }

function isLogsPhase(m: unknown): m is LogsPhaseModule {
  return typeof m === 'object' && m !== null && typeof (m as Record<string, unknown>)['runLogsPhase'] === 'function';
}

/** The logs phase, when its module is there (it is another engineer's file; a run without it times traces only). */
async function logsPhase(): Promise<LogsPhaseModule | undefined> {
  const path = './grafana/logs-phase.ts';
  try {
    const m: unknown = await import(path);
    return isLogsPhase(m) ? m : undefined;
  } catch {
    return undefined;
  }
}

function table(rows: readonly Timing[]): string {
  const peerOf = (system: string): string | undefined => (system === 'tenantry' ? undefined : system);
  const lines = [`${'call'.padEnd(48)} ${'system'.padEnd(22)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'n'.padStart(4)} ${'fail'.padStart(4)}  p95 vs peer`];
  for (const r of rows) {
    const peer = rows.find((o) => o.call === r.call && o.system !== r.system && peerOf(o.system) !== undefined);
    const ratio = r.system === 'tenantry' && peer !== undefined && peer.p95 > 0 ? `${(r.p95 / peer.p95).toFixed(2)}x ${peer.system}` : '';
    lines.push(`${r.call.padEnd(48)} ${r.system.padEnd(22)} ${String(r.p50).padStart(8)} ${String(r.p95).padStart(8)} ${String(r.n).padStart(4)} ${String(r.failures).padStart(4)}  ${ratio}`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const peers = findPeerBinaries();
  if (!peers.ok) throw new Error(peers.reason);
  console.log(`bench:grafana: ${spans} spans and ${logs} logs over ${tenants} tenants, ${calls} timed calls of each kind`);

  // 1. The trace index, before and after, alone on the machine.
  const store = await migratedStore('bench_grafana_index');
  let index;
  try {
    index = await traceIndexComparison(store, indexSpans, calls);
  } finally {
    await store.close();
  }
  console.log(`\ntrace index (${indexSpans} spans of one tenant over 24 h, inserted in ${index.insertSeconds.toFixed(0)} s):\n${table([index.before, index.after, index.floor, index.nothing])}`);

  // 2. The three systems, the same data in each.
  const dir = await mkdtemp(join(tmpdir(), 'tenantry-bench-grafana-'));
  let tenantry: Tenantry | undefined;
  let tempo: Tempo | undefined;
  let loki: Loki | undefined;
  const timings: Timing[] = [];
  try {
    [tenantry, tempo, loki] = await Promise.all([
      startTenantryAll(defaultTenantryRoot, join(dir, 'tenantry')),
      startTempo(peers.binaries.tempo, join(dir, 'tempo'), { traceIdlePeriod: '2s' }),
      startLoki(peers.binaries.loki, join(dir, 'loki')),
    ]);
    const pids = [tenantry.pid, tempo.pid, loki.pid];
    // Time queries only once every system is idle: Tenantry acknowledges from its write-ahead log and inserts
    // the last blocks after the data is searchable, and its store gate paces queries while ingest is active.
    const settle = async (why: string): Promise<void> => { await settleOrSay(pids, `before timing ${why}`, (line) => { console.log(line); }); };
    const key = tenantry.key;
    const targets: TracesTarget[] = [
      { name: 'tenantry', otlpUrl: `${tenantry.otlpUrl}/v1/traces`, apiUrl: `${tenantry.apiUrl}/tempo`, headers: (t) => ({ authorization: `Bearer ${key}`, 'x-scope-orgid': t }) },
      { name: 'tempo', otlpUrl: `${tempo.otlpUrl}/v1/traces`, apiUrl: tempo.url, headers: (t) => ({ 'x-scope-orgid': t }) },
    ];
    if (spans > 0) {
      const loaded = await loadTraces(targets, spans, tenants);
      console.log(`\ntraces: ${loaded.requests.length * 1000} spans sent to each system in ${loaded.seconds.toFixed(0)} s`);
      for (const t of targets) if (!(await waitSearchable(t, loaded))) throw new Error(`${t.name} did not make the last traces searchable in time`);
      await settle('traces');
      timings.push(...await timeTraceCalls(targets, loaded, calls));
    }
    const logsModule = logs > 0 ? await logsPhase() : undefined;
    if (logsModule !== undefined) timings.push(...await logsModule.runLogsPhase({ tenantry, loki, logs, tenants, calls, settle }));
    else if (logs > 0) console.log('\nlogs: bench/grafana/logs-phase.ts (runLogsPhase) is not there; logs not timed');
  } finally {
    await Promise.all([tenantry?.stop(), tempo?.stop(), loki?.stop()]);
    await rm(dir, { recursive: true, force: true });
  }
  console.log(`\nExplore's calls (${tenants} tenants):\n${table(timings)}`);
  const byId = timings.find((t) => t.system === 'tenantry' && t.call.startsWith('trace by id'));
  console.log(`\ntargets: trace by id p95 ${byId?.p95 ?? '?'} ms (< 50: ${byId !== undefined && byId.p95 < 50 ? 'met' : 'missed'}); index before/after p95 ${index.before.p95} / ${index.after.p95} ms`);
}

await main();
