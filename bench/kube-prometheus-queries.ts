// npm run bench:kube-queries -- <chart folder> — issue 34's acceptance on
// kube-prometheus-stack's OWN queries: every PromQL expression of the chart's
// Grafana dashboards (panel targets, query variables) and PrometheusRules
// (alerting and recording), read at run time from a checkout of
// prometheus-community/helm-charts the user points to (the chart's queries
// are never copied here), rendered with the chart's defaults
// (kube-queries/helm-render.ts) and interpolated as Grafana does for a range
// query (kube-queries/grafana-variables.ts). The dashboard differential's
// stack (Prometheus 3.16 and Tenantry `all`, the synthetic cluster of
// test/integration/prometheus/support/kube-shapes.ts pushed to both) answers
// each query as a range query over the data's 30 minutes at a 60 s step and as
// an instant query at its end; label_values variables are asked as Grafana
// asks them (label values with match[]). Printed: counts per class and
// source, every Tenantry-only error grouped by message, every difference.
//
//   flock /tmp/bench.lock npm run bench:kube-queries -- /tmp/kps    # the folder holding charts/kube-prometheus-stack
//   KUBE_QUERIES_CHART=/tmp/kps npm run bench:kube-queries           # the same, by environment
//   KUBE_QUERIES_DEADLINE_S=900                                      # stop starting queries after this (default 1200)
//   KUBE_QUERIES_PARALLEL=4                                          # queries in flight at once (default 4)
//   KUBE_QUERIES_LIST_EMPTY=1                                        # also list the queries both answer with no series
//   KUBE_QUERIES_FILL=1                                              # also push filler series for the metrics kube-shapes lacks (kube-queries/fill-series.ts)
import { findPrometheus } from '../support/prometheus-binaries.ts';
import { pushToBoth, startDifferentialStack, waitForSameAnswer } from '../test/integration/prometheus/support/differential-stack.ts';
import type { DifferentialStack } from '../test/integration/prometheus/support/differential-stack.ts';
import { evaluationsOver, runDifferential } from '../test/integration/prometheus/support/differential-runner.ts';
import type { DifferentialRow } from '../test/integration/prometheus/support/differential-runner.ts';
import type { PromEndpoint } from '../test/integration/prometheus/support/promql-client.ts';
import { kubeSeries, kubeSpanMs } from '../test/integration/prometheus/support/kube-shapes.ts';
import { pointCount } from '../test/integration/prometheus/support/synthetic-series.ts';
import { extractChartQueries } from './kube-queries/extract.ts';
import { fillerSeries } from './kube-queries/fill-series.ts';
import type { Extraction } from './kube-queries/extract.ts';
import { builtins, chooseValue, interpolate, parseVariableQuery } from './kube-queries/grafana-variables.ts';
import { labelValues, valuesDiff } from './kube-queries/label-values.ts';
import { errorClass, listing, summaryTable, verdictsOf } from './kube-queries/verdicts.ts';
import type { Occurrence, Verdict } from './kube-queries/verdicts.ts';

const tenant = 'kube-charts';
const stepS = 60;
const labelTimeoutMs = 30_000;
const batchRows = 40;

const intOf = (name: string, fallback: number): number => {
  const n = Number(process.env[name] ?? '');
  return Number.isFinite(n) && n > 0 ? n : fallback;
};

/** The window every query is asked over: the pushed data's span. */
interface Window {
  readonly startS: number;
  readonly endS: number;
}

/**
 * Each dashboard's variables resolved in templating order from the
 * reference's label values (as Grafana loads them), every label_values query
 * asked of both and judged; returns the occurrences of the panel and
 * variable queries as they were asked.
 */
