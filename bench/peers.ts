// npm run bench:peers — Tenantry `all` beside Loki and Tempo single binaries
// on one machine, fed the same OTLP/protobuf bodies (issue 19): throughput,
// ack latency and CPU per item under 8 closed-loop clients in alternating
// phases; ack latency of each system at one offered rate (an open loop); total CPU per item of a fixed corpus from idle to settled (deferred
// work included) and its bytes at rest; the delay from an acknowledgement to
// the item being queryable. One run, every server on 127.0.0.1 in a temp dir,
// all stopped and removed at the end. Not a test: it prints figures; the
// ratios within one run are what count on a shared machine.
//
//   bash test/peers/build-peers.sh           # once: Loki and Tempo binaries
//   npm run bench:peers                      # everything (~7 min on an idle 2-core machine)
//   npm run bench:peers -- --only=throughput --seconds=5
//   options: --only=corpus,throughput,same-rate,visibility  --seconds=N (load phase)  --rounds=N
//            --corpus=N (bodies per signal)  --clients=N  --tenantry-root=DIR (another checkout)
//            --rate=N (items/s offered to every system in the same-rate part; default 20000)
//            --keep (keep the temp dir)
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { findPeerBinaries, lokiVersion, tempoVersion } from '../test/peers/peer-binaries.ts';
import { activeParts, lokiAtRest, tempoAtRest } from './peers/at-rest.ts';
import { closedLoop, openLoop } from './peers/load.ts';
import type { Ingest, LoadResult } from './peers/load.ts';
import { RequestFactory, itemsPerRequest, spansPerTrace } from './peers/payloads.ts';
import type { Signal } from './peers/payloads.ts';
import { cpuSeconds, defaultIdle, machineCpuSeconds, settleOrSay } from './peers/process-cpu.ts';
import { printReport } from './peers/report.ts';
import type { CorpusResult, PhaseResult, Report, SameRateResult } from './peers/report.ts';
import { defaultTenantryRoot, startLoki, startTempo, startTenantryAll } from './peers/servers.ts';
import type { Loki, RunningServer, Tempo, Tenantry } from './peers/servers.ts';
import { VisibilityProbes, lokiQuery, tempoSearchQuery, tempoTraceByIdQuery, tenantryQuery } from './peers/visibility.ts';

const parts = ['corpus', 'throughput', 'same-rate', 'visibility'] as const;
type Part = (typeof parts)[number];

