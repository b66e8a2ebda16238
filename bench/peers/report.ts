// The figures bench:peers prints: the per-item table of issue 19 (Loki /
// Tempo / Tenantry / ratio) as Markdown, the details behind each cell (other
// processes' load, settle times, rows found at rest), and the whole report as
// one JSON line for the record.
import { spansPerTrace } from './payloads.ts';
import type { Signal } from './payloads.ts';
import type { TableAtRest } from './at-rest.ts';
import type { LoadResult, OpenLoopResult } from './load.ts';
import type { VisibilityResult } from './visibility.ts';

type SystemName = 'loki' | 'tempo' | 'tenantry';

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
  /** Seconds after the phase until every acknowledged item was stored (Tenantry's ClickHouse tables; 0 for Loki and Tempo). */
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

export interface Report {
  readonly options: Record<string, unknown>;
  readonly machine: { readonly cores: number; readonly loadBefore: readonly number[]; loadAfter: readonly number[] };
  corpus: CorpusResult[];
  atRest: {
    readonly loki: { readonly bytes: number; readonly chunks: number; readonly index: number; readonly wal: number };
    readonly tempo: { readonly bytes: number; readonly blocks: number; readonly traces: number; readonly wal: number };
    readonly tenantryLogs: TableAtRest;
    readonly tenantrySpans: TableAtRest;
  } | undefined;
  throughput: PhaseResult[];
  sameRate: SameRateResult[];
  visibility: (VisibilityResult & { readonly system: SystemName; readonly signal: Signal; readonly itemsPerSecond: number })[];
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const kilo = (x: number): string => `${Math.round(x / 1000)}k`;
const num = (x: number): string => (x >= 100 ? Math.round(x).toLocaleString('en-US') : String(Math.round(x * 10) / 10));
const ratio = (a: number, b: number): string => (b > 0 && Number.isFinite(a) ? `${(a / b).toFixed(2)}×` : '—');

function range(xs: readonly number[], format: (x: number) => string): string {
  if (xs.length === 0) return '—';
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return format(lo) === format(hi) ? format(lo) : `${format(lo)}–${format(hi)}`;
}

/** The Markdown table and details on stdout, then the JSON line. */
export function printReport(r: Report): void {
  const out: string[] = [];
  const phases = (system: SystemName, signal: Signal): PhaseResult[] => r.throughput.filter((p) => p.system === system && p.signal === signal);
  const lokiLoad = phases('loki', 'logs');
  const tempoLoad = phases('tempo', 'traces');
  const tLogs = phases('tenantry', 'logs');
  const tSpans = phases('tenantry', 'traces');
  const rows: string[][] = [];
  if (r.throughput.length > 0) {
    const pick = (ps: readonly PhaseResult[], f: (p: PhaseResult) => number): number[] => ps.map(f);
    rows.push([
      `throughput acknowledged (${r.options['clients'] as number} clients, ${r.options['seconds'] as number} s phases × ${r.options['rounds'] as number})`,
      `${range(pick(lokiLoad, (p) => p.itemsPerSecond), kilo)} logs/s`, `${range(pick(tempoLoad, (p) => p.itemsPerSecond), kilo)} spans/s`,
      `${range(pick(tLogs, (p) => p.itemsPerSecond), kilo)} logs/s, ${range(pick(tSpans, (p) => p.itemsPerSecond), kilo)} spans/s`,
      `${ratio(mean(pick(tLogs, (p) => p.itemsPerSecond)), mean(pick(lokiLoad, (p) => p.itemsPerSecond)))}, ${ratio(mean(pick(tSpans, (p) => p.itemsPerSecond)), mean(pick(tempoLoad, (p) => p.itemsPerSecond)))}`,
    ]);
    const st = (p: PhaseResult): number => p.sustainedItemsPerSecond;
    rows.push([
      'throughput stored (phase + drain until every acked item is in the store)',
      `${range(pick(lokiLoad, st), kilo)} logs/s`, `${range(pick(tempoLoad, st), kilo)} spans/s`,
      `${range(pick(tLogs, st), kilo)} logs/s, ${range(pick(tSpans, st), kilo)} spans/s`,
      `${ratio(mean(pick(tLogs, st)), mean(pick(lokiLoad, st)))}, ${ratio(mean(pick(tSpans, st)), mean(pick(tempoLoad, st)))}`,
    ]);
    for (const [label, f] of [['ack p50', (p: PhaseResult) => p.p50ms], ['ack p99', (p: PhaseResult) => p.p99ms]] as const) {
      rows.push([
        label, `${range(pick(lokiLoad, f), num)} ms`, `${range(pick(tempoLoad, f), num)} ms`,
        `${range(pick(tLogs, f), num)} ms (logs), ${range(pick(tSpans, f), num)} ms (spans)`,
        `${ratio(mean(pick(tLogs, f)), mean(pick(lokiLoad, f)))}, ${ratio(mean(pick(tSpans, f)), mean(pick(tempoLoad, f)))}`,
      ]);
    }
    const cpu = (p: PhaseResult): number => p.cpuMicrosPerItem;
    rows.push([
      'CPU during the load phases (server process)', `${range(pick(lokiLoad, cpu), num)} µs/log`, `${range(pick(tempoLoad, cpu), num)} µs/span`,
      `${range(pick(tLogs, cpu), num)} µs/log, ${range(pick(tSpans, cpu), num)} µs/span`,
      `${ratio(mean(pick(tLogs, cpu)), mean(pick(lokiLoad, cpu)))}, ${ratio(mean(pick(tSpans, cpu)), mean(pick(tempoLoad, cpu)))}`,
    ]);
  }
  if (r.sameRate.length > 0) {
    const at = (system: SystemName, signal: Signal): SameRateResult[] => r.sameRate.filter((p) => p.system === system && p.signal === signal);
    const rate = r.sameRate[0]?.offeredItemsPerSecond ?? 0;
    const ms = (ps: readonly SameRateResult[], f: (p: SameRateResult) => number): string => `${range(ps.map(f), num)} ms`;
    for (const [label, f] of [['p50', (p: SameRateResult) => p.p50ms], ['p99', (p: SameRateResult) => p.p99ms]] as const) {
      const [lokiP, tempoP, tLogs, tSpans] = [at('loki', 'logs'), at('tempo', 'traces'), at('tenantry', 'logs'), at('tenantry', 'traces')];
      rows.push([
        `ack ${label} at the same offered rate (${kilo(rate)} items/s, open loop)`, ms(lokiP, f), ms(tempoP, f),
        `${ms(tLogs, f)} (logs), ${ms(tSpans, f)} (spans)`,
        `${ratio(mean(tLogs.map(f)), mean(lokiP.map(f)))}, ${ratio(mean(tSpans.map(f)), mean(tempoP.map(f)))}`,
      ]);
    }
  }
  if (r.corpus.length > 0) {
    const c = (system: SystemName, signal: Signal): CorpusResult | undefined => r.corpus.find((x) => x.system === system && x.signal === signal);
    const us = (x: CorpusResult | undefined): number => x?.microsPerItem ?? Number.NaN;
    const tl = c('tenantry', 'logs');
    const ts = c('tenantry', 'traces');
    const both = tl !== undefined && ts !== undefined ? ((tl.cpuSeconds + ts.cpuSeconds) * 1e6) / (tl.items + ts.items) : Number.NaN;
    rows.push([
      `CPU, total, deferred work included (${r.options['corpusBodies'] as number} bodies per signal, idle to settled)`,
      `${num(us(c('loki', 'logs')))} µs/log`, `${num(us(c('tempo', 'traces')))} µs/span`,
      `${num(us(tl))} µs/log, ${num(us(ts))} µs/span (${num(both)} µs/item)`,
      `${ratio(us(tl), us(c('loki', 'logs')))}, ${ratio(us(ts), us(c('tempo', 'traces')))}`,
    ]);
  }
  if (r.atRest !== undefined) {
    const a = r.atRest;
    const logs = r.corpus.find((x) => x.system === 'loki')?.items ?? 0;
    // Tempo: per span in its flushed blocks (meta.json), in case /flush did not cut every trace.
    const spans = a.tempo.traces * spansPerTrace;
    const lokiB = a.loki.bytes / Math.max(1, logs);
    const tempoB = a.tempo.bytes / Math.max(1, spans);
    const tlB = a.tenantryLogs.bytes / Math.max(1, a.tenantryLogs.rows);
    const tsB = a.tenantrySpans.bytes / Math.max(1, a.tenantrySpans.rows);
    rows.push([
      'bytes at rest (ClickHouse active parts; Loki chunks + index and Tempo blocks after /flush)',
      `${num(lokiB)} B/log`, `${num(tempoB)} B/span`, `${num(tlB)} B/log, ${num(tsB)} B/span`, `${ratio(tlB, lokiB)}, ${ratio(tsB, tempoB)}`,
    ]);
  }
  if (r.visibility.length > 0) {
    const v = (system: SystemName, signal: Signal): string => r.visibility.filter((x) => x.system === system && x.signal === signal)
      .map((x) => `${x.label.replace(/^\w+ /, '')}: ${num(x.p50ms)} / ${num(x.maxMs)} ms${x.missed > 0 ? ` (${x.missed} of ${x.probes} not seen in 60 s)` : ''}`).join('; ');
    rows.push(['visibility delay, ack → queryable, p50 / max (under the same load)', v('loki', 'logs'), v('tempo', 'traces'), `${v('tenantry', 'logs')}; ${v('tenantry', 'traces')}`, '']);
  }
  out.push('', '| per item | Loki | Tempo | Tenantry | Tenantry / peer |', '|---|---|---|---|---|', ...rows.map((cells) => `| ${cells.join(' | ')} |`), '');

  out.push(`Machine: ${r.machine.cores} cores, load average ${r.machine.loadBefore.join(' ')} before, ${r.machine.loadAfter.join(' ')} after.`);
  if (r.throughput.length > 0) {
    out.push('', 'Load phases (cores = the system\'s process; others = the machine\'s other processes, not the servers or this bench):');
    for (const p of r.throughput) {
      out.push(`  round ${p.round} ${p.system.padEnd(8)} ${p.signal.padEnd(6)} ${String(p.itemsPerSecond).padStart(7)} items/s  stored ${String(p.sustainedItemsPerSecond).padStart(7)}/s (drain ${p.drainSeconds} s)  p50 ${String(p.p50ms).padStart(5)} ms  p99 ${String(p.p99ms).padStart(5)} ms  ${String(p.cpuMicrosPerItem).padStart(5)} µs/item  ${p.cores} cores  others ${p.otherCores} cores  ${JSON.stringify(p.statuses)}`);
    }
  }
  if (r.sameRate.length > 0) {
    out.push('', 'Same offered rate (open loop; skipped = sends due while 64 requests were outstanding):');
    for (const p of r.sameRate) {
      out.push(`  round ${p.round} ${p.system.padEnd(8)} ${p.signal.padEnd(6)} offered ${p.offeredItemsPerSecond}/s  acknowledged ${p.itemsPerSecond}/s  p50 ${String(p.p50ms).padStart(5)} ms  p99 ${String(p.p99ms).padStart(5)} ms  skipped ${p.skipped}  ${JSON.stringify(p.statuses)}`);
    }
  }
  if (r.corpus.length > 0) {
    out.push('', 'Corpus (CPU from idle before the load to settled after it; settle includes /flush for Loki and Tempo):');
    for (const c of r.corpus) {
      out.push(`  ${c.system.padEnd(8)} ${c.signal.padEnd(6)} ${c.items} items  ${c.cpuSeconds} CPU s  ${c.microsPerItem} µs/item  load ${c.loadSeconds} s  settle ${Math.round(c.settleSeconds * 10) / 10} s${c.settled ? '' : ' (did not settle)'}  others ${c.otherCores} cores  ${JSON.stringify(c.statuses)}`);
    }
  }
  if (r.atRest !== undefined) {
    const a = r.atRest;
    out.push('', 'At rest:',
      `  loki     chunks ${a.loki.chunks} B + index ${a.loki.index} B (WAL ${a.loki.wal} B, not counted)`,
      `  tempo    ${a.tempo.blocks} blocks, ${a.tempo.bytes} B, ${a.tempo.traces} traces in meta.json (WAL ${a.tempo.wal} B, not counted)`,
      `  tenantry logs ${a.tenantryLogs.parts} active parts, ${a.tenantryLogs.rows} rows, ${a.tenantryLogs.bytes} B; spans ${a.tenantrySpans.parts} active parts, ${a.tenantrySpans.rows} rows, ${a.tenantrySpans.bytes} B`);
  }
  if (r.visibility.length > 0) {
    out.push('', 'Visibility (delays in ms, sorted):');
    for (const v of r.visibility) out.push(`  ${v.label} at ${v.itemsPerSecond} items/s: ${v.delaysMs.join(' ')}${v.missed > 0 ? ` + ${v.missed} missed` : ''}`);
  }
  process.stdout.write(`${out.join('\n')}\n\n${JSON.stringify(r)}\n`);
}
