// The chart's alert and dashboard queries against the real Prometheus
// (3.16, built from its Go module) scraping a real Tenantry `all` process that has taken
// OTLP traffic: every expression evaluates without an error, and the panels
// about ingest, tenants, queries and processes show data. Thresholds and
// `for` durations are tested with promtool in monitoring.test.ts.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { dashboardExprs } from '../../chart/exported-metrics.ts';
import type { DashboardExpr } from '../../chart/exported-metrics.ts';
import { findHelm } from '../../chart/helm-binary.ts';
import { findPrometheus } from '../../../support/prometheus-binaries.ts';
import { skipUnlessFound } from '../../support/skip-unless-found.ts';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';
import { startPrometheus } from '../prometheus/support/prometheus-server.ts';
import type { PrometheusServer } from '../prometheus/support/prometheus-server.ts';

const execFileAsync = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');
const chart = join(root, 'charts', 'tenantry');
const key = 'monitoring-test-key-0123456789';

interface QueryAnswer {
  status: string;
  error?: string;
  data?: { result: unknown[] };
}

/** Grafana's variables as Grafana would send them with "All" selected. */
function asGrafanaSends(expr: string): string {
  return expr
    .replace(/\$__rate_interval|\$__interval/g, '1m')
    .replace(/\$__range/g, '5m')
    .replace(/\$(namespace|tenant)\b/g, '.*');
}

function logsRequest(tenant: string, lines: number): string {
  const now = BigInt(Date.now()) * 1_000_000n;
  const logRecords = Array.from({ length: lines }, (_, i) => ({
    timeUnixNano: String(now + BigInt(i)),
    severityText: 'INFO',
    body: { stringValue: `line ${i}` },
  }));
  return JSON.stringify({
    resourceLogs: [
      {
        resource: {
          attributes: [
            { key: 'tenant.id', value: { stringValue: tenant } },
            { key: 'service.name', value: { stringValue: 'checkout' } },
          ],
        },
        scopeLogs: [{ logRecords }],
      },
    ],
  });
}

describe('chart alert and dashboard queries on a real Prometheus scraping Tenantry', function () {
  this.timeout(120_000);
  const prometheusFound = findPrometheus();
  const helmFound = findHelm();
  let dir: string | undefined;
  let tenantry: TenantryProcess | undefined;
  let prometheus: PrometheusServer | undefined;

  const query = async (expr: string): Promise<QueryAnswer> => {
    if (prometheus === undefined) throw new Error('no prometheus');
    const res = await fetch(`${prometheus.url}/api/v1/query`, { method: 'POST', body: new URLSearchParams({ query: expr }) });
    return (await res.json()) as QueryAnswer;
  };

  before(async function () {
    skipUnlessFound(this, prometheusFound);
    if (!prometheusFound.ok) return;
    dir = await mkdtemp(join(tmpdir(), 'tenantry-monitoring-'));
    tenantry = startTenantry(
      ['all'],
      testEnvironment(join(dir, 'data'), {
        // The tenants dashboard's queries read per-tenant series.
        TENANTRY_METRICS_TENANT_LABELS: 'on',
        TENANTRY_API_KEYS: JSON.stringify([{ name: 'test', key, scopes: ['ingest', 'read', 'admin'], tenants: ['*'] }]),
      }),
    );
    const ports = await tenantry.started();
    const otlp = `http://127.0.0.1:${String(ports['otlpHttp'])}`;
    for (const [tenant, lines] of [
      ['acme', 20],
      ['globex', 5],
    ] as const) {
      const res = await fetch(`${otlp}/v1/logs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: logsRequest(tenant, lines),
      });
      expect(res.status, await res.text()).to.equal(200);
    }
    // One API request, so the API's request metrics have series.
    expect((await fetch(`http://127.0.0.1:${String(ports['api'])}/v1/tenants`, { headers: { authorization: `Bearer ${key}` } })).status).to.equal(200);
    // Target `all` serves one registry on every port: one target, or every series would be counted twice.
    prometheus = await startPrometheus({ binary: prometheusFound.found.prometheus, dir, targets: [`127.0.0.1:${String(ports['otlpHttp'])}`] });
    // Prometheus reports no event when a scrape has landed: a bounded poll for two scrapes' worth (rate() needs two samples).
    const deadline = Date.now() + 30_000;
    for (;;) {
      const answer = await query('count_over_time(tenantry_gateway_tenant_accepted_items_total{tenant="acme"}[1m])');
      const samples = Number((answer.data?.result[0] as { value?: [number, string] } | undefined)?.value?.[1] ?? 0);
      if (samples >= 3) break;
      if (Date.now() > deadline) throw new Error(`no scrapes of Tenantry within 30 s:\n${prometheus.tail()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  });

  after(async () => {
    await prometheus?.stop();
    await tenantry?.stop('SIGKILL');
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('every dashboard expression evaluates without an error, and the ingest, tenant, query and process panels show data', async () => {
    const folder = join(chart, 'dashboards');
    const exprs: DashboardExpr[] = (await readdir(folder)).filter((f) => f.endsWith('.json')).flatMap((f) => dashboardExprs(join(folder, f)));
    const empty: string[] = [];
    for (const e of exprs) {
      const answer = await query(asGrafanaSends(e.expr));
      expect(answer.status, `${e.dashboard} / ${e.panel}: ${answer.error ?? ''}`).to.equal('success');
      if ((answer.data?.result.length ?? 0) === 0) empty.push(`${e.dashboard} / ${e.panel}: ${e.expr}`);
    }
    // Series that only exist after a rejection, a failure, a throttled request, or in a cluster (the operator); every other query must show data.
    const allowedEmpty = [/rejected|truncations|throttled|ok="false"|dead_letter|tenantry_operator_|refused/];
    expect(empty.filter((p) => !allowedEmpty.some((r) => r.test(p)))).to.deep.equal([]);
    const perTenant = await query('sum by (tenant) (tenantry_gateway_tenant_accepted_items_total)');
    const counts = Object.fromEntries(
      (perTenant.data?.result as Array<{ metric: { tenant: string }; value: [number, string] }>).map((r) => [r.metric.tenant, Number(r.value[1])]),
    );
    expect(counts).to.deep.equal({ acme: 20, globex: 5 });
  });

  it('every alert expression evaluates without an error, and none fires on a healthy process', async function () {
    skipUnlessFound(this, helmFound);
    if (!helmFound.ok) return;
    const text = (
      await execFileAsync(helmFound.helm, ['template', 'rel', chart, '--set', 'monitoring.enabled=true', '--show-only', 'templates/prometheus-rules.yaml'])
    ).stdout;
    const rule = parseAllDocuments(text).map((d) => d.toJS() as { spec: { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> } })[0];
    const rules = rule?.spec.groups.flatMap((g) => g.rules) ?? [];
    expect(rules.length).to.be.greaterThan(10);
    for (const r of rules) {
      const answer = await query(r.expr);
      expect(answer.status, `${r.alert}: ${answer.error ?? ''}`).to.equal('success');
      expect(answer.data?.result, `${r.alert} would fire on a healthy process`).to.deep.equal([]);
    }
  });
});
