// Asks every row of a differential table of the reference Prometheus and of
// Tenantry at every evaluation (instant times, range steps), a few requests
// at once, and sorts the outcomes: the reference's own failures (a query the
// harness got wrong, or an error case Prometheus does not refuse), the rows
// answered equally, and the differences in full for the report. Equal means
// the same data and the same warnings and infos beside it.
import { answerDiff, answerSize, describeAnswer, notesDiff } from './answer-diff.ts';
import type { AnswerNotes } from './answer-diff.ts';
import type { PromAnswer, PromEndpoint, PromEvaluation } from './promql-client.ts';
import { promQuery } from './promql-client.ts';

/** One query of a differential table. */
export interface DifferentialRow {
  readonly query: string;
  /** What the row checks, for the report. */
  readonly construct: string;
  /** Prometheus orders this instant vector (sort, sort_desc, topk, bottomk): compare in order. */
  readonly ordered?: boolean;
  /** The error type Prometheus answers (a deliberate error case), e.g. 'bad_data' or 'execution'. */
  readonly error?: string;
  /** Asked as instant queries only (a range vector or string result). */
  readonly instantOnly?: boolean;
}

/** A named evaluation (`instant@…`, `range step 37s`). */
export interface NamedEvaluation {
  readonly name: string;
  readonly at: PromEvaluation;
}

export interface Difference {
  readonly row: DifferentialRow;
  readonly evaluation: string;
  readonly why: string;
  readonly reference: string;
  readonly target: string;
}

export interface DifferentialOutcome {
  readonly rows: number;
  readonly evaluations: number;
  /** Rows whose every evaluation was answered equally. */
  readonly equalRows: number;
  readonly equalEvaluations: number;
  /** Where Prometheus itself did not answer as the row expects: the harness is wrong there. */
  readonly referenceProblems: readonly string[];
  readonly differences: readonly Difference[];
  /** Rows with at least one difference, by construct. */
  readonly differentConstructs: ReadonlyMap<string, number>;
  /** Rows Prometheus answered with no series at every evaluation (a row that checks little). */
  readonly emptyRows: readonly string[];
}

/** How long one answer may take before it counts as a difference. */
const answerTimeoutMs = 30_000;

/** An answer and the annotations beside it. */
interface Asked {
  readonly answer: PromAnswer;
  readonly notes: AnswerNotes;
}

const noNotes: AnswerNotes = { warnings: [], infos: [] };

/** One query as promQuery asks it, with the envelope's warnings and infos beside the answer. */
async function annotatedQuery(endpoint: PromEndpoint, query: string, at: PromEvaluation): Promise<Asked> {
  const answer = await promQuery(endpoint, query, at);
  return { answer, notes: { warnings: [...(answer.warnings ?? [])], infos: [...(answer.infos ?? [])] } };
}

