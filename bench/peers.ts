// npm run bench:peers — Tenantry `all` beside the permissive systems a user
// would pick instead, on one machine, fed the same OTLP/protobuf bodies:
// VictoriaLogs (logs), Jaeger v2 with Badger (traces), Prometheus 3.16 and
// VictoriaMetrics (metrics ingest, OTLP). Total CPU per item of a fixed corpus
// from idle to settled (deferred work included) and its bytes at rest after
// each system's own flush; query p50/p95 of comparable questions through each
// system's own API on that corpus, and where Tenantry's time goes where it
// loses; throughput, ack latency and CPU per item under 8 closed-loop clients
// in alternating phases; ack latency at one offered rate (an open loop); the
// delay from an acknowledgement to the item being queryable. One run, every
// server on 127.0.0.1 in a temp dir, all stopped and removed at the end. Not a
// test: it prints figures; the ratios within one run are what count on a
// shared machine. Missing peer binaries are built first (bench/peers/build-peers.sh,
// test/prometheus/build-prometheus.sh; minutes, once).
//
//   npm run bench:peers                      # everything
//   npm run bench:peers -- --only=corpus,queries --seconds=5
//   options: --only=corpus,queries,throughput,same-rate,visibility  --seconds=N (load phase)  --rounds=N
//            --corpus=N (bodies per signal)  --clients=N  --calls=N (per query case)  --tenantry-root=DIR
//            --rate=N (items/s offered to every system in the same-rate part; default 20000)
//            --keep (keep the temp dir)
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { activeParts, diskBytes } from './peers/at-rest.ts';
import { breakdowns } from './peers/breakdown.ts';
import { closedLoop, openLoop } from './peers/load.ts';
import type { Ingest, LoadResult } from './peers/load.ts';
import { ensurePeerBinaries, peerVersions } from './peers/peer-binaries.ts';
import { RequestFactory, itemsPerRequest } from './peers/payloads.ts';
import type { Request, Signal } from './peers/payloads.ts';
import { cpuSeconds, defaultIdle, machineCpuSeconds, settleOrSay } from './peers/process-cpu.ts';
import { queryCases, timeQueries } from './peers/queries.ts';
import type { Pick, Window } from './peers/queries.ts';
import { peersOf, printReport } from './peers/report.ts';
import type { AtRest, CorpusResult, PhaseResult, Report, SameRateResult } from './peers/report.ts';
import { defaultTenantryRoot, startJaeger, startPrometheus, startTenantryAll, startVictoriaLogs, startVictoriaMetrics } from './peers/servers.ts';
import type { HttpPeer, Jaeger, RunningServer, SystemName, Tenantry } from './peers/servers.ts';
import { victoriaLogsTenant } from './peers/tenants.ts';
import { VisibilityProbes, jaegerTraceByIdQuery, tenantryQuery, victoriaLogsQuery } from './peers/visibility.ts';

const parts = ['corpus', 'queries', 'throughput', 'same-rate', 'visibility'] as const;
type Part = (typeof parts)[number];

