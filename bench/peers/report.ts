// The figures bench:peers prints: one Markdown table of Tenantry beside the
// peer measured in the same run for each signal (VictoriaLogs for logs, Jaeger
// for traces, Prometheus and VictoriaMetrics for metrics) with the ratio, the
// query timings, where Tenantry's time goes where it loses, the details behind
// each cell, and the whole report as one JSON line for the record.
import type { Signal } from './payloads.ts';
import { breakdownLines } from './breakdown.ts';
import type { Breakdown } from './breakdown.ts';
import type { LoadResult, OpenLoopResult } from './load.ts';
import type { QueryTiming } from './queries.ts';
import type { SystemName } from './servers.ts';
import type { VisibilityResult } from './visibility.ts';

export interface PhaseResult extends LoadResult {
  readonly round: number;
  readonly system: SystemName;
  readonly signal: Signal;
  /** CPU time of the system's process per acknowledged item, during the phase. */
  readonly cpuMicrosPerItem: number;
  /** Cores the system's process used during the phase. */
  readonly cores: number;
  /** Cores used by the machine's other processes (not the servers, not this bench) during the phase. */
  readonly otherCores: number;
  /** Seconds after the phase until every acknowledged item was stored (Tenantry's ClickHouse tables; 0 for the peers). */
  readonly drainSeconds: number;
  /** Acknowledged items per second of phase plus drain. */
  readonly sustainedItemsPerSecond: number;
}

export interface SameRateResult extends OpenLoopResult {
  readonly round: number;
  readonly system: SystemName;
  readonly signal: Signal;
}

export interface CorpusResult {
  readonly system: SystemName;
  readonly signal: Signal;
  readonly items: number;
  readonly requests: number;
  readonly cpuSeconds: number;
  readonly microsPerItem: number;
  readonly loadSeconds: number;
  readonly settleSeconds: number;
  readonly settled: boolean;
  readonly otherCores: number;
  readonly statuses: Record<string, number>;
}

/** Bytes at rest of one system and signal after its own flush. */
export interface AtRest {
  readonly system: SystemName;
  readonly signal: Signal;
  readonly items: number;
  readonly bytes: number;
  readonly detail: string;
}

export interface Report {
  readonly options: Record<string, unknown>;
  readonly machine: { readonly cores: number; readonly loadBefore: readonly number[]; loadAfter: readonly number[] };
  corpus: CorpusResult[];
  atRest: AtRest[];
  queries: QueryTiming[];
  breakdowns: Breakdown[];
  throughput: PhaseResult[];
  sameRate: SameRateResult[];
  visibility: (VisibilityResult & { readonly system: SystemName; readonly signal: Signal; readonly itemsPerSecond: number })[];
}

/** The peers each signal is compared with, in the table's order. */
export const peersOf: Record<Signal, readonly SystemName[]> = { logs: ['victoria-logs'], traces: ['jaeger'], metrics: ['prometheus', 'victoria-metrics'] };
const unit: Record<Signal, string> = { logs: 'log', traces: 'span', metrics: 'point' };

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const kilo = (x: number): string => `${Math.round(x / 1000)}k`;
const num = (x: number): string => (!Number.isFinite(x) ? '—' : x >= 100 ? Math.round(x).toLocaleString('en-US') : String(Math.round(x * 10) / 10));
const ratio = (a: number, b: number): string => (b > 0 && Number.isFinite(a) ? `${(a / b).toFixed(2)}×` : '—');

function range(xs: readonly number[], format: (x: number) => string): string {
  if (xs.length === 0) return '—';
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return format(lo) === format(hi) ? format(lo) : `${format(lo)}–${format(hi)}`;
}

