// Issue 34's engine differential: a fresh Prometheus 3.16 and Tenantry get
// the same synthetic remote write (support/synthetic-series.ts: counter
// resets, staleness markers, label churn, classic and native histograms,
// summaries, UTF-8 and recording-rule names, NaN/±Inf, irregular intervals),
// then every row of support/engine-queries.ts is asked of both as instant
// queries at four times (on the grid, off it, and at both sides of the 5 m
// lookback edge after the data ends) and as range queries at steps of 15 s, 60 s
// and 37 s; every answer must be equal. Part of the data is also sent as
// OTLP/JSON to a second tenant and read under the documented
// OpenTelemetry → Prometheus names: its answers must equal Prometheus' over
// the remote-written series.
import { expect } from 'chai';
import { findPrometheus } from '../../../support/prometheus-binaries.ts';
import { skipUnlessFound } from '../../support/skip-unless-found.ts';
import { pushToBoth, startDifferentialStack, waitForSameAnswer } from './support/differential-stack.ts';
import type { DifferentialStack } from './support/differential-stack.ts';
import { differentialReport, evaluationsOver, runDifferential } from './support/differential-runner.ts';
import type { DifferentialOutcome, DifferentialRow, NamedEvaluation } from './support/differential-runner.ts';
import { engineQueries } from './support/engine-queries.ts';
import type { PromEvaluation } from './support/promql-client.ts';
import { otlpTwinRequests, sendOtlpJson } from './support/otlp-synthetic.ts';
import { datasetSpan, pointCount, syntheticSeries } from './support/synthetic-series.ts';

const tenants = { rw: 'engine-rw', otlp: 'engine-otlp' };

/** The twin's table: what the OTLP tenant holds, asked by the remote-written names. */
const otlpTwinRows: DifferentialRow[] = [
  'synth_temperature_celsius',
  'avg_over_time(synth_temperature_celsius[5m])',
  'max by (zone) (synth_temperature_celsius)',
  'delta(synth_temperature_celsius[10m])',
  'synth_requests_total{instance=~"app-[12]:8080"}',
  'rate(synth_requests_total{instance=~"app-[12]:8080"}[5m])',
  'increase(synth_requests_total{instance=~"app-[12]:8080"}[10m])',
  'resets(synth_requests_total{instance=~"app-[12]:8080"}[1h])',
  'sum by (code) (rate(synth_requests_total{instance=~"app-[12]:8080"}[5m]))',
  'synth_http_request_duration_seconds_bucket',
  'synth_http_request_duration_seconds_count',
  'synth_http_request_duration_seconds_sum',
  'histogram_quantile(0.9, sum by (le, handler) (rate(synth_http_request_duration_seconds_bucket[5m])))',
  'rate(synth_http_request_duration_seconds_sum[5m]) / rate(synth_http_request_duration_seconds_count[5m])',
  'sum by (le) (increase(synth_http_request_duration_seconds_bucket{handler="/api/users"}[10m]))',
].map((query) => ({ query, construct: 'OTLP twin' }));

describe('PromQL engine differential against Prometheus 3.16: synthetic remote write and its OTLP twin', function () {
  this.timeout(600_000);
  let stack: DifferentialStack | undefined;
  let evaluations: NamedEvaluation[] = [];
  let rows: DifferentialRow[] = [];
  let synced = { same: false, reference: '', target: '' };
  let twinSynced = { same: false, reference: '', target: '' };
  let outcome: Promise<DifferentialOutcome> | undefined;

  before(async function () {
    skipUnlessFound(this, findPrometheus());
    const binaries = findPrometheus();
    if (!binaries.ok) return;
    const span = datasetSpan(Date.now());
    const series = syntheticSeries(span.startMs, span.endMs);
    stack = await startDifferentialStack(binaries.found.prometheus, 'tenantry-engine-diff-', [tenants.rw, tenants.otlp]);
    const requests = await pushToBoth(series, span, stack.prometheus, stack.tenantry, tenants.rw);
    await sendOtlpJson(stack.tenantry.ingestUrl, stack.tenantry.bearer, otlpTwinRequests(series, tenants.otlp));
    const startS = span.startMs / 1000;
    const endS = span.endMs / 1000;
    console.log(
      `    pushed ${series.length} series, ${pointCount(series)} samples and histograms in ${requests} remote-write requests to both; data ${new Date(span.startMs).toISOString()} .. ${new Date(span.endMs).toISOString()}`,
    );
    rows = engineQueries(startS, endS);
    evaluations = evaluationsOver([startS + 600, startS + 1507.5, endS + 299.999, endS + 300], { startS: startS + 180, endS: endS + 240 }, [15, 60, 37]);
    // Neither process says when a pushed sample becomes visible: poll until
    // both count the same series at every 15 s step of the span (a missing
    // slice, or a stale marker not applied, changes some step's count).
    const everyStep: PromEvaluation = { kind: 'range', start: startS, end: endS + 300, step: 15 };
    synced = await waitForSameAnswer(stack.reference, stack.tenantry.endpoint(tenants.rw), 'count({job="synthetic"})', everyStep, 60_000);
    twinSynced = await waitForSameAnswer(
      stack.reference,
      stack.tenantry.endpoint(tenants.otlp),
      'count({__name__=~"synth_temperature_celsius|synth_requests_total|synth_http_request_duration_seconds_.*", instance=~"app-[12]:8080"})',
      everyStep,
      30_000,
    );
  });

  after(async () => {
    await stack?.stop();
  });

  const differential = (): Promise<DifferentialOutcome> => {
    if (stack === undefined) throw new Error('no stack');
    outcome ??= runDifferential(rows, evaluations, stack.reference, stack.tenantry.endpoint(tenants.rw));
    return outcome;
  };

  it('both hold the pushed data: Prometheus and Tenantry count the same series at every 15 s step', () => {
    expect(synced.reference, 'Prometheus counted the series').to.match(/"\d+"/);
    expect(synced.target, 'Tenantry counts what Prometheus counts').to.equal(synced.reference);
  });

  it('Prometheus 3.16 answers every row as the table expects (at least 300 queries; errors only where deliberate)', async () => {
    const result = await differential();
    expect(result.rows).to.be.at.least(300);
    if (result.emptyRows.length > 0)
      console.log(`    rows Prometheus answers with no series at every evaluation: ${result.emptyRows.length}\n      ${result.emptyRows.join('\n      ')}`);
    expect(result.referenceProblems.slice(0, 30), result.referenceProblems.slice(0, 30).join('\n')).to.deep.equal([]);
  });

  it('Tenantry answers every row equally: instant at 4 times, range at steps 15 s, 60 s and 37 s', async () => {
    const result = await differential();
    const report = differentialReport('engine differential', result);
    console.log(report);
    expect(result.differences.length, report).to.equal(0);
  });

  it('the OTLP twin, read by its documented Prometheus names, answers as Prometheus does over the remote-written series', async () => {
    if (stack === undefined) throw new Error('no stack');
    expect(twinSynced.target, 'the OTLP tenant counts the series Prometheus counts').to.equal(twinSynced.reference);
    const twin = await runDifferential(otlpTwinRows, evaluations, stack.reference, stack.tenantry.endpoint(tenants.otlp));
    const report = differentialReport('OTLP twin', twin);
    console.log(report);
    expect(twin.referenceProblems).to.deep.equal([]);
    expect(twin.differences.length, report).to.equal(0);
  });
});