const { values: args } = parseArgs({
  options: {
    only: { type: 'string' }, seconds: { type: 'string', default: '15' }, rounds: { type: 'string', default: '2' },
    corpus: { type: 'string', default: '600' }, clients: { type: 'string', default: '8' }, rate: { type: 'string', default: '20000' },
    'tenantry-root': { type: 'string' }, keep: { type: 'boolean', default: false },
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
const tenantryRoot = resolve(args['tenantry-root'] ?? defaultTenantryRoot);

const say = (line: string): void => { process.stderr.write(`[bench:peers ${new Date().toISOString().slice(11, 19)}] ${line}\n`); };

interface Systems { readonly loki: Loki; readonly tempo: Tempo; readonly tenantry: Tenantry }

function ingestOf(systems: Systems, system: 'loki' | 'tempo' | 'tenantry', signal: Signal): Ingest {
  if (system === 'tenantry') {
    const { tenantry } = systems;
    return { system, signal, url: `${tenantry.otlpUrl}/v1/${signal}`, headers: () => ({ authorization: `Bearer ${tenantry.key}` }) };
  }
  if (system === 'loki') return { system, signal, url: `${systems.loki.url}/otlp/v1/logs`, headers: (r) => ({ 'X-Scope-OrgID': r.tenant }) };
  return { system, signal, url: `${systems.tempo.otlpUrl}/v1/traces`, headers: (r) => ({ 'X-Scope-OrgID': r.tenant }) };
}

const pidsOf = (systems: Systems): number[] => [systems.loki.pid, systems.tempo.pid, systems.tenantry.pid];

/** Waits for every server to be idle, and says so when one does not settle in time. */
function settle(systems: Systems, why: string, maxMs = defaultIdle.maxMs): Promise<{ waitedMs: number; settled: boolean }> {
  return settleOrSay(pidsOf(systems), why, say, maxMs);
}

/** One load phase on one system with CPU accounting: the system's own and the machine's other processes'. */
async function measuredLoad(systems: Systems, factory: RequestFactory, system: 'loki' | 'tempo' | 'tenantry', signal: Signal, options: { seconds?: number; requests?: number; probes?: VisibilityProbes }): Promise<{ load: LoadResult; cpu: number; otherCores: number }> {
  const server = systems[system];
  const serversBefore = pidsOf(systems).map((p) => cpuSeconds(p));
  const before = cpuSeconds(server.pid);
  const machineBefore = machineCpuSeconds();
  const benchBefore = process.cpuUsage();
  const probes = options.probes;
  const load = await closedLoop(ingestOf(systems, system, signal), factory, {
    clients, ...(options.seconds === undefined ? {} : { seconds: options.seconds }), ...(options.requests === undefined ? {} : { requests: options.requests }),
    ...(probes === undefined ? {} : { onAck: (request, ack) => { probes.offer(request, ack.at); } }),
  });
  const cpu = cpuSeconds(server.pid) - before;
  const servers = pidsOf(systems).reduce((sum, p, i) => sum + cpuSeconds(p) - (serversBefore[i] ?? 0), 0);
  const bench = process.cpuUsage(benchBefore);
  const machine = machineCpuSeconds().busy - machineBefore.busy;
  const otherCores = Math.max(0, (machine - servers - (bench.user + bench.system) / 1e6) / load.seconds);
  return { load, cpu, otherCores: Math.round(otherCores * 100) / 100 };
}

const peerOf = (signal: Signal): 'loki' | 'tempo' => (signal === 'logs' ? 'loki' : 'tempo');

/** Fixed corpus per signal: peer then Tenantry, each from idle to settled (after /flush for the peer). */
async function corpus(systems: Systems, factory: RequestFactory): Promise<CorpusResult[]> {
  const results: CorpusResult[] = [];
  for (const signal of ['logs', 'traces'] as const) {
    for (const system of [peerOf(signal), 'tenantry'] as const) {
      await settle(systems, `before the ${system} ${signal} corpus`);
      const server = systems[system];
      const before = cpuSeconds(server.pid);
      const started = performance.now();
      say(`corpus: ${corpusBodies} ${signal} bodies to ${system}`);
      const { load, otherCores } = await measuredLoad(systems, factory, system, signal, { requests: corpusBodies });
      if (system !== 'tenantry') {
        const response = await fetch(`${(server as Loki | Tempo).url}/flush`, { method: 'POST', signal: AbortSignal.timeout(60_000) });
        await response.text();
        if (response.status >= 300) say(`${system} /flush answered ${response.status}`);
      }
      let settled = await settle(systems, `after the ${system} ${signal} corpus`, 180_000);
      if (system === 'tempo') {
        // /flush enqueues the block flush, and one call does not always cut every trace: wait
        // (bounded) until the blocks' meta.json count every trace, asking /flush again every 5 s.
        const traces = load.items / spansPerTrace;
        const until = Date.now() + 60_000;
        for (let i = 1; tempoAtRest(systems.tempo.dataDir).traces < traces && Date.now() < until; i++) {
          await new Promise((r) => setTimeout(r, 500));
          if (i % 10 === 0) await (await fetch(`${systems.tempo.url}/flush`, { method: 'POST', signal: AbortSignal.timeout(60_000) })).text();
        }
        if (tempoAtRest(systems.tempo.dataDir).traces < traces) say(`tempo: ${tempoAtRest(systems.tempo.dataDir).traces} of ${traces} traces in flushed blocks after 60 s`);
        settled = await settle(systems, 'after the tempo blocks were flushed', 180_000);
      }
      if (system === 'tenantry') {
        // With a write-ahead log, rows reach ClickHouse after the ack: wait until the table holds
        // the corpus (bounded), then for the merges that follow.
        const table = join(tenantryTables(systems), signal === 'logs' ? 'logs' : 'spans');
        const until = Date.now() + 120_000;
        while (activeParts(table).rows < load.items && Date.now() < until) await new Promise((r) => setTimeout(r, 500));
        if (activeParts(table).rows < load.items) say(`tenantry ${signal}: ${activeParts(table).rows} of ${load.items} rows in ClickHouse after 120 s`);
        settled = await settle(systems, `after the tenantry ${signal} rows arrived`, 180_000);
      }
      const cpu = cpuSeconds(server.pid) - before;
      const result: CorpusResult = {
        system, signal, items: load.items, requests: load.requests, cpuSeconds: Math.round(cpu * 100) / 100, microsPerItem: Math.round((cpu * 1e6) / Math.max(1, load.items) * 10) / 10,
        loadSeconds: load.seconds, settleSeconds: Math.round((performance.now() - started) / 100) / 10 - load.seconds, settled: settled.settled, otherCores, statuses: load.statuses,
      };
      say(`corpus ${system} ${signal}: ${JSON.stringify(result)}`);
      results.push(result);
    }
  }
  return results;
}

/** Folder of Tenantry's tables in its embedded ClickHouse (database `tenantry`). */
const tenantryTables = (systems: Systems): string => join(systems.tenantry.dataDir, 'clickhouse', 'data', 'tenantry');

function atRest(systems: Systems): Report['atRest'] {
  const data = tenantryTables(systems);
  return { loki: lokiAtRest(systems.loki.dataDir), tempo: tempoAtRest(systems.tempo.dataDir), tenantryLogs: activeParts(join(data, 'logs')), tenantrySpans: activeParts(join(data, 'spans')) };
}

/** Alternating load phases: Loki logs, Tenantry logs, Tempo spans, Tenantry spans, `rounds` times. */
async function throughput(systems: Systems, factory: RequestFactory): Promise<PhaseResult[]> {
  const results: PhaseResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const [system, signal] of [['loki', 'logs'], ['tenantry', 'logs'], ['tempo', 'traces'], ['tenantry', 'traces']] as const) {
      await settle(systems, `before ${system} ${signal} round ${round}`, 60_000);
      const table = join(tenantryTables(systems), signal === 'logs' ? 'logs' : 'spans');
      const rowsBefore = system === 'tenantry' ? activeParts(table, true).rows : 0;
      const { load, cpu, otherCores } = await measuredLoad(systems, factory, system, signal, { seconds });
      // Loki and Tempo answer from their ingesters' memory at once; Tenantry with a write-ahead log
      // may acknowledge faster than it inserts: wait (bounded) until every acknowledged row is in
      // ClickHouse, and count that time too for the sustained rate.
      const drainStarted = performance.now();
      if (system === 'tenantry') {
        while (activeParts(table, true).rows < rowsBefore + load.items && performance.now() - drainStarted < 180_000) await new Promise((r) => setTimeout(r, 250));
      }
      const drainSeconds = Math.round((performance.now() - drainStarted) / 100) / 10;
      const result: PhaseResult = {
        round, system, signal, ...load, cpuMicrosPerItem: Math.round((cpu * 1e6) / Math.max(1, load.items) * 10) / 10, cores: Math.round((cpu / load.seconds) * 100) / 100, otherCores,
        drainSeconds, sustainedItemsPerSecond: Math.round(load.items / (load.seconds + drainSeconds)),
      };
      say(`${system} ${signal} round ${round}: ${load.itemsPerSecond} items/s acknowledged, ${result.sustainedItemsPerSecond} items/s stored (drain ${drainSeconds} s), p50 ${load.p50ms} ms, p99 ${load.p99ms} ms, ${result.cpuMicrosPerItem} µs CPU/item (${result.cores} cores), others ${otherCores} cores, ${JSON.stringify(load.statuses)}`);
      results.push(result);
    }
  }
  return results;
}

/**
 * Each system at the same offered rate (open loop, `--rate` items/s), in
 * alternating phases: ack latency where neither is pushed to its limit.
 */
async function sameRateLatency(systems: Systems, factory: RequestFactory): Promise<SameRateResult[]> {
  const results: SameRateResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const [system, signal] of [['loki', 'logs'], ['tenantry', 'logs'], ['tempo', 'traces'], ['tenantry', 'traces']] as const) {
      await settle(systems, `before ${system} ${signal} at ${sameRate} items/s`, 60_000);
      const load = await openLoop(ingestOf(systems, system, signal), factory, { itemsPerSecond: sameRate, seconds, maxInFlight: 64 });
      say(`${system} ${signal} at ${sameRate} items/s offered, round ${round}: ${load.itemsPerSecond} acknowledged/s, p50 ${load.p50ms} ms, p99 ${load.p99ms} ms, ${load.skipped} sends skipped (64 in flight), ${JSON.stringify(load.statuses)}`);
      results.push({ round, system, signal, ...load });
    }
  }
  return results;
}