const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    seconds: { type: 'string', default: '15' },
    rounds: { type: 'string', default: '2' },
    corpus: { type: 'string', default: '600' },
    clients: { type: 'string', default: '8' },
    rate: { type: 'string', default: '20000' },
    calls: { type: 'string', default: '40' },
    'tenantry-root': { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const positive = (name: string, raw: string): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}=${raw}: a positive integer is needed`);
  return n;
};
const only = (args.only ?? parts.join(',')).split(',').map((p) => p.trim());
for (const p of only) if (!(parts as readonly string[]).includes(p)) throw new Error(`--only=${args.only ?? ''}: parts are ${parts.join(', ')}`);
const run = (part: Part): boolean => only.includes(part);
const seconds = positive('seconds', args.seconds);
const rounds = positive('rounds', args.rounds);
const corpusBodies = positive('corpus', args.corpus);
const clients = positive('clients', args.clients);
const sameRate = positive('rate', args.rate);
const queryCalls = positive('calls', args.calls);
const tenantryRoot = resolve(args['tenantry-root'] ?? defaultTenantryRoot);

const say = (line: string): void => {
  process.stderr.write(`[bench:peers ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Systems {
  tenantry: Tenantry;
  readonly 'victoria-logs': HttpPeer;
  readonly jaeger: Jaeger;
  readonly prometheus: HttpPeer;
  readonly 'victoria-metrics': HttpPeer;
}
const systemNames = ['tenantry', 'victoria-logs', 'jaeger', 'prometheus', 'victoria-metrics'] as const;
const signals = ['logs', 'traces', 'metrics'] as const;

function ingestOf(systems: Systems, system: SystemName, signal: Signal): Ingest {
  const { tenantry } = systems;
  if (system === 'tenantry') return { system, signal, url: `${tenantry.otlpUrl}/v1/${signal}`, headers: () => ({ authorization: `Bearer ${tenantry.key}` }) };
  if (system === 'victoria-logs')
    return { system, signal, url: `${systems['victoria-logs'].url}/insert/opentelemetry/v1/logs`, headers: (r) => victoriaLogsTenant(r.tenant) };
  if (system === 'jaeger') return { system, signal, url: `${systems.jaeger.otlpUrl}/v1/traces`, headers: () => ({}) };
  if (system === 'prometheus') return { system, signal, url: `${systems.prometheus.url}/api/v1/otlp/v1/metrics`, headers: () => ({}) };
  return { system, signal, url: `${systems['victoria-metrics'].url}/opentelemetry/v1/metrics`, headers: () => ({}) };
}

const pidsOf = (systems: Systems): number[] => systemNames.map((n) => systems[n].pid);

/** Waits for every server to be idle, and says so when one does not settle in time. */
function settle(systems: Systems, why: string, maxMs = defaultIdle.maxMs): Promise<{ waitedMs: number; settled: boolean }> {
  return settleOrSay(pidsOf(systems), why, say, maxMs);
}

/** One load phase on one system with CPU accounting: the system's own and the machine's other processes'. */
async function measuredLoad(
  systems: Systems,
  factory: RequestFactory,
  system: SystemName,
  signal: Signal,
  options: { seconds?: number; requests?: number; probes?: VisibilityProbes; onAck?: (request: Request) => void },
): Promise<{ load: LoadResult; cpu: number; otherCores: number }> {
  const server = systems[system];
  const serversBefore = pidsOf(systems).map((p) => cpuSeconds(p));
  const before = cpuSeconds(server.pid);
  const machineBefore = machineCpuSeconds();
  const benchBefore = process.cpuUsage();
  const { probes, onAck } = options;
  const load = await closedLoop(ingestOf(systems, system, signal), factory, {
    clients,
    ...(options.seconds === undefined ? {} : { seconds: options.seconds }),
    ...(options.requests === undefined ? {} : { requests: options.requests }),
    onAck: (request, ack) => {
      probes?.offer(request, ack.at);
      onAck?.(request);
    },
  });
  const cpu = cpuSeconds(server.pid) - before;
  const servers = pidsOf(systems).reduce((sum, p, i) => sum + cpuSeconds(p) - (serversBefore[i] ?? 0), 0);
  const bench = process.cpuUsage(benchBefore);
  const machine = machineCpuSeconds().busy - machineBefore.busy;
  const otherCores = Math.max(0, (machine - servers - (bench.user + bench.system) / 1e6) / load.seconds);
  return { load, cpu, otherCores: Math.round(otherCores * 100) / 100 };
}

/** Folder of Tenantry's tables in its embedded ClickHouse (database `tenantry`). */
const tenantryTable = (systems: Systems, signal: Signal): string =>
  join(systems.tenantry.dataDir, 'clickhouse', 'data', 'tenantry', signal === 'logs' ? 'logs' : signal === 'traces' ? 'spans' : 'metrics');

/** The peer's own flush: what it holds in memory goes to its files (Jaeger's Badger and Prometheus' head have none to call: their WAL/value log is on disk already). */
async function peerFlush(systems: Systems, system: SystemName): Promise<void> {
  if (system !== 'victoria-logs' && system !== 'victoria-metrics') return;
  const response = await fetch(`${systems[system].url}/internal/force_flush`, { signal: AbortSignal.timeout(60_000) });
  await response.text();
  if (response.status >= 300) say(`${system} /internal/force_flush answered ${response.status}`);
}

/** A folder's bytes on disk once they have not changed for 3 s (bounded by `limitMs`). */
async function settledDiskBytes(path: string, limitMs: number): Promise<number> {
  const deadline = performance.now() + limitMs;
  let last = diskBytes(path);
  let stableSince = performance.now();
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = diskBytes(path);
    if (now !== last) {
      last = now;
      stableSince = performance.now();
      continue;
    }
    if (performance.now() - stableSince >= 3000) break;
  }
  return last;
}

