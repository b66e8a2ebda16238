// Issue 16's main proof: the real Prometheus (3.16, built from its Go module) scrapes two
// demo targets every second (counters with a reset, gauges, a classic
// histogram, label churn, a metric that comes and goes) and remote-writes
// everything to the Tenantry `all` process; the targets then stop (up = 0 and
// staleness markers), and the same PromQL queries — the differential table,
// then the PromQL compliance tester's suite — are asked of both, instant and
// range, and must agree. Also: what a Grafana data source asks (health check,
// label browser, label_values) answered as Prometheus does, unsupported
// constructs refused with 400 bad_data, tenant isolation on every /prometheus
// endpoint and on the push, and the OTLP twin of the same metrics with the
// same series shape.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { compressSync } from 'snappy';
import { findComplianceTester, findPrometheus } from '../../../support/prometheus-binaries.ts';
import { skipBecause, skipUnlessFound } from '../../support/skip-unless-found.ts';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';
import { constructsOf, runComplianceTester } from './support/compliance-run.ts';
import { startDemoTarget } from './support/demo-target.ts';
import type { DemoTarget } from './support/demo-target.ts';
import { deliberateDifferences, differentialQueries, unsupportedQueries } from './support/differential-queries.ts';
import { exportOtlpTwin } from './support/otlp-twin.ts';
import { startPrometheus } from './support/prometheus-server.ts';
import type { PrometheusServer } from './support/prometheus-server.ts';
import { compareAnswers, labelSets, promQuery, summarize, valuesBySeries } from './support/promql-client.ts';
import type { PromEndpoint, PromEvaluation } from './support/promql-client.ts';

const tenants = { rw: 'prom-rw', otlp: 'prom-otlp', other: 'prom-other' };
// The remote-write key is bound to its one tenant (X-Scope-OrgID implied, though Prometheus 3
// also sends it); queries use a key of two tenants with X-Scope-OrgID.
const keys = { rw: 'prom-diff-rw-key-0123456789abcdef', multi: 'prom-diff-multi-key-0123456789abcdef', other: 'prom-diff-other-key-0123456789abcdef' };
/** Scrapes per target: at 1 s, about 40 s of data with a counter reset, label churn and a metric that comes and goes. */
const scrapes = 40;
const schedule = { counterResetAt: 18, churnAt: 22, intermittentFrom: 8, intermittentUntil: 26 };

/** Bounded poll for a condition the processes report no event for; returns whether it held in time. */
async function until(what: () => Promise<boolean>, timeoutMs: number, everyMs = 250): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await what()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

