// A selector's matchers over the cached series index, with Prometheus'
// semantics: a label a series lacks has the value "", so {foo=""} selects
// series without foo; regexes are RE2, fully anchored, and "." matches a
// newline (Prometheus 3 compiles "^(?s:" + re + ")$").
//
// Regexes are never run by JavaScript's backtracking RegExp, which a
// pattern like (a*)*b can keep busy for ever. Literals, alternations of
// literals, ".*" and ".+" (most dashboard regexes: Grafana's multi-value
// variables are alternations) are decided here; any other pattern is run by
// ClickHouse's RE2 (linear time) over the distinct values of the label among
// the candidate series not answered before, in statements of fixed text with
// the pattern and at most `batchBytes` of values bound (a label unique per
// series over 500k series no longer makes one 10 MB statement), and its
// answers are kept per tenant, at most `memoValues` of them. A pattern RE2
// refuses (code 427) is bad_data. That needs no new dependency and gives
// the same RE2 the previous SQL evaluator used.
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import type { QueryRunner } from '../../query/query-runner.ts';
import { anchoredPattern } from '../../query/label-match-sql.ts';
import type { TenantScan } from '../../query/tenant-scan.ts';
import type { LabelMatcher, Labels } from './engine/sample-source.ts';
import type { PromError } from './prom-envelope.ts';
import { badData, fromApiError } from './prom-envelope.ts';

/** The value of label `name` in a sorted label set ("" when absent). */
export function labelValue(labels: Labels, name: string): string {
  for (const [k, v] of labels) if (k === name) return v;
  return '';
}

/** Characters that mean nothing special in RE2 outside a class. */
const literalText = /^[A-Za-z0-9_:/@,=<>;&%#!~'" -]*$/;

/** A pattern decided without a regex engine, or undefined when it needs one. */
export function simplePattern(re: string): ((v: string) => boolean) | undefined {
  if (re === '.*') return () => true;
  if (re === '.+') return (v) => v !== '';
  let body = re;
  if (body.startsWith('(?:') && body.endsWith(')')) body = body.slice(3, -1);
  else if (body.startsWith('(') && body.endsWith(')')) body = body.slice(1, -1);
  const alternatives = body.split('|');
  if (!alternatives.every((a) => literalText.test(a))) return undefined;
  if (alternatives.length === 1) {
    const only = alternatives[0] ?? '';
    return (v) => v === only;
  }
  const set = new Set(alternatives);
  return (v) => set.has(v);
}

/** Most patterns a tenant's memo keeps before it starts again. */
const memoPatterns = 1_000;

/** Most answers (pattern, value) a tenant's memo keeps before it starts again. */
const memoValues = 1_000_000;

/** Most bytes of label values one RE2 statement carries (and values: their count bounds the answer). */
const batchBytes = 256 * 1024;
const batchValues = 20_000;

/** The values cut into batches of at most batchBytes (UTF-16 length, an upper bound of UTF-8 / 3 per unit) and batchValues. */
function batches(values: readonly string[]): string[][] {
  const out: string[][] = [];
  let batch: string[] = [];
  let bytes = 0;
  for (const v of values) {
    const size = v.length * 3 + 8;
    if (batch.length > 0 && (bytes + size > batchBytes || batch.length >= batchValues)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(v);
    bytes += size;
  }
  out.push(batch);
  return out;
}

/** RE2 over `values` with `pattern` anchored as Prometheus anchors it: one statement, fixed text. */
async function matchInStore(runner: QueryRunner, scan: TenantScan, pattern: string, values: readonly string[]): Promise<Result<boolean[], PromError>> {
  // No table is read: the scan's statement carries the query's budget (its turn, its time limit).
  const st = scan.statement();
  const rows = await runner.rows<{ m: number[] }>(
    st.finish(`SELECT arrayMap(v -> match(v, ${st.bind(anchoredPattern('prometheus', pattern), 'String')}), ${st.bind(values, 'Array(String)')}) AS m`),
  );
  if (!rows.ok) {
    return fail(
      rows.error.code === 'invalid_request' ? badData(`invalid regular expression ${JSON.stringify(pattern)} in a label matcher`) : fromApiError(rows.error),
    );
  }
  return ok((rows.value[0]?.m ?? []).map((x) => x === 1));
}

/**
 * Keeps the items whose labels satisfy every matcher: equality first, then
 * each regex over the survivors (so RE2 sees only values still in play).
 */
export async function applyMatchers<T>(
  runner: QueryRunner,
  scan: TenantScan,
  items: readonly T[],
  labelsOf: (item: T) => Labels,
  matchers: readonly LabelMatcher[],
  memo: Map<string, Map<string, boolean>>,
): Promise<Result<T[], PromError>> {
  let kept = [...items];
  for (const m of matchers) {
    if (m.op === '=') kept = kept.filter((i) => labelValue(labelsOf(i), m.name) === m.value);
    if (m.op === '!=') kept = kept.filter((i) => labelValue(labelsOf(i), m.name) !== m.value);
  }
  for (const m of matchers) {
    if (m.op !== '=~' && m.op !== '!~') continue;
    const test = await regexTest(
      runner,
      scan,
      m.value,
      kept.map((i) => labelValue(labelsOf(i), m.name)),
      memo,
    );
    if (!test.ok) return test;
    const want = m.op === '=~';
    kept = kept.filter((i) => test.value(labelValue(labelsOf(i), m.name)) === want);
  }
  return ok(kept);
}

/** A test for `pattern` over `values` (every value it will be asked about). */
async function regexTest(
  runner: QueryRunner,
  scan: TenantScan,
  pattern: string,
  values: readonly string[],
  memo: Map<string, Map<string, boolean>>,
): Promise<Result<(v: string) => boolean, PromError>> {
  const simple = simplePattern(pattern);
  if (simple !== undefined) return ok(simple);
  const known = memo.get(pattern);
  const table = known ?? new Map<string, boolean>();
  const unknown = [...new Set(values)].filter((v) => !table.has(v));
  // A pattern seen before compiled then; a new one is sent even with no value to test, so an invalid regex is an error whatever the data.
  if (known !== undefined && unknown.length === 0) return ok((v) => table.get(v) === true);
  let held = 0;
  for (const t of memo.values()) held += t.size;
  if (memo.size >= memoPatterns || held + unknown.length > memoValues) memo.clear();
  // Answers too many to keep serve this query alone.
  if (table.size + unknown.length <= memoValues) memo.set(pattern, table);
  for (const batch of batches(unknown)) {
    const answers = await matchInStore(runner, scan, pattern, batch);
    if (!answers.ok) {
      memo.delete(pattern);
      return answers;
    }
    batch.forEach((v, i) => table.set(v, answers.value[i] === true));
  }
  return ok((v) => table.get(v) === true);
}