/** The same load with probes: ack → queryable, per system and query. */
async function visibility(systems: Systems, factory: RequestFactory): Promise<Report['visibility']> {
  const out: Report['visibility'] = [];
  const plans = [
    { system: 'loki', signal: 'logs', queries: [lokiQuery(systems.loki)] },
    { system: 'tenantry', signal: 'logs', queries: [tenantryQuery(systems.tenantry, 'logs')] },
    { system: 'tempo', signal: 'traces', queries: [tempoTraceByIdQuery(systems.tempo), tempoSearchQuery(systems.tempo)] },
    { system: 'tenantry', signal: 'traces', queries: [tenantryQuery(systems.tenantry, 'traces')] },
  ] as const;
  for (const plan of plans) {
    await settle(systems, `before ${plan.system} ${plan.signal} visibility`, 60_000);
    const probes = new VisibilityProbes(plan.queries, { everyMs: 1000, pollMs: 100, limitMs: 60_000, maxProbes: 20 * plan.queries.length });
    const { load } = await measuredLoad(systems, factory, plan.system, plan.signal, { seconds, probes });
    for (const result of await probes.results()) {
      say(`visibility ${result.label}: p50 ${result.p50ms} ms, max ${result.maxMs} ms over ${result.probes} probes (${result.missed} missed), under ${load.itemsPerSecond} items/s`);
      out.push({ system: plan.system, signal: plan.signal, ...result, itemsPerSecond: load.itemsPerSecond });
    }
  }
  return out;
}