async function ask(endpoint: PromEndpoint, query: string, at: PromEvaluation): Promise<Asked> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Asked>((resolve) => {
    timer = setTimeout(() => {
      resolve({ answer: { httpStatus: 0, status: 'timeout', error: `no answer within ${answerTimeoutMs} ms` }, notes: noNotes });
    }, answerTimeoutMs);
  });
  try {
    return await Promise.race([
      annotatedQuery(endpoint, query, at).catch((e: unknown) => ({ answer: { httpStatus: 0, status: 'fetch-failed', error: String(e) }, notes: noNotes })),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `tasks` with at most `parallel` at a time. */
async function pool<T>(tasks: ReadonlyArray<() => Promise<T>>, parallel: number): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      const task = tasks[i];
      if (task === undefined) return;
      results[i] = await task();
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return results;
}

/** What Prometheus answering `answer` means for a row: undefined when it is as the row expects. */
function referenceProblem(row: DifferentialRow, evaluation: string, answer: PromAnswer): string | undefined {
  if (row.error === undefined) {
    return answer.status === 'success' ? undefined : `${row.query} [${evaluation}]: Prometheus failed: ${describeAnswer(answer)}`;
  }
  if (answer.status === 'success') return `${row.query} [${evaluation}]: Prometheus answered, but the row expects error ${row.error}`;
  return answer.errorType === row.error
    ? undefined
    : `${row.query} [${evaluation}]: Prometheus error ${answer.errorType ?? ''}, the row expects ${row.error}: ${answer.error ?? ''}`;
}

/** Asks both endpoints every row at every evaluation (range ones skipped for instantOnly rows) and compares. */
export async function runDifferential(
  rows: readonly DifferentialRow[],
  evaluations: readonly NamedEvaluation[],
  reference: PromEndpoint,
  target: PromEndpoint,
  parallel = 6,
): Promise<DifferentialOutcome> {
  const jobs = rows.flatMap((row) => evaluations.filter((e) => row.instantOnly !== true || e.at.kind === 'instant').map((e) => ({ row, e })));
  const answers = await pool(
    jobs.map(({ row, e }) => async () => {
      const [ref, got] = await Promise.all([ask(reference, row.query, e.at), ask(target, row.query, e.at)]);
      return { row, e, ref, got };
    }),
    parallel,
  );
  const referenceProblems: string[] = [];
  const differences: Difference[] = [];
  const differentRows = new Set<DifferentialRow>();
  const withData = new Set<DifferentialRow>();
  for (const { row, e, ref: r, got: g } of answers) {
    const ref = r.answer;
    const got = g.answer;
    if (ref.status !== 'success' || answerSize(ref).series > 0) withData.add(row);
    const problem = referenceProblem(row, e.name, ref);
    if (problem !== undefined) referenceProblems.push(problem);
    const why = answerDiff(ref, got, row.ordered === true) ?? notesDiff(r.notes, g.notes);
    if (why === undefined) continue;
    differentRows.add(row);
    differences.push({ row, evaluation: e.name, why, reference: describeAnswer(ref), target: describeAnswer(got) });
  }
  const differentConstructs = new Map<string, number>();
  for (const row of differentRows) differentConstructs.set(row.construct, (differentConstructs.get(row.construct) ?? 0) + 1);
  return {
    rows: rows.length,
    evaluations: answers.length,
    equalRows: rows.length - differentRows.size,
    equalEvaluations: answers.length - differences.length,
    referenceProblems,
    differences,
    differentConstructs,
    emptyRows: rows.filter((r) => !withData.has(r)).map((r) => r.query),
  };
}

/** The report: one summary line, the constructs that differ, and the first differences in full. */
export function differentialReport(title: string, outcome: DifferentialOutcome, shown = 25): string {
  const lines = [
    `    ${title}: ${outcome.equalRows} equal / ${outcome.rows - outcome.equalRows} different queries ` +
      `(${outcome.equalEvaluations} / ${outcome.evaluations} evaluations equal)`,
  ];
  if (outcome.differentConstructs.size > 0) {
    lines.push(
      `      differing by construct: ${[...outcome.differentConstructs]
        .sort((a, b) => b[1] - a[1])
        .map(([c, n]) => `${c} x${n}`)
        .join(', ')}`,
    );
  }
  const seen = new Set<string>();
  for (const d of outcome.differences) {
    if (seen.has(d.row.query) || seen.size >= shown) continue;
    seen.add(d.row.query);
    lines.push(
      `      ${d.row.query}  [${d.evaluation}] (${d.row.construct})\n        why:        ${d.why}\n        Prometheus: ${d.reference}\n        Tenantry:   ${d.target}`,
    );
  }
  return lines.join('\n');
}

/** The instant times and range steps every query is asked at, over [startS, endS] (unix seconds). */
export function evaluationsOver(
  instants: readonly number[],
  range: { readonly startS: number; readonly endS: number },
  steps: readonly number[],
): NamedEvaluation[] {
  return [
    ...instants.map((time) => ({ name: `instant@${time}`, at: { kind: 'instant' as const, time } })),
    ...steps.map((step) => ({
      name: `range ${range.startS}..${range.endS} step ${step}s`,
      at: { kind: 'range' as const, start: range.startS, end: range.endS, step },
    })),
  ];
}