/** Waits (bounded) until Tenantry's table holds `rows` rows: with a write-ahead log, rows reach ClickHouse after the ack. */
async function tenantryDrained(systems: Systems, signal: Signal, rows: number, limitMs: number): Promise<void> {
  const table = tenantryTable(systems, signal);
  const until = Date.now() + limitMs;
  while (activeParts(table, true).rows < rows && Date.now() < until) await sleep(250);
  const held = activeParts(table, true).rows;
  if (held < rows) say(`tenantry ${signal}: ${held} of ${rows} rows in ClickHouse after ${limitMs / 1000} s`);
}

/** Fixed corpus per signal: each peer, then Tenantry, each from idle to settled (after its own flush). */
async function corpus(systems: Systems, factory: RequestFactory, picks: Pick[]): Promise<{ results: CorpusResult[]; atRest: AtRest[] }> {
  const results: CorpusResult[] = [];
  const atRest: AtRest[] = [];
  for (const signal of signals) {
    for (const system of [...peersOf[signal], 'tenantry'] as const) {
      await settle(systems, `before the ${system} ${signal} corpus`);
      const server = systems[system];
      const before = cpuSeconds(server.pid);
      const started = performance.now();
      say(`corpus: ${corpusBodies} ${signal} bodies to ${system}`);
      // The picks for the queries: every 10th request of Tenantry's logs and traces corpus (each signal's trace ids are its own).
      const onAck =
        system === 'tenantry' && signal !== 'metrics'
          ? (r: Request): void => {
              if (r.seq % 10 === 0) picks.push({ signal, tenant: r.tenant, service: r.service, traceId: r.traceIds[r.traceIds.length - 1] ?? '' });
            }
          : undefined;
      const rowsBefore = system === 'tenantry' ? activeParts(tenantryTable(systems, signal), true).rows : 0;
      const { load, otherCores } = await measuredLoad(systems, factory, system, signal, { requests: corpusBodies, ...(onAck === undefined ? {} : { onAck }) });
      if (system === 'tenantry') await tenantryDrained(systems, signal, rowsBefore + load.items, 120_000);
      else await peerFlush(systems, system);
      const settled = await settle(systems, `after the ${system} ${signal} corpus`, 180_000);
      const cpu = cpuSeconds(server.pid) - before;
      const result: CorpusResult = {
        system,
        signal,
        items: load.items,
        requests: load.requests,
        cpuSeconds: Math.round(cpu * 100) / 100,
        microsPerItem: Math.round(((cpu * 1e6) / Math.max(1, load.items)) * 10) / 10,
        loadSeconds: load.seconds,
        settleSeconds: Math.round((performance.now() - started) / 100) / 10 - load.seconds,
        settled: settled.settled,
        otherCores,
        statuses: load.statuses,
      };
      say(`corpus ${system} ${signal}: ${JSON.stringify(result)}`);
      results.push(result);
      if (system === 'tenantry') {
        const parts = activeParts(tenantryTable(systems, signal));
        atRest.push({ system, signal, items: parts.rows, bytes: parts.bytes, detail: `${parts.parts} active parts, ${parts.rows} rows` });
      } else {
        // A peer's store holds this signal only: its whole data folder, as allocated on disk, once it stops
        // growing (VictoriaLogs and VictoriaMetrics keep flushed parts in memory a few seconds before writing them).
        const bytes = await settledDiskBytes(systems[system].dataDir, 30_000);
        atRest.push({
          system,
          signal,
          items: load.items,
          bytes,
          detail: `data folder on disk after ${system === 'victoria-logs' || system === 'victoria-metrics' ? '/internal/force_flush' : 'settling (no flush call)'}, unchanged for 3 s`,
        });
      }
    }
  }
  return { results, atRest };
}

