// bench:promql's tables: per query the HTTP timings of both systems, the
// answers compared and the peak RSS; then Tenantry's time per phase; and
// the same as Markdown for docs/benchmarks.md.
import type { Breakdown, BurstTimes, PhaseTimes } from './breakdown.ts';
import type { Layout } from './dataset.ts';
import { seriesPerTenant, stepSeconds, widePoints, wideStepSeconds } from './dataset.ts';
import type { BenchQuery } from './queries.ts';

/** One query's HTTP runs on both systems. */
export interface QueryTiming {
  readonly query: BenchQuery;
  readonly prometheus: number[];
  readonly tenantry: number[];
  equal: number;
  compared: number;
  /** Series and points of Prometheus' last answer. */
  series: number;
  points: number;
  tenantryPeakMiB: number;
  prometheusPeakMiB: number;
  firstDifference: string | undefined;
}

/** Nearest-rank percentile. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? NaN;
}

const ms = (n: number): string => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
const ratioOf = (t: QueryTiming): number => percentile(t.tenantry, 0.95) / percentile(t.prometheus, 0.95);

interface Row {
  readonly cells: readonly string[];
}

function timingRows(timings: readonly QueryTiming[]): Row[] {
  return timings.map((t) => ({
    cells: [
      t.query.name,
      ms(percentile(t.prometheus, 0.5)),
      ms(percentile(t.prometheus, 0.95)),
      ms(percentile(t.tenantry, 0.5)),
      ms(percentile(t.tenantry, 0.95)),
      `${ratioOf(t).toFixed(2)}x`,
      `${t.equal}/${t.compared}`,
      `${t.series} / ${t.points}`,
      t.tenantryPeakMiB.toFixed(0),
      t.prometheusPeakMiB.toFixed(0),
    ],
  }));
}
const timingHead = ['query', 'prom p50', 'prom p95', 'tenantry p50', 'tenantry p95', 'p95 ratio', 'equal', 'series / points', 'tenantry RSS', 'prom RSS'];

const p50 = (xs: readonly number[]): number => percentile(xs, 0.5);

function phaseRows(timings: readonly QueryTiming[], parts: Breakdown): Row[] {
  return timings.flatMap((t): Row[] => {
    const p: PhaseTimes | undefined = parts.times.get(t.query.name);
    if (p === undefined || p.whole.length === 0) return [];
    const phases: [string, number][] = [
      ['series lookup', p50(p.lookup)],
      ['sample read', p50(p.statement)],
      ['decode', p50(p.decode)],
      ['evaluation', p50(p.evaluation)],
      ['encoding', p50(p.encoding)],
    ];
    const sum = phases.reduce((n, [, v]) => n + v, 0);
    const [top, topMs] = phases.reduce((a, b) => (b[1] > a[1] ? b : a));
    return [
      {
        cells: [
          t.query.name,
          `${ms(p50(p.lookup))} (${ms(p50(p.indexStatement))})`,
          ms(p50(p.statement)),
          ms(p50(p.decode)),
          ms(p50(p.evaluation)),
          ms(p50(p.encoding)),
          ms(sum),
          ms(p50(p.whole)),
          ms(percentile(p.whole, 0.95)),
          ms(p50(p.served)),
          ms(p50(t.tenantry)),
          `${p.series} / ${p.samples.toLocaleString('en')}`,
          `${top} ${Math.round((100 * topMs) / Math.max(sum, 1e-9))} %`,
        ],
      },
    ];
  });
}
const phaseHead = [
  'query',
  'lookup (index stmt)',
  'sample read (parts, stmt)',
  'decode',
  'evaluation',
  'encoding',
  'sum',
  'whole p50',
  'whole p95',
  'gated p50',
  'HTTP p50',
  'series / samples read',
  'largest',
];

function textTable(head: readonly string[], rows: readonly Row[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r.cells[i] ?? '').length)));
  const line = (cells: readonly string[]): string => `  ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')}`;
  return [line(head), ...rows.map((r) => line(r.cells))].join('\n');
}

function markdownTable(head: readonly string[], rows: readonly Row[]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`, ...rows.map((r) => `| ${r.cells.join(' | ')} |`)].join(
    '\n',
  );
}

/** The HTTP table, as text. */
export const timingTable = (timings: readonly QueryTiming[]): string => textTable(timingHead, timingRows(timings));

function cacheRows(timings: readonly QueryTiming[], parts: Breakdown): Row[] {
  return timings.flatMap((t): Row[] => {
    const p: PhaseTimes | undefined = parts.times.get(t.query.name);
    if (p === undefined || p.cachedSelect.length === 0) return [];
    const c = p.cache;
    return [
      {
        cells: [
          t.query.name,
          `${ratioOf(t).toFixed(2)}x`,
          ms(p50(p.cachedSelect)),
          ms(percentile(p.cachedSelect, 0.95)),
          ms(p50(p.directSelect)),
          ms(percentile(p.directSelect, 0.95)),
          `${(percentile(p.cachedSelect, 0.95) / percentile(p.directSelect, 0.95)).toFixed(2)}x`,
          `${c.hits} / ${c.topUps} / ${c.refills} / ${c.fills - c.refills} / ${c.direct} / ${c.catchUps}`,
        ],
      },
    ];
  });
}
const cacheHead = [
  'query',
  'HTTP p95 ratio',
  'cached p50',
  'cached p95',
  'direct p50',
  'direct p95',
  'cached/direct p95',
  'hits / top-ups / refills / fills / direct / catch-ups',
];

