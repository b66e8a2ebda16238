// What became of each chart query: sorted into the classes the report counts
// (Prometheus refusing it too, Tenantry refusing it alone with 4xx or 5xx,
// no answer in time, both answering no series, equal, different), from the
// differential runner's outcome for a batch of queries, and the report: one
// table of counts per class and source, then every Tenantry-only error
// grouped by its message and every difference with its file and query.
import type { DifferentialOutcome, DifferentialRow } from '../../test/integration/prometheus/support/differential-runner.ts';
import type { QuerySource } from './extract.ts';

export const verdictClasses = [
  'equal',
  'both empty',
  'different',
  'Tenantry 4xx',
  'Tenantry 5xx',
  'Tenantry timeout',
  'Prometheus error too',
  'not run (deadline)',
] as const;

export type VerdictClass = (typeof verdictClasses)[number];

/** One query's class and, when it is not equal, why (Tenantry's error, or the first difference). */
export interface Verdict {
  readonly verdict: VerdictClass;
  readonly detail: string;
}

/** One occurrence of a query in the chart, as asked. */
export interface Occurrence {
  readonly source: QuerySource;
  readonly file: string;
  readonly where: string;
  readonly query: string;
}

const statusOf = (described: string): number => Number(/^(\d+) /.exec(described)?.[1] ?? '-1');

/** The class of a status Tenantry answered where Prometheus answered data. */
export function errorClass(httpStatus: number): VerdictClass {
  if (httpStatus === 0) return 'Tenantry timeout';
  return httpStatus >= 500 ? 'Tenantry 5xx' : 'Tenantry 4xx';
}

/** Each row's verdict from a runDifferential outcome over those rows. */
export function verdictsOf(rows: readonly DifferentialRow[], outcome: DifferentialOutcome): Map<string, Verdict> {
  const out = new Map<string, Verdict>();
  const empty = new Set(outcome.emptyRows);
  for (const row of rows) {
    const problem = outcome.referenceProblems.find((p) => p.startsWith(`${row.query} [`));
    const diffs = outcome.differences.filter((d) => d.row === row);
    if (problem !== undefined) {
      const tenantry = diffs[0] === undefined ? 'Tenantry refused it alike' : `Tenantry: ${diffs[0].target}`;
      out.set(row.query, { verdict: 'Prometheus error too', detail: `${tenantry}; ${problem.slice(row.query.length + 1)}` });
      continue;
    }
    const failed = diffs.find((d) => statusOf(d.target) >= 0 && !d.target.startsWith('200 '));
    if (failed !== undefined) out.set(row.query, { verdict: errorClass(statusOf(failed.target)), detail: failed.target });
    else if (diffs[0] !== undefined) {
      // A difference in the data outweighs one in the annotations beside it, whichever evaluation came first.
      const d = diffs.find((x) => !/^(warnings|infos) differ/.test(x.why)) ?? diffs[0];
      out.set(row.query, { verdict: 'different', detail: `[${d.evaluation}] ${d.why}` });
    } else out.set(row.query, { verdict: empty.has(row.query) ? 'both empty' : 'equal', detail: '' });
  }
  return out;
}

const short = (q: string, n = 160): string => {
  const flat = q.replace(/\s+/g, ' ').trim();
  return flat.length > n ? `${flat.slice(0, n)}…` : flat;
};

const sources: readonly QuerySource[] = ['dashboard', 'variable', 'rule'];
const sourceTitle: Readonly<Record<QuerySource, string>> = { dashboard: 'dashboard panels', variable: 'dashboard variables', rule: 'rules' };

/** The summary table (occurrences per class and source, and distinct queries), markdown. */
export function summaryTable(occurrences: readonly Occurrence[], verdicts: ReadonlyMap<string, Verdict>): string {
  const classOf = (o: Occurrence): VerdictClass => verdicts.get(o.query)?.verdict ?? 'not run (deadline)';
  const lines = [
    `| class | ${sources.map((s) => sourceTitle[s]).join(' | ')} | all | distinct queries |`,
    `|---|${sources.map(() => '---:').join('|')}|---:|---:|`,
  ];
  for (const c of verdictClasses) {
    const of = occurrences.filter((o) => classOf(o) === c);
    const distinct = new Set(of.map((o) => o.query)).size;
    lines.push(`| ${c} | ${sources.map((s) => of.filter((o) => o.source === s).length).join(' | ')} | ${of.length} | ${distinct} |`);
  }
  const distinctAll = new Set(occurrences.map((o) => o.query)).size;
  lines.push(`| total | ${sources.map((s) => occurrences.filter((o) => o.source === s).length).join(' | ')} | ${occurrences.length} | ${distinctAll} |`);
  return lines.join('\n');
}

/** Every query of the given classes, grouped by its detail with digits blanked (one message, many queries). */
export function listing(occurrences: readonly Occurrence[], verdicts: ReadonlyMap<string, Verdict>, classes: readonly VerdictClass[]): string {
  const groups = new Map<string, Occurrence[]>();
  for (const o of occurrences) {
    const v = verdicts.get(o.query);
    if (v === undefined || !classes.includes(v.verdict)) continue;
    // A difference is grouped by its kind (its first words, digits blanked), an error by its whole message.
    const detail = v.verdict === 'different' ? v.detail.replace(/^\[[^\]]*\] /, '').slice(0, 110) : v.detail;
    const key = `${v.verdict}: ${detail.replace(/\d+/g, 'N')}`;
    groups.set(key, [...(groups.get(key) ?? []), o]);
  }
  const out: string[] = [];
  for (const [key, list] of [...groups].sort((a, b) => b[1].length - a[1].length)) {
    out.push(`\n### ${list.length} × ${short(key, 400)}`);
    const seen = new Set<string>();
    for (const o of list) {
      if (seen.has(o.query)) continue;
      seen.add(o.query);
      const also = list.filter((x) => x.query === o.query).length;
      out.push(
        `- ${o.file} (${o.where})${also > 1 ? ` ×${also}` : ''}: \`${short(o.query)}\`${key.startsWith('different') ? `\n  ${short(verdicts.get(o.query)?.detail ?? '', 400)}` : ''}`,
      );
    }
  }
  return out.join('\n');
}