async function main(): Promise<void> {
  const found = findPeerBinaries();
  if (!found.ok) throw new Error(found.reason);
  const root = mkdtempSync(join(tmpdir(), 'tenantry-peers-'));
  const started: RunningServer[] = [];
  const stopAll = async (): Promise<void> => { await Promise.all(started.splice(0).map((s) => s.stop().catch(() => undefined))); };
  const interrupted = (): void => { void stopAll().finally(() => { if (!args.keep) rmSync(root, { recursive: true, force: true }); process.exit(130); }); };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const loadBefore = loadavg();
  try {
    say(`temp dir ${root}; Tenantry from ${tenantryRoot}; Loki ${lokiVersion}, Tempo ${tempoVersion}`);
    const factory = new RequestFactory();
    say(`request bodies: logs ${factory.size('logs')} B, traces ${factory.size('traces')} B (${itemsPerRequest} items each)`);
    const loki = await startLoki(found.binaries.loki, join(root, 'loki'));
    started.push(loki);
    const tempo = await startTempo(found.binaries.tempo, join(root, 'tempo'));
    started.push(tempo);
    const tenantry = await startTenantryAll(tenantryRoot, join(root, 'tenantry'));
    started.push(tenantry);
    const systems: Systems = { loki, tempo, tenantry };
    say(`started: loki ${loki.url} (pid ${loki.pid}), tempo ${tempo.url} otlp ${tempo.otlpUrl} (pid ${tempo.pid}), tenantry ${tenantry.otlpUrl} api ${tenantry.apiUrl} (pid ${tenantry.pid})`);
    const report: Report = {
      options: { only, seconds, rounds, corpusBodies, clients, tenantryRoot, lokiVersion, tempoVersion },
      machine: { cores: availableParallelism(), loadBefore: loadBefore.map((l) => Math.round(l * 100) / 100), loadAfter: [] },
      corpus: [], atRest: undefined, throughput: [], sameRate: [], visibility: [],
    };
    try {
      if (run('corpus')) {
        report.corpus = await corpus(systems, factory);
        report.atRest = atRest(systems);
        say(`at rest: ${JSON.stringify(report.atRest)}`);
      }
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