/** Alternating load phases: each peer then Tenantry, per signal, `rounds` times. */
async function throughput(systems: Systems, factory: RequestFactory): Promise<PhaseResult[]> {
  const results: PhaseResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const signal of signals) {
      for (const system of [...peersOf[signal], 'tenantry'] as const) {
        await settle(systems, `before ${system} ${signal} round ${round}`, 60_000);
        const table = tenantryTable(systems, signal);
        const rowsBefore = system === 'tenantry' ? activeParts(table, true).rows : 0;
        const { load, cpu, otherCores } = await measuredLoad(systems, factory, system, signal, { seconds });
        // The peers answer once the items are in their own memory and log; Tenantry with a write-ahead
        // log may acknowledge faster than it inserts: wait (bounded) until every acknowledged row is in
        // ClickHouse, and count that time too for the sustained rate.
        const drainStarted = performance.now();
        if (system === 'tenantry') await tenantryDrained(systems, signal, rowsBefore + load.items, 180_000);
        const drainSeconds = Math.round((performance.now() - drainStarted) / 100) / 10;
        const result: PhaseResult = {
          round,
          system,
          signal,
          ...load,
          cpuMicrosPerItem: Math.round(((cpu * 1e6) / Math.max(1, load.items)) * 10) / 10,
          cores: Math.round((cpu / load.seconds) * 100) / 100,
          otherCores,
          drainSeconds,
          sustainedItemsPerSecond: Math.round(load.items / (load.seconds + drainSeconds)),
        };
        say(
          `${system} ${signal} round ${round}: ${load.itemsPerSecond} items/s acknowledged, ${result.sustainedItemsPerSecond} items/s stored (drain ${drainSeconds} s), p50 ${load.p50ms} ms, p99 ${load.p99ms} ms, ${result.cpuMicrosPerItem} µs CPU/item (${result.cores} cores), others ${otherCores} cores, ${JSON.stringify(load.statuses)}`,
        );
        results.push(result);
      }
    }
  }
  return results;
}

/** Each system at the same offered rate (open loop, `--rate` items/s), in alternating phases: ack latency where none is pushed to its limit. */
async function sameRateLatency(systems: Systems, factory: RequestFactory): Promise<SameRateResult[]> {
  const results: SameRateResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const signal of signals) {
      for (const system of [...peersOf[signal], 'tenantry'] as const) {
        await settle(systems, `before ${system} ${signal} at ${sameRate} items/s`, 60_000);
        const load = await openLoop(ingestOf(systems, system, signal), factory, { itemsPerSecond: sameRate, seconds, maxInFlight: 64 });
        say(
          `${system} ${signal} at ${sameRate} items/s offered, round ${round}: ${load.itemsPerSecond} acknowledged/s, p50 ${load.p50ms} ms, p99 ${load.p99ms} ms, ${load.skipped} sends skipped (64 in flight), ${JSON.stringify(load.statuses)}`,
        );
        results.push({ round, system, signal, ...load });
      }
    }
  }
  return results;
}

/** The same load with probes: ack → queryable, per system and query. */
async function visibility(systems: Systems, factory: RequestFactory): Promise<Report['visibility']> {
  const out: Report['visibility'] = [];
  const plans = [
    { system: 'victoria-logs', signal: 'logs', queries: [victoriaLogsQuery(systems['victoria-logs'])] },
    { system: 'tenantry', signal: 'logs', queries: [tenantryQuery(systems.tenantry, 'logs')] },
    { system: 'jaeger', signal: 'traces', queries: [jaegerTraceByIdQuery(systems.jaeger)] },
    { system: 'tenantry', signal: 'traces', queries: [tenantryQuery(systems.tenantry, 'traces')] },
  ] as const;
  for (const plan of plans) {
    await settle(systems, `before ${plan.system} ${plan.signal} visibility`, 60_000);
    const probes = new VisibilityProbes(plan.queries, { everyMs: 1000, pollMs: 100, limitMs: 60_000, maxProbes: 20 * plan.queries.length });
    const { load } = await measuredLoad(systems, factory, plan.system, plan.signal, { seconds, probes });
    for (const result of await probes.results()) {
      say(
        `visibility ${result.label}: p50 ${result.p50ms} ms, max ${result.maxMs} ms over ${result.probes} probes (${result.missed} missed), under ${load.itemsPerSecond} items/s`,
      );
      out.push({ system: plan.system, signal: plan.signal, ...result, itemsPerSecond: load.itemsPerSecond });
    }
  }
  return out;
}

