// Issue 34's dashboard-shaped differential: a synthetic exporter of
// node-exporter, kube-state-metrics, cAdvisor and kube-apiserver series and
// the recording rules dashboards read (support/kube-shapes.ts) is
// remote-written to a fresh Prometheus 3.16 and to Tenantry, and every query
// of support/dashboard-queries.ts (joins to info metrics with group_left,
// `or` fallbacks, sort_desc, scalar, colon names, label_replace, topk,
// histogram_quantile over the apiserver's buckets, ...) is asked of both as
// Grafana asks it: instant (tables, stats) at four times and range (graphs)
// at steps of 15 s, 60 s and 37 s. Every answer must be equal.
import { expect } from 'chai';
import { findPrometheus } from '../../../support/prometheus-binaries.ts';
import { skipUnlessFound } from '../../support/skip-unless-found.ts';
import { dashboardQueries } from './support/dashboard-queries.ts';
import { pushToBoth, startDifferentialStack, waitForSameAnswer } from './support/differential-stack.ts';
import type { DifferentialStack } from './support/differential-stack.ts';
import { differentialReport, evaluationsOver, runDifferential } from './support/differential-runner.ts';
import type { DifferentialOutcome, NamedEvaluation } from './support/differential-runner.ts';
import { kubeSeries, kubeSpanMs } from './support/kube-shapes.ts';
import { pointCount } from './support/synthetic-series.ts';

const tenant = 'dashboards';

describe("Dashboard-shaped PromQL against Prometheus 3.16: a synthetic Kubernetes cluster's exporters", function () {
  this.timeout(600_000);
  let stack: DifferentialStack | undefined;
  let evaluations: NamedEvaluation[] = [];
  let synced = { same: false, reference: '', target: '' };
  let outcome: Promise<DifferentialOutcome> | undefined;

  before(async function () {
    skipUnlessFound(this, findPrometheus());
    const binaries = findPrometheus();
    if (!binaries.ok) return;
    const endMs = Math.floor(Date.now() / 60_000) * 60_000 - 3 * 60_000;
    const span = { startMs: endMs - kubeSpanMs, endMs };
    const series = kubeSeries(span.startMs);
    stack = await startDifferentialStack(binaries.found.prometheus, 'tenantry-dashboard-diff-', [tenant]);
    const requests = await pushToBoth(series, span, stack.prometheus, stack.tenantry, tenant);
    console.log(`    pushed ${series.length} series, ${pointCount(series)} samples in ${requests} remote-write requests to both`);
    const startS = span.startMs / 1000;
    const endS = span.endMs / 1000;
    evaluations = evaluationsOver([startS + 600, startS + 1337.5, endS, endS + 240], { startS: startS + 300, endS: endS + 120 }, [15, 60, 37]);
    // No event says a pushed sample is visible: poll until both count the same series at every 15 s step.
    synced = await waitForSameAnswer(
      stack.reference,
      stack.tenantry.endpoint(tenant),
      'count({cluster="c1"})',
      { kind: 'range', start: startS, end: endS + 300, step: 15 },
      60_000,
    );
  });

  after(async () => {
    await stack?.stop();
  });

  const differential = (): Promise<DifferentialOutcome> => {
    if (stack === undefined) throw new Error('no stack');
    outcome ??= runDifferential(dashboardQueries, evaluations, stack.reference, stack.tenantry.endpoint(tenant));
    return outcome;
  };

  it('both hold the pushed data: Prometheus and Tenantry count the same series at every 15 s step', () => {
    expect(synced.reference, 'Prometheus counted the series').to.match(/"\d+"/);
    expect(synced.target, 'Tenantry counts what Prometheus counts').to.equal(synced.reference);
  });

  it('Prometheus 3.16 answers every dashboard query (at least 100) without error and with data', async () => {
    const result = await differential();
    expect(result.rows).to.be.at.least(100);
    if (result.emptyRows.length > 0)
      console.log(`    rows Prometheus answers with no series at every evaluation: ${result.emptyRows.length}\n      ${result.emptyRows.join('\n      ')}`);
    expect(result.referenceProblems.slice(0, 30), result.referenceProblems.slice(0, 30).join('\n')).to.deep.equal([]);
  });

  it('Tenantry answers every dashboard query equally: instant at 4 times, range at steps 15 s, 60 s and 37 s', async () => {
    const result = await differential();
    const report = differentialReport('dashboard differential', result);
    console.log(report);
    expect(result.differences.length, report).to.equal(0);
  });
});