async function dashboardOccurrences(
  extraction: Extraction,
  stack: DifferentialStack,
  window: Window,
  verdicts: Map<string, Verdict>,
): Promise<{ occurrences: Occurrence[]; unresolved: string[] }> {
  const target = stack.tenantry.endpoint(tenant);
  const occurrences: Occurrence[] = [];
  const unresolved: string[] = [];
  const files = [...new Set(extraction.queries.filter((q) => q.source !== 'rule').map((q) => q.file))];
  for (const file of files) {
    const values = builtins(stepS, window.endS - window.startS);
    for (const def of extraction.variables.get(file) ?? []) {
      const asked = interpolate(def.query, values);
      const parsed = parseVariableQuery(asked);
      let options: readonly string[] = [];
      if (parsed.kind === 'label_values') {
        const key = `label_values ${asked}`;
        const [ref, got] = await Promise.all(
          [stack.reference, target].map((e: PromEndpoint) => labelValues(e, parsed.label, parsed.match, window, labelTimeoutMs)),
        );
        if (ref?.ok === true) options = ref.values;
        if (ref === undefined || got === undefined) continue;
        if (!ref.ok) verdicts.set(key, { verdict: 'Prometheus error too', detail: `${ref.httpStatus} ${ref.error}` });
        else if (!got.ok) verdicts.set(key, { verdict: errorClass(got.httpStatus), detail: `${got.httpStatus} ${got.error}` });
        else {
          const why = valuesDiff(ref.values, got.values);
          verdicts.set(
            key,
            why !== undefined ? { verdict: 'different', detail: why } : { verdict: ref.values.length === 0 ? 'both empty' : 'equal', detail: '' },
          );
        }
        occurrences.push({ source: 'variable', file, where: `$${def.name}`, query: key });
      } else {
        occurrences.push({ source: 'variable', file, where: `$${def.name}`, query: parsed.kind === 'query_result' ? parsed.expr : asked });
      }
      if (options.length === 0) unresolved.push(`${file} $${def.name}`);
      values.set(def.name, chooseValue(def, options));
    }
    for (const q of extraction.queries.filter((x) => x.file === file && x.source === 'dashboard'))
      occurrences.push({ source: 'dashboard', file, where: q.where, query: interpolate(q.expr, values) });
  }
  return { occurrences, unresolved };
}