/** Query timings on the corpus, then (Tenantry stopped, restarted after) where its time goes where it loses. */
async function queries(systems: Systems, picks: readonly Pick[], window: Window, report: Report, started: RunningServer[]): Promise<void> {
  await settle(systems, 'before timing queries', 180_000);
  const cases = queryCases(systems['victoria-logs'], systems.jaeger);
  for (const signal of ['logs', 'traces'] as const) {
    const mine = picks.filter((p) => p.signal === signal);
    const timed = await timeQueries(
      systems.tenantry,
      cases.filter((c) => c.signal === signal),
      mine,
      window,
      queryCalls,
    );
    for (const t of timed) say(`query ${t.name} on ${t.system}: p50 ${t.p50} ms, p95 ${t.p95} ms, ${t.n} answers, ${t.failures} failed`);
    report.queries.push(...timed);
  }
  const lost = report.queries.filter(
    (t) => t.system === 'tenantry' && !(t.p95 <= (report.queries.find((p) => p.name === t.name && p.system !== 'tenantry')?.p95 ?? Number.POSITIVE_INFINITY)),
  );
  if (lost.length === 0) return;
  say(`Tenantry slower at p95 in ${lost.length} cases: stopping it to replay them in-process`);
  const { tenantry } = systems;
  await tenantry.stop();
  started.splice(started.indexOf(tenantry), 1);
  for (const signal of ['logs', 'traces'] as const) {
    const mine = picks.filter((p) => p.signal === signal);
    report.breakdowns.push(
      ...(await breakdowns(
        tenantry.dataDir,
        cases.filter((c) => c.signal === signal),
        report.queries,
        mine,
        window,
        queryCalls,
      )),
    );
  }
  systems.tenantry = await startTenantryAll(tenantryRoot, tenantry.dataDir);
  started.push(systems.tenantry);
  say(`tenantry restarted on its data (pid ${systems.tenantry.pid})`);
}

async function main(): Promise<void> {
  const binaries = ensurePeerBinaries(say);
  const root = mkdtempSync(join(tmpdir(), 'tenantry-peers-'));
  const started: RunningServer[] = [];
  const stopAll = async (): Promise<void> => {
    await Promise.all(started.splice(0).map((s) => s.stop().catch(() => undefined)));
  };
  const interrupted = (): void => {
    void stopAll().finally(() => {
      if (!args.keep) rmSync(root, { recursive: true, force: true });
      process.exit(130);
    });
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const loadBefore = loadavg();
  try {
    say(
      `temp dir ${root}; Tenantry from ${tenantryRoot}; VictoriaLogs ${peerVersions.victoriaLogs}, Jaeger ${peerVersions.jaeger}, Prometheus ${peerVersions.prometheus}, VictoriaMetrics ${peerVersions.victoriaMetrics}`,
    );
    const factory = new RequestFactory();
    say(
      `request bodies: logs ${factory.size('logs')} B, traces ${factory.size('traces')} B, metrics ${factory.size('metrics')} B (${itemsPerRequest} items each)`,
    );
    const starting = [
      startVictoriaLogs(binaries.victoriaLogs, join(root, 'victoria-logs')),
      startJaeger(binaries.jaeger, join(root, 'jaeger')),
      startPrometheus(binaries.prometheus, join(root, 'prometheus')),
      startVictoriaMetrics(binaries.victoriaMetrics, join(root, 'victoria-metrics')),
      startTenantryAll(tenantryRoot, join(root, 'tenantry')),
    ] as const;
    const settledStarts = await Promise.allSettled(starting);
    for (const s of settledStarts) if (s.status === 'fulfilled') started.push(s.value);
    const failed = settledStarts.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const [vl, jaeger, prometheus, vm, tenantry] = await Promise.all(starting);
    const systems: Systems = { tenantry, 'victoria-logs': vl, jaeger, prometheus, 'victoria-metrics': vm };
    say(`started: ${systemNames.map((n) => `${n} (pid ${systems[n].pid})`).join(', ')}`);
    const report: Report = {
      options: { only, seconds, rounds, corpusBodies, clients, queryCalls, tenantryRoot, peerVersions },
      machine: { cores: availableParallelism(), loadBefore: loadBefore.map((l) => Math.round(l * 100) / 100), loadAfter: [] },
      corpus: [],
      atRest: [],
      queries: [],
      breakdowns: [],
      throughput: [],
      sameRate: [],
      visibility: [],
    };
    try {
      const picks: Pick[] = [];
      const corpusStart = Math.floor(Date.now() / 1000) - 60;
      if (run('corpus') || run('queries')) {
        const c = await corpus(systems, factory, picks);
        report.corpus = c.results;
        report.atRest = c.atRest;
        say(`at rest: ${JSON.stringify(report.atRest)}`);
      }
      if (run('queries')) await queries(systems, picks, { startSec: corpusStart, endSec: Math.ceil(Date.now() / 1000) + 60 }, report, started);
      if (run('throughput')) report.throughput = await throughput(systems, factory);
      if (run('same-rate')) report.sameRate = await sameRateLatency(systems, factory);
      if (run('visibility')) report.visibility = await visibility(systems, factory);
    } catch (error) {
      for (const s of started) say(`${s.name} output:\n${s.tail()}`);
      throw error;
    }
    report.machine.loadAfter = loadavg().map((l) => Math.round(l * 100) / 100);
    printReport(report);
  } finally {
    await stopAll();
    if (args.keep) say(`kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
}

await main();