/** The Markdown tables (stdout), the details, then the JSON line. */
export function reportText(r: Report): string {
  const out: string[] = [];
  const rows: string[][] = [];
  const signals = ['logs', 'traces', 'metrics'] as const;
  for (const signal of signals) {
    for (const peer of peersOf[signal]) {
      const u = unit[signal];
      const phases = (system: SystemName): PhaseResult[] => r.throughput.filter((p) => p.system === system && p.signal === signal);
      const [mine, theirs] = [phases('tenantry'), phases(peer)];
      const line = (label: string, f: (p: PhaseResult) => number, format: (x: number) => string, suffix: string): void => {
        if (mine.length > 0 && theirs.length > 0)
          rows.push([
            label,
            signal,
            peer,
            `${range(theirs.map(f), format)}${suffix}`,
            `${range(mine.map(f), format)}${suffix}`,
            ratio(mean(mine.map(f)), mean(theirs.map(f))),
          ]);
      };
      line(`throughput acknowledged (${r.options['clients'] as number} clients)`, (p) => p.itemsPerSecond, kilo, ` ${u}s/s`);
      line('throughput stored (phase + drain)', (p) => p.sustainedItemsPerSecond, kilo, ` ${u}s/s`);
      line('ack p50', (p) => p.p50ms, num, ' ms');
      line('ack p99', (p) => p.p99ms, num, ' ms');
      line('CPU during the load phases', (p) => p.cpuMicrosPerItem, num, ` µs/${u}`);
      const same = (system: SystemName): SameRateResult[] => r.sameRate.filter((p) => p.system === system && p.signal === signal);
      for (const [label, f] of [
        ['p50', (p: SameRateResult) => p.p50ms],
        ['p99', (p: SameRateResult) => p.p99ms],
      ] as const) {
        const [a, b] = [same('tenantry'), same(peer)];
        if (a.length > 0 && b.length > 0)
          rows.push([
            `ack ${label} at the same offered rate (${kilo(a[0]?.offeredItemsPerSecond ?? 0)} items/s)`,
            signal,
            peer,
            `${range(b.map(f), num)} ms`,
            `${range(a.map(f), num)} ms`,
            ratio(mean(a.map(f)), mean(b.map(f))),
          ]);
      }
      const corpus = (system: SystemName): CorpusResult | undefined => r.corpus.find((x) => x.system === system && x.signal === signal);
      const [cm, cp] = [corpus('tenantry'), corpus(peer)];
      if (cm !== undefined && cp !== undefined)
        rows.push([
          `CPU, total, idle to settled (${r.options['corpusBodies'] as number} bodies)`,
          signal,
          peer,
          `${num(cp.microsPerItem)} µs/${u}`,
          `${num(cm.microsPerItem)} µs/${u}`,
          ratio(cm.microsPerItem, cp.microsPerItem),
        ]);
      const rest = (system: SystemName): AtRest | undefined => r.atRest.find((x) => x.system === system && x.signal === signal);
      const [rm, rp] = [rest('tenantry'), rest(peer)];
      if (rm !== undefined && rp !== undefined) {
        const per = (x: AtRest): number => x.bytes / Math.max(1, x.items);
        rows.push(['bytes at rest after its own flush', signal, peer, `${num(per(rp))} B/${u}`, `${num(per(rm))} B/${u}`, ratio(per(rm), per(rp))]);
      }
      const vis = (system: SystemName): string =>
        r.visibility
          .filter((x) => x.system === system && x.signal === signal)
          .map((x) => `${num(x.p50ms)} / ${num(x.maxMs)} ms${x.missed > 0 ? ` (${x.missed} missed)` : ''}`)
          .join('; ');
      if (vis('tenantry') !== '' && vis(peer) !== '') rows.push(['visibility, ack → queryable, p50 / max', signal, peer, vis(peer), vis('tenantry'), '']);
    }
  }
  out.push(
    '',
    '| per item | signal | peer | peer | Tenantry | Tenantry / peer |',
    '|---|---|---|---|---|---|',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
    '',
  );
  if (r.queries.length > 0) {
    out.push(
      `| query (${r.options['queryCalls'] as number} calls each, systems taking turns) | peer | peer p50 / p95 ms | Tenantry p50 / p95 ms | p95 ratio | failures T / peer |`,
      '|---|---|---|---|---|---|',
    );
    for (const t of r.queries.filter((q) => q.system === 'tenantry')) {
      const peer = r.queries.find((q) => q.name === t.name && q.system !== 'tenantry');
      if (peer === undefined) continue;
      out.push(
        `| ${t.name} | ${peer.system} | ${num(peer.p50)} / ${num(peer.p95)} | ${num(t.p50)} / ${num(t.p95)} | ${ratio(t.p95, peer.p95)} | ${t.failures} / ${peer.failures} |`,
      );
    }
    out.push('');
  }
  out.push(...breakdownLines(r.breakdowns));
  out.push('', `Machine: ${r.machine.cores} cores, load average ${r.machine.loadBefore.join(' ')} before, ${r.machine.loadAfter.join(' ')} after.`);
  if (r.throughput.length > 0) {
    out.push('', "Load phases (cores = the system's process; others = the machine's other processes, not the servers or this bench):");
    for (const p of r.throughput) {
      out.push(
        `  round ${p.round} ${p.system.padEnd(16)} ${p.signal.padEnd(7)} ${String(p.itemsPerSecond).padStart(7)} items/s  stored ${String(p.sustainedItemsPerSecond).padStart(7)}/s (drain ${p.drainSeconds} s)  p50 ${String(p.p50ms).padStart(5)} ms  p99 ${String(p.p99ms).padStart(5)} ms  ${String(p.cpuMicrosPerItem).padStart(5)} µs/item  ${p.cores} cores  others ${p.otherCores} cores  ${JSON.stringify(p.statuses)}`,
      );
    }
  }
  if (r.sameRate.length > 0) {
    out.push('', 'Same offered rate (open loop; skipped = sends due while 64 requests were outstanding):');
    for (const p of r.sameRate)
      out.push(
        `  round ${p.round} ${p.system.padEnd(16)} ${p.signal.padEnd(7)} offered ${p.offeredItemsPerSecond}/s  acknowledged ${p.itemsPerSecond}/s  p50 ${String(p.p50ms).padStart(5)} ms  p99 ${String(p.p99ms).padStart(5)} ms  skipped ${p.skipped}  ${JSON.stringify(p.statuses)}`,
      );
  }
  if (r.corpus.length > 0) {
    out.push('', "Corpus (CPU from idle before the load to settled after it, the peer's own flush included):");
    for (const c of r.corpus)
      out.push(
        `  ${c.system.padEnd(16)} ${c.signal.padEnd(7)} ${c.items} items  ${c.cpuSeconds} CPU s  ${c.microsPerItem} µs/item  load ${c.loadSeconds} s  settle ${Math.round(c.settleSeconds * 10) / 10} s${c.settled ? '' : ' (did not settle)'}  others ${c.otherCores} cores  ${JSON.stringify(c.statuses)}`,
      );
  }
  if (r.atRest.length > 0) {
    out.push('', 'At rest:');
    for (const a of r.atRest) out.push(`  ${a.system.padEnd(16)} ${a.signal.padEnd(7)} ${a.items} items, ${a.bytes} B (${a.detail})`);
  }
  if (r.visibility.length > 0) {
    out.push('', 'Visibility (delays in ms, sorted):');
    for (const v of r.visibility)
      out.push(`  ${v.label} at ${v.itemsPerSecond} items/s: ${v.delaysMs.join(' ')}${v.missed > 0 ? ` + ${v.missed} missed` : ''}`);
  }
  return `${out.join('\n')}\n\n${JSON.stringify(r)}\n`;
}

/** Prints the report on stdout. */
export function printReport(r: Report): void {
  process.stdout.write(reportText(r));
}