describe('Prometheus compatibility against the real Prometheus (remote write in, PromQL out)', function () {
  this.timeout(900_000);
  let dir = '';
  let tenantry: TenantryProcess | undefined;
  let prometheus: PrometheusServer | undefined;
  const targets: DemoTarget[] = [];
  let api = 0;
  let otlp = 0;
  let reference: PromEndpoint;
  let target: PromEndpoint;
  /** Evaluation window (unix seconds): from a few scrapes in to a few seconds after the targets stopped. */
  let windowStart = 0;
  let windowEnd = 0;
  let stoppedAt = 0;

  before(async function () {
    skipUnlessFound(this, findPrometheus());
    const binaries = findPrometheus();
    if (!binaries.ok) return;
    dir = await mkdtemp(join(tmpdir(), 'tenantry-prom-diff-'));
    tenantry = startTenantry(
      ['all'],
      testEnvironment(join(dir, 'tenantry'), {
        TENANTRY_API_KEYS: JSON.stringify([
          { key: keys.rw, scopes: ['ingest'], tenants: [tenants.rw] },
          { key: keys.multi, scopes: ['ingest', 'read'], tenants: [tenants.rw, tenants.otlp] },
          { key: keys.other, scopes: ['ingest', 'read'], tenants: [tenants.other] },
        ]),
      }),
    );
    const ports = await tenantry.started(180_000);
    api = ports['api'] ?? 0;
    otlp = ports['otlpHttp'] ?? 0;
    targets.push(await startDemoTarget(1, schedule), await startDemoTarget(2, { ...schedule, counterResetAt: 30 }));
    prometheus = await startPrometheus({
      binary: binaries.found.prometheus,
      dir,
      targets: targets.map((t) => t.address),
      remoteWrite: { url: `http://127.0.0.1:${otlp}/api/v1/push`, key: keys.rw, tenant: tenants.rw },
    });
    reference = { url: prometheus.url, headers: {} };
    target = {
      url: `http://127.0.0.1:${api}/prometheus`,
      headers: { authorization: `Basic ${Buffer.from(`grafana:${keys.multi}`).toString('base64')}`, 'x-scope-orgid': tenants.rw },
    };

    await Promise.all(targets.map((t) => t.scraped(3)));
    windowStart = Math.ceil(Date.now() / 1000) + 1;
    await Promise.all(targets.map((t) => t.scraped(scrapes)));
    await Promise.all(targets.map((t) => t.close()));
    stoppedAt = Date.now() / 1000;
    // Prometheus reports no event when a scrape fails: poll until it has
    // recorded up = 0 (and the staleness markers) for both targets.
    const prom = prometheus;
    const down = await until(async () => {
      const a = await promQuery(reference, 'count(up == 0)', { kind: 'instant', time: Date.now() / 1000 });
      return a.status === 'success' && JSON.stringify(a.result).includes('"2"');
    }, 30_000);
    expect(down, 'Prometheus recorded up == 0 for both stopped targets').to.equal(true);
    windowEnd = Math.floor(Date.now() / 1000) + 1;
    // Remote write drains asynchronously and says so only in its own metrics:
    // poll until everything up to the window's end was sent.
    const drained = await until(async () => (await prom.selfMetric('prometheus_remote_storage_queue_highest_sent_timestamp_seconds')) >= windowEnd + 1, 60_000);
    expect(drained, `remote write sent everything up to ${windowEnd}:\n${prom.tail()}`).to.equal(true);
    // Tenantry makes rows visible a moment after it acknowledges them, with
    // no event a client can wait on: poll until it counts as many `up`
    // samples in the window as Prometheus does (the comparison below reports
    // any difference that remains).
    const upCount = `count_over_time(up[${windowEnd - windowStart + 60}s])`;
    const expected = summarize(await promQuery(reference, upCount, { kind: 'instant', time: windowEnd }));
    await until(async () => summarize(await promQuery(target, upCount, { kind: 'instant', time: windowEnd })) === expected, 30_000, 500);
  });

  after(async () => {
    await Promise.all(targets.map((t) => t.close()));
    await prometheus?.stop();
    await tenantry?.stop();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('Prometheus remote-wrote every scraped sample to Tenantry (none failed, none dropped)', async () => {
    const prom = prometheus;
    if (prom === undefined) throw new Error('no prometheus');
    expect(await prom.selfMetric('prometheus_remote_storage_samples_total')).to.be.greaterThan(scrapes * 2 * 40);
    expect(await prom.selfMetric('prometheus_remote_storage_samples_failed_total'), prom.tail()).to.equal(0);
    expect(await prom.selfMetric('prometheus_remote_storage_samples_dropped_total')).to.equal(0);
  });

  it('answers the differential table like Prometheus: every query instant at 3 times and range at 3 steps', async () => {
    const instants: PromEvaluation[] = [windowStart + 12, Math.floor(stoppedAt) - 1, windowEnd].map((time) => ({ kind: 'instant', time }));
    const ranges: PromEvaluation[] = [1, 4, 15].map((step) => ({ kind: 'range', start: windowStart, end: windowEnd, step }));
    const rows: string[] = [];
    const mismatches: Array<{ query: string; at: string; reference: string; target: string; why: string }> = [];
    let compared = 0;
    for (const { query, construct, instantOnly } of differentialQueries) {
      const deliberate = deliberateDifferences.get(query);
      if (deliberate !== undefined) {
        console.log(`  documented  ${construct.padEnd(30)} ${query}  — ${deliberate}`);
        continue;
      }
      const evaluations = instantOnly === true ? instants : [...instants, ...ranges];
      // A query's evaluations run at once (6 of Tenantry's 8 concurrent queries per key): the table's time is Tenantry's latency.
      const answers = await Promise.all(
        evaluations.map(async (at) => ({ at, answers: await Promise.all([promQuery(reference, query, at), promQuery(target, query, at)]) })),
      );
      const failed: string[] = [];
      for (const {
        at,
        answers: [ref, got],
      } of answers) {
        compared += 1;
        expect(ref.status, `Prometheus answered ${query}: ${summarize(ref)}`).to.equal('success');
        const why = compareAnswers(ref, got);
        if (why === undefined) continue;
        const label = at.kind === 'instant' ? `instant@${at.time}` : `range step ${at.step}s`;
        failed.push(`${label}: ${why}`);
        mismatches.push({ query, at: label, reference: summarize(ref), target: summarize(got), why });
      }
      const status = failed.length === 0 ? 'ok        ' : 'MISMATCH  ';
      const detail = failed.slice(0, 2);
      const row = `  ${status}  ${construct.padEnd(30)} ${query}${detail.length === 0 ? '' : `\n              ${detail.join('\n              ')}`}`;
      rows.push(row);
      console.log(row);
    }
    const passedQueries = rows.filter((r) => r.startsWith('  ok')).length;
    console.log(
      `    differential table: ${passedQueries} / ${differentialQueries.length} queries equal (${compared} evaluations), ${deliberateDifferences.size} documented differences`,
    );
    for (const m of mismatches.slice(0, 30)) console.log(`      ${m.query} [${m.at}]\n        Prometheus: ${m.reference}\n        Tenantry:   ${m.target}`);
    expect(mismatches.map((m) => `${m.query} [${m.at}]: ${m.why}`)).to.deep.equal([]);
  });

  it('answers what a Grafana Prometheus data source asks (health check, metric and label browser, label_values, series) as Prometheus does', async () => {
    const get = async (endpoint: PromEndpoint, path: string): Promise<{ status: number; data: unknown }> => {
      const res = await fetch(`${endpoint.url}/api/v1${path}`, { headers: { ...endpoint.headers } });
      const body = (await res.json()) as { data?: unknown };
      return { status: res.status, data: body.data };
    };
    const sorted = (data: unknown): unknown => (Array.isArray(data) ? (data as unknown[]).map((x) => JSON.stringify(x)).sort() : data);
    // The health check: an instant query of 1+1, and the build information.
    const health = await promQuery(target, '1+1', { kind: 'instant', time: windowEnd });
    expect([health.resultType, (health.result as unknown[])[1]]).to.deep.equal(['scalar', '2']);
    expect((await get(target, '/status/buildinfo')).status).to.equal(200);
    const range = `start=${windowStart}&end=${windowEnd}`;
    for (const path of [
      `/labels?${range}`,
      `/label/__name__/values?${range}`,
      `/label/job/values?${range}`,
      `/label/version/values?${range}`,
      `/label/type/values?${range}&match[]=${encodeURIComponent('demo_memory_usage_bytes{type!="free"}')}`,
      `/series?${range}&match[]=demo_build_info`,
    ]) {
      const [ref, got] = await Promise.all([get(reference, path), get(target, path)]);
      expect(got.status, path).to.equal(200);
      expect(sorted(ref.data), `Prometheus ${path}`).not.to.deep.equal([]);
      expect(sorted(got.data), path).to.deep.equal(sorted(ref.data));
    }
  });

  it('answers format_query and parse_query as Prometheus does', async () => {
    const queries = [
      'sum by (job) (rate(http_requests_total{code=~"5.."}[5m] offset 1m))',
      'a * on (x) group_left (y) b',
      'up == up',
      'up > bool 1',
      'max_over_time(up[1h:5m] @ end())',
      'rate(up[5m:] @ 1700000000)',
      'label_replace(up, "a", "$1", "b", "(.*)")',
      '-1 + 2 ^ 3',
      '(1 + -up) > bool 2',
      'topk(3, up)',
      'count_values("x", up)',
      '"str"',
      'sum without (instance) (up) / ignoring (mode) group_right sum(up)',
      'histogram_quantile(0.9, sum by (le) (rate(demo_api_request_duration_seconds_bucket[1m])))',
      'up offset -5m',
      '{"my.metric", "label.x"="y"}',
      'absent(nonexistent{job="x"}) or vector(1)',
      'sort_desc(sum by (a, b, c) (up)) unless on (a) up',
    ];
    for (const path of ['/format_query', '/parse_query']) {
      for (const query of queries) {
        const ask = async (endpoint: PromEndpoint): Promise<unknown> => {
          const res = await fetch(`${endpoint.url}/api/v1${path}?${new URLSearchParams({ query }).toString()}`, { headers: { ...endpoint.headers } });
          return { status: res.status, body: await res.json() };
        };
        const [ref, got] = await Promise.all([ask(reference), ask(target)]);
        expect(got, `${path} ${query}`).to.deep.equal(ref);
      }
    }
  });

  it('refuses what Prometheus 3.16 offers only behind a feature flag with 400 bad_data naming it (or answers exactly as Prometheus)', async () => {
    for (const { query, names } of unsupportedQueries) {
      const at: PromEvaluation = { kind: 'instant', time: windowEnd };
      const got = await promQuery(target, query, at);
      if (got.status === 'success') {
        expect(compareAnswers(await promQuery(reference, query, at), got), query).to.equal(undefined);
        continue;
      }
      expect([got.httpStatus, got.errorType], `${query}: ${summarize(got)}`).to.deep.equal([400, 'bad_data']);
      expect(got.error, query).to.include(names);
    }
    const unknown = await promQuery(target, 'no_such_function(up)', { kind: 'instant', time: windowEnd });
    expect([unknown.httpStatus, unknown.status, unknown.errorType]).to.deep.equal([400, 'error', 'bad_data']);
  });

  it("isolation: a key of tenants rw/otlp asking for tenant other gets 404 on every endpoint and on the push; other's names never show", async () => {
    // Tenant other gets a metric of its own through OTLP.
    const secret = await exportOtlpTwin(
      { otlpHttpUrl: `http://127.0.0.1:${otlp}`, key: keys.other, tenant: tenants.other, job: 'secret-job', instance: 'secret:1' },
      1,
    );
    expect(secret.map((r) => r.code)).to.deep.equal([0]);
    const basic = `Basic ${Buffer.from(`grafana:${keys.multi}`).toString('base64')}`;
    const asOther = { authorization: basic, 'x-scope-orgid': tenants.other };
    const base = `http://127.0.0.1:${api}/prometheus/api/v1`;
    const now = Math.floor(Date.now() / 1000);
    const paths = [
      `/query?query=up&time=${now}`,
      `/query_range?query=up&start=${now - 60}&end=${now}&step=15`,
      '/labels',
      '/label/__name__/values',
      '/label/job/values',
      '/series?match[]=up',
      '/metadata',
      '/status/buildinfo',
    ];
    for (const path of paths) {
      const res = await fetch(`${base}${path}`, { headers: asOther });
      const text = await res.text();
      expect(res.status, `GET ${path}`).to.equal(404);
      expect(text, path).not.to.include('secret');
    }
    const form = await fetch(`${base}/query`, {
      method: 'POST',
      headers: { ...asOther, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'query=up',
    });
    await form.arrayBuffer();
    expect(form.status, 'POST /query').to.equal(404);
    const push = await fetch(`http://127.0.0.1:${otlp}/api/v1/push`, {
      method: 'POST',
      body: compressSync(Buffer.alloc(0)),
      headers: { ...asOther, 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' },
    });
    await push.arrayBuffer();
    expect(push.status, 'POST /api/v1/push').to.equal(404);
    // The remote-write key, bound to tenant rw, naming tenant other: 404 too.
    const rwPush = await fetch(`http://127.0.0.1:${otlp}/api/v1/push`, {
      method: 'POST',
      body: compressSync(Buffer.alloc(0)),
      headers: {
        authorization: `Basic ${Buffer.from(`prometheus:${keys.rw}`).toString('base64')}`,
        'x-scope-orgid': tenants.other,
        'content-type': 'application/x-protobuf',
        'content-encoding': 'snappy',
      },
    });
    await rwPush.arrayBuffer();
    expect(rwPush.status, 'POST /api/v1/push, single-tenant key').to.equal(404);
    // The rw tenant's own label values list none of other's names or values.
    const own = { authorization: basic, 'x-scope-orgid': tenants.rw };
    for (const path of ['/labels', '/label/__name__/values', '/label/job/values', '/label/instance/values', '/series?match[]={job=~".%2B"}']) {
      const res = await fetch(`${base}${path}`, { headers: own });
      const text = await res.text();
      expect(res.status, path).to.equal(200);
      expect(text, path).not.to.include('secret');
    }
    // A multi-tenant key without X-Scope-OrgID: 400 naming the header.
    const missing = await fetch(`${base}/labels`, { headers: { authorization: basic } });
    expect(missing.status).to.equal(400);
    expect(await missing.text()).to.include('X-Scope-OrgID');
  });

  it('the OTLP twin (official OTel JS SDK and exporter) gives the same series shape as the remote-written metrics', async () => {
    const instance = targets[0]?.address ?? '';
    const results = await exportOtlpTwin({ otlpHttpUrl: `http://127.0.0.1:${otlp}`, key: keys.multi, tenant: tenants.otlp, job: 'demo', instance }, 6);
    expect(results.map((r) => r.code)).to.deep.equal([0, 0, 0, 0, 0, 0]);
    const twin: PromEndpoint = { url: target.url, headers: { ...target.headers, 'x-scope-orgid': tenants.otlp } };
    const sel = `{instance="${instance}"}`;
    const shapes = [
      `last_over_time(demo_memory_usage_bytes${sel}[10m])`,
      `last_over_time(demo_num_cpus${sel}[10m])`,
      `last_over_time(demo_cpu_usage_seconds_total${sel}[10m])`,
      `last_over_time(demo_api_request_duration_seconds_bucket${sel}[10m])`,
      `last_over_time(demo_api_request_duration_seconds_count${sel}[10m])`,
      `last_over_time(demo_api_request_duration_seconds_sum${sel}[10m])`,
      `histogram_quantile(0.9, sum by (le, path) (increase(demo_api_request_duration_seconds_bucket${sel}[10m])))`,
      `sum by (mode) (increase(demo_cpu_usage_seconds_total${sel}[10m]))`,
    ];
    const now = Math.floor(Date.now() / 1000) + 1;
    // OTLP rows become visible a moment after the acknowledgement (no event to wait on): bounded poll.
    await until(async () => labelSets(await promQuery(twin, shapes[0] ?? '', { kind: 'instant', time: now })).length === 4, 30_000, 500);
    for (const query of shapes) {
      const [rw, ot] = await Promise.all([promQuery(target, query, { kind: 'instant', time: now }), promQuery(twin, query, { kind: 'instant', time: now })]);
      expect(rw.status, `${query} remote-written: ${summarize(rw)}`).to.equal('success');
      expect(ot.status, `${query} OTLP: ${summarize(ot)}`).to.equal('success');
      // Compare names and label sets; OpenTelemetry scope labels, if any, are not in the scraped twin. Bucket bounds
      // compare as numbers: Prometheus 3 writes a scraped classic histogram's bounds in float form (le="1.0") and an
      // OTLP one's in Go's shortest form (le="1"), and Tenantry keeps what each path delivered.
      const bound = (text: string): string =>
        text.replace(/\b(le|quantile)="([^"]*)"/g, (_m, name: string, v: string) => `${name}="${Number(v.replace('Inf', 'Infinity'))}"`);
      const strip = (sets: string[]): string[] =>
        sets.map((s) => bound(s.replace(/, otel_scope_[a-z_]+="[^"]*"/g, '').replace(/otel_scope_[a-z_]+="[^"]*", /g, ''))).sort();
      expect(strip(labelSets(ot)), query).to.deep.equal(strip(labelSets(rw)));
      expect(labelSets(ot).length, query).to.be.greaterThan(0);
    }
    // Counters only increase over the window, in both twins.
    for (const endpoint of [target, twin]) {
      const increases = valuesBySeries(await promQuery(endpoint, `increase(demo_cpu_usage_seconds_total${sel}[10m])`, { kind: 'instant', time: now }));
      for (const [series, [v]] of increases) expect(v, series).to.be.greaterThan(0);
    }
  });

  it('the PromQL compliance tester: every query whose construct Tenantry supports matches Prometheus', async function () {
    const tester = findComplianceTester();
    if (tester.unobtainable !== undefined) skipBecause(this, 'PromQL compliance tester not obtainable here', tester.unobtainable);
    skipUnlessFound(this, tester);
    if (!tester.ok || prometheus === undefined) return;
    const report = await runComplianceTester({
      tester: tester.found.tester,
      queriesFile: tester.found.queries,
      dir,
      referenceUrl: prometheus.url,
      target: { url: target.url, basicAuthPassword: keys.multi, headers: { 'X-Scope-OrgID': tenants.rw } },
      end: windowEnd,
      rangeSeconds: windowEnd - windowStart,
      stepSeconds: 5,
      host: '127.0.0.1',
    });
    const failed = report.failed;
    console.log(`    compliance tester: ${report.passed} / ${report.total} passed, ${report.unsupported.length} unsupported, ${failed.length} failed`);
    console.log(`      unsupported: ${[...constructsOf(report.unsupported)].map(([name, n]) => `${name} x${n}`).join(', ')}`);
    for (const f of failed.slice(0, 40)) console.log(`      FAILED ${f.query}\n        ${f.detail.replace(/\n/g, '\n        ')}`);
    expect(failed.map((f) => f.query)).to.deep.equal([]);
  });
});