/** Asks every distinct PromQL query of both in batches until the deadline; the rest stay "not run". */
async function judgeQueries(
  queries: readonly string[],
  stack: DifferentialStack,
  window: Window,
  deadline: number,
  verdicts: Map<string, Verdict>,
): Promise<void> {
  const rows: DifferentialRow[] = queries.map((query) => ({
    query,
    construct: 'chart',
    ...(/^\s*(sort|sort_desc|topk|bottomk)\s*\(/.test(query) ? { ordered: true } : {}),
  }));
  const evaluations = evaluationsOver([window.endS], window, [stepS]);
  for (let i = 0; i < rows.length && Date.now() < deadline; i += batchRows) {
    const batch = rows.slice(i, i + batchRows);
    const outcome = await runDifferential(batch, evaluations, stack.reference, stack.tenantry.endpoint(tenant), intOf('KUBE_QUERIES_PARALLEL', 4));
    for (const [q, v] of verdictsOf(batch, outcome)) verdicts.set(q, v);
    console.log(`  ${Math.min(i + batchRows, rows.length)} / ${rows.length} queries asked`);
  }
}

async function main(): Promise<number> {
  const chart = process.argv[2] ?? process.env['KUBE_QUERIES_CHART'];
  if (chart === undefined) {
    console.error('usage: npm run bench:kube-queries -- <folder holding charts/kube-prometheus-stack> (or KUBE_QUERIES_CHART)');
    return 2;
  }
  const binaries = findPrometheus();
  if (!binaries.ok) {
    console.error(binaries.reason);
    return 2;
  }
  const started = Date.now();
  const deadline = started + intOf('KUBE_QUERIES_DEADLINE_S', 1200) * 1000;
  const extraction = extractChartQueries(chart);
  const count = (s: string): number => extraction.queries.filter((q) => q.source === s).length;
  console.log(
    `extracted ${extraction.queries.length} expressions: ${count('dashboard')} panel targets, ${count('variable')} variable queries, ${count('rule')} rules; ` +
      `${extraction.unextracted.length} could not be extracted`,
  );
  for (const u of extraction.unextracted) console.log(`  not extracted: ${u.file} (${u.where}): ${u.why}`);

  const endMs = Math.floor(Date.now() / 60_000) * 60_000 - 3 * 60_000;
  const span = { startMs: endMs - kubeSpanMs, endMs };
  const window = { startS: span.startMs / 1000, endS: span.endMs / 1000 };
  const series = kubeSeries(span.startMs);
  if (process.env['KUBE_QUERIES_FILL'] === '1') {
    // Variables are not known before the data is: the filler reads the queries with the built-ins only.
    const fixed = builtins(stepS, (span.endMs - span.startMs) / 1000);
    const texts = extraction.queries.map((q) => {
      const v = parseVariableQuery(q.expr);
      return interpolate(v.kind === 'label_values' ? (v.match ?? '') : v.kind === 'query_result' ? v.expr : q.expr, fixed);
    });
    const filler = fillerSeries(
      texts.filter((t) => t !== ''),
      series,
      span.startMs,
    );
    series.push(...filler.series);
    console.log(
      `filler: ${filler.series.length} series for ${filler.metrics} metrics the synthetic cluster lacks; ${filler.unparsed} queries unparsable for it`,
    );
  }
  const stack = await startDifferentialStack(binaries.found.prometheus, 'tenantry-kube-queries-', [tenant]);
  try {
    const requests = await pushToBoth(series, span, stack.prometheus, stack.tenantry, tenant);
    console.log(`pushed ${series.length} series, ${pointCount(series)} samples in ${requests} remote-write requests to both`);
    const synced = await waitForSameAnswer(
      stack.reference,
      stack.tenantry.endpoint(tenant),
      'count({cluster="c1"})',
      { kind: 'range', start: window.startS, end: window.endS, step: 15 },
      60_000,
    );
    if (!synced.same) console.log(`WARNING: the two never counted the same series: ${synced.reference.slice(0, 200)} vs ${synced.target.slice(0, 200)}`);

    const verdicts = new Map<string, Verdict>();
    const { occurrences, unresolved } = await dashboardOccurrences(extraction, stack, window, verdicts);
    for (const q of extraction.queries.filter((x) => x.source === 'rule')) occurrences.push({ source: 'rule', file: q.file, where: q.where, query: q.expr });
    const promql = [...new Set(occurrences.map((o) => o.query).filter((q) => !verdicts.has(q)))];
    console.log(`variables with no value in the data (Grafana would leave them empty): ${unresolved.length}: ${unresolved.join(', ')}`);
    await judgeQueries(promql, stack, window, deadline, verdicts);

    console.log(`\n## kube-prometheus-stack's queries against Prometheus 3.16 (${Math.round((Date.now() - started) / 1000)} s)\n`);
    console.log('Each query asked as a range query (30 min, 60 s step) and an instant query; label_values variables as label values requests.\n');
    console.log(summaryTable(occurrences, verdicts));
    console.log('\n## Tenantry-only errors, by message');
    console.log(listing(occurrences, verdicts, ['Tenantry 4xx', 'Tenantry 5xx', 'Tenantry timeout']));
    console.log('\n## Differences');
    console.log(listing(occurrences, verdicts, ['different']));
    console.log('\n## Prometheus errors too (not valid PromQL for Prometheus either)');
    console.log(listing(occurrences, verdicts, ['Prometheus error too']));
    if (process.env['KUBE_QUERIES_LIST_EMPTY'] === '1') {
      console.log('\n## Both empty');
      console.log(listing(occurrences, verdicts, ['both empty']));
    }
    return 0;
  } finally {
    await stack.stop();
  }
}

process.exitCode = await main();