/** What the cache did against a direct read, per query (and the local ingest under it, if any). */
function cacheIntro(parts: Breakdown): string {
  const l = parts.live;
  const under =
    l === undefined ? 'no ingest' : `under a local ingest of one INSERT a second (${l.inserts} INSERTs in ${(l.ms / 1000).toFixed(0)} s, ${l.failed} failed)`;
  return `The selects of each query in process (series lookup and samples) through the sample cache and read directly, ${under}; ms; the cache's reads over the timed runs:`;
}

/** The cache table, as text. */
export const cacheTable = (timings: readonly QueryTiming[], parts: Breakdown): string =>
  `${cacheIntro(parts)}\n${textTable(cacheHead, cacheRows(timings, parts))}`;

/** The dashboard-like burst: wall time and listings per burst, listings shared and not. */
export function burstLine(b: BurstTimes | undefined): string | undefined {
  if (b === undefined || b.shared.length === 0) return undefined;
  const side = (times: readonly number[], listings: readonly number[]): string =>
    `p50/p95 ${ms(p50(times))}/${ms(percentile(times, 0.95))} ms, ${ms(p50(listings))} listings (p50)`;
  return (
    `${b.panels} panels of ${b.tenant} at once (through the server's store gate, ${b.shared.length} rounds each): ` +
    `listings shared ${side(b.shared, b.sharedListings)}; one per request ${side(b.unshared, b.unsharedListings)}; ` +
    `p95 ratio ${(percentile(b.shared, 0.95) / percentile(b.unshared, 0.95)).toFixed(2)}x`
  );
}

/** The phase table, as text. */
export function phaseTable(timings: readonly QueryTiming[], parts: Breakdown): string {
  const cold = (xs: readonly number[]): string => (xs.length === 0 ? '-' : `${ms(p50(xs))} ms`);
  const notes = [`  A tenant's first index load (fresh cache, p50): ${cold(parts.coldIndex.narrow)} narrow, ${cold(parts.coldIndex.wide)} wide.`];
  if (parts.skipped > 0) notes.push(`  ${parts.skipped} runs skipped: the breakdown's time budget ran out.`);
  const burst = burstLine(parts.burst);
  if (burst !== undefined) notes.push(`  ${burst}.`);
  return `${textTable(phaseHead, phaseRows(timings, parts))}\n${notes.join('\n')}`;
}

/** Targets met, and the answers compared. */
export function summaryLines(timings: readonly QueryTiming[]): string[] {
  const within = (x: number): number => timings.filter((t) => ratioOf(t) <= x).length;
  const equal = timings.reduce((n, t) => n + t.equal, 0);
  const compared = timings.reduce((n, t) => n + t.compared, 0);
  return [
    `p95 within 2x Prometheus: ${within(2)}/${timings.length} queries (target: all); within 1x: ${within(1)}/${timings.length} (target: at least half)`,
    `answers equal to Prometheus' (values within 1e-9 relative): ${equal}/${compared}`,
  ];
}

export interface MarkdownInput {
  readonly timings: readonly QueryTiming[];
  readonly parts: Breakdown;
  readonly runs: number;
  readonly samples: number;
  readonly layout: Layout;
  readonly machine: string;
  readonly ingest: string;
  /** The HTTP floor: a query that reads nothing. */
  readonly floor: string;
}

/** The run as the Markdown of docs/benchmarks.md's "Latest run". */
export function markdownTables(m: MarkdownInput): string {
  const l = m.layout;
  const cold = (xs: readonly number[]): string => (xs.length === 0 ? '-' : `${ms(p50(xs))} ms`);
  return [
    `${new Date().toISOString().slice(0, 10)}, ${m.machine}. ${m.samples.toLocaleString('en')} samples: ${l.tenants} tenants x ${seriesPerTenant} series x ${l.points} points every ${stepSeconds} s, ` +
      `and ${l.wideTenants.length} wide tenants x ${l.wideSeries.toLocaleString('en')} series x ${widePoints} points every ${wideStepSeconds} s; ${m.ingest}.`,
    '',
    `Range queries over HTTP (last 1 h, step 60 s), ${m.runs} runs each, ms; peak RSS of each process over the query's runs, MiB:`,
    '',
    markdownTable(timingHead, timingRows(m.timings)),
    '',
    ...[...summaryLines(m.timings), m.floor].map((s) => `- ${s}`),
    '',
    `Where Tenantry's time goes, in one process on its data without HTTP (p50, ms; a tenant's first index load: ${cold(m.parts.coldIndex.narrow)} narrow, ${cold(m.parts.coldIndex.wide)} wide):`,
    '',
    markdownTable(phaseHead, phaseRows(m.timings, m.parts)),
    ...((b) => (b === undefined ? [] : ['', `- ${b}`]))(burstLine(m.parts.burst)),
    '',
    cacheIntro(m.parts),
    '',
    markdownTable(cacheHead, cacheRows(m.timings, m.parts)),
  ].join('\n');
}
