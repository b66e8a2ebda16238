// The chart's kube-prometheus-stack fit: off by default; with two values a
// PodMonitor (operator), a ServiceMonitor (every stack's gateway and API), a
// PrometheusRule and Grafana dashboard ConfigMaps. The rendered rules pass
// `promtool check rules` and the alert unit tests in
// test/fixtures/monitoring/alerts-test.yaml, name only metrics the code
// exports, the monitors select what the operator really creates, and
// everything is accepted by a real API server holding (minimal copies of)
// prometheus-operator's CRDs.
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { parseAllDocuments, stringify } from 'yaml';
import { apiService, gatewayService } from '../../../operator/desired/tenantry-workloads.ts';
import { stackFromObject } from '../../../operator/stack/stack-spec.ts';
import { exportedSeriesNames, metricNamesIn } from '../../chart/exported-metrics.ts';
import { findHelm } from '../../chart/helm-binary.ts';
import { findK8sBinaries } from '../../k8s/k8s-binaries.ts';
import { startKubeTestServer } from '../../k8s/kube-test-server.ts';
import type { KubeTestServer } from '../../k8s/kube-test-server.ts';
import { findPrometheus } from '../../../support/prometheus-binaries.ts';
import { skipUnlessFound } from '../../support/skip-unless-found.ts';

const execFileAsync = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');
const chart = join(root, 'charts', 'tenantry');
const fixtures = join(root, 'test', 'fixtures', 'monitoring');
/** The two values of the README: the switch and the label kube-prometheus-stack's Prometheus selects. */
const twoValues = ['--set', 'monitoring.enabled=true', '--set', 'monitoring.labels.release=kube-prometheus-stack'];

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}
interface Rule {
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
}
interface RuleGroup {
  name: string;
  rules: Rule[];
}
interface Selector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values: string[] }>;
}

const helmFound = findHelm();
const prometheusFound = findPrometheus();

async function helm(args: readonly string[]): Promise<string> {
  if (!helmFound.ok) throw new Error(helmFound.reason);
  return (await execFileAsync(helmFound.helm, args, { cwd: root, maxBuffer: 32 * 1024 * 1024 })).stdout;
}

async function render(...args: string[]): Promise<Manifest[]> {
  const text = await helm(['template', 'rel', chart, '--namespace', 'tenantry', ...args]);
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

async function helmFails(args: readonly string[]): Promise<string> {
  try {
    await helm(args);
  } catch (error) {
    return String((error as { stderr?: unknown }).stderr);
  }
  throw new Error(`helm ${args.join(' ')} succeeded`);
}

function only(objects: Manifest[], kind: string): Manifest {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).to.have.length(1);
  return found[0] as Manifest;
}

/** Whether a label selector (matchLabels and In expressions) selects these labels. */
function selects(selector: Selector, labels: Record<string, string>): boolean {
  const byLabels = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpressions = (selector.matchExpressions ?? []).every((e) => e.operator === 'In' && e.values.includes(labels[e.key] ?? ''));
  return byLabels && byExpressions;
}

describe('Helm chart: kube-prometheus-stack fit', function () {
  this.timeout(120_000);
  before(function () {
    skipUnlessFound(this, helmFound);
  });

  it('is off by default: no monitor, rule or dashboard objects', async () => {
    const objects = await render();
    expect(objects.filter((o) => o.apiVersion.startsWith('monitoring.coreos.com/') || o.kind === 'ConfigMap')).to.deep.equal([]);
  });

  it('two values give a PodMonitor, a ServiceMonitor, a PrometheusRule and two dashboards, all with the Prometheus selector label', async () => {
    const objects = await render(...twoValues);
    const monitoring = objects.filter((o) => o.apiVersion === 'monitoring.coreos.com/v1');
    expect(monitoring.map((o) => o.kind).sort()).to.deep.equal(['PodMonitor', 'PrometheusRule', 'ServiceMonitor']);
    for (const o of monitoring) expect(o.metadata.labels, o.kind).to.include({ release: 'kube-prometheus-stack' });
    for (const o of [...monitoring, ...objects.filter((x) => x.kind === 'ConfigMap')]) {
      expect(o.metadata.labels, `${o.kind}/${o.metadata.name}`).to.include.keys(
        'helm.sh/chart',
        'app.kubernetes.io/name',
        'app.kubernetes.io/instance',
        'app.kubernetes.io/version',
        'app.kubernetes.io/managed-by',
      );
      expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).to.equal('tenantry');
    }
    const dashboards = objects.filter((o) => o.kind === 'ConfigMap');
    expect(dashboards.map((o) => o.metadata.name).sort()).to.deep.equal(['rel-tenantry-dashboard-overview', 'rel-tenantry-dashboard-tenants']);
    for (const d of dashboards) {
      expect(d.metadata.labels).to.include({ grafana_dashboard: '1' });
      const [file, json] = Object.entries(d.data ?? {})[0] ?? ['', ''];
      expect(file).to.match(/\.json$/);
      expect((JSON.parse(json) as { uid: string }).uid).to.match(/^tenantry-/);
    }
  });

  it("each part switches off on its own; the dashboards' label, namespace and annotations are configurable", async () => {
    const kinds = async (...args: string[]): Promise<string[]> =>
      (await render('--set', 'monitoring.enabled=true', ...args))
        .filter((o) => o.apiVersion === 'monitoring.coreos.com/v1' || o.kind === 'ConfigMap')
        .map((o) => o.kind)
        .sort();
    expect(await kinds('--set', 'monitoring.serviceMonitors.enabled=false')).to.deep.equal(['ConfigMap', 'ConfigMap', 'PrometheusRule']);
    expect(await kinds('--set', 'monitoring.rules.enabled=false')).to.deep.equal(['ConfigMap', 'ConfigMap', 'PodMonitor', 'ServiceMonitor']);
    expect(await kinds('--set', 'monitoring.dashboards.enabled=false')).to.deep.equal(['PodMonitor', 'PrometheusRule', 'ServiceMonitor']);
    const custom = (
      await render(
        '--set',
        'monitoring.enabled=true',
        '--set',
        'monitoring.dashboards.label=my_dashboards',
        '--set',
        'monitoring.dashboards.labelValue=yes',
        '--set',
        'monitoring.dashboards.namespace=grafana',
        '--set',
        'monitoring.dashboards.annotations.grafana_folder=Tenantry',
      )
    ).filter((o) => o.kind === 'ConfigMap');
    for (const d of custom) {
      expect(d.metadata.labels).to.include({ my_dashboards: 'yes' }).and.not.have.property('grafana_dashboard');
      expect(d.metadata.namespace).to.equal('grafana');
      expect(d.metadata.annotations).to.deep.equal({ grafana_folder: 'Tenantry' });
    }
  });

  it('the ServiceMonitor selects the gateway and API Services the operator creates, on the ports that serve /metrics, and nothing else', async () => {
    const monitor = only(await render(...twoValues), 'ServiceMonitor');
    const spec = monitor.spec as { selector: Selector; endpoints: Array<{ port: string; path: string }>; namespaceSelector: Record<string, unknown> };
    expect(spec.namespaceSelector).to.deep.equal({ any: true });
    const stack = stackFromObject({ metadata: { name: 'demo', namespace: 'obs', uid: 'u', generation: 1 }, spec: {} });
    for (const service of [gatewayService(stack), apiService(stack)]) {
      expect(selects(spec.selector, service.metadata?.labels ?? {}), service.metadata?.name).to.equal(true);
      const ports = (service.spec?.ports ?? []).map((p) => p.name);
      // The gateway answers /metrics on its OTLP/HTTP port, the API on its HTTP port (src/ops/ops-endpoints.ts).
      expect(
        spec.endpoints.filter((e) => ports.includes(e.port)).map((e) => e.port),
        service.metadata?.name,
      ).to.deep.equal([service.metadata?.name === 'demo-gateway' ? 'otlp-http' : 'http']);
    }
    for (const component of ['clickhouse', 'clickhouse-keeper', 'migrate']) {
      expect(
        selects(spec.selector, {
          'app.kubernetes.io/name': 'tenantry',
          'app.kubernetes.io/managed-by': 'tenantry-operator',
          'app.kubernetes.io/component': component,
        }),
        component,
      ).to.equal(false);
    }
    const scoped = only(await render(...twoValues, '--set', 'operator.watchNamespaces={team-a,team-b}'), 'ServiceMonitor');
    expect(scoped.spec?.['namespaceSelector']).to.deep.equal({ matchNames: ['team-a', 'team-b'] });
  });

  it("the ServiceMonitor sends the stacks' /metrics key from a Secret beside it, only when there is one", async () => {
    type Endpoint = { port: string; authorization?: { type: string; credentials: { name: string; key: string } } };
    const endpoints = (objects: Manifest[]): Endpoint[] => (only(objects, 'ServiceMonitor').spec as { endpoints: Endpoint[] }).endpoints;
    expect(endpoints(await render(...twoValues)).map((e) => e.authorization)).to.deep.equal([undefined, undefined]);

    const created = await render(
      ...twoValues,
      '--set',
      'stack.create=true',
      '--set',
      'stack.metricsKey.create=true',
      '--set',
      'stack.metricsKey.key=k-0123456789abcdef',
    );
    const secret = created.find((o) => o.kind === 'Secret' && o.metadata.name === 'tenantry-metrics-key');
    expect(secret?.stringData).to.deep.equal({ 'metrics-key': 'k-0123456789abcdef' });
    // The stack names the Secret; the key itself is not in the stack object.
    expect(only(created, 'ObservabilityStack').spec?.['metrics']).to.deep.equal({ keySecretRef: { name: 'tenantry-metrics-key', key: 'metrics-key' } });
    const bearer = { type: 'Bearer', credentials: { name: 'tenantry-metrics-key', key: 'metrics-key' } };
    expect(endpoints(created).map((e) => [e.port, e.authorization])).to.deep.equal([
      ['otlp-http', bearer],
      ['http', bearer],
    ]);

    const named = await render(
      ...twoValues,
      '--set',
      'monitoring.serviceMonitors.metricsKeySecret.name=scrape',
      '--set',
      'monitoring.serviceMonitors.metricsKeySecret.key=k',
    );
    expect(endpoints(named).map((e) => e.authorization)).to.deep.equal([1, 2].map(() => ({ type: 'Bearer', credentials: { name: 'scrape', key: 'k' } })));
    expect(
      await helmFails(['template', 'rel', chart, '--set', 'stack.create=true', '--set', 'stack.metricsKey.create=true', '--set', 'stack.metricsKey.key=short']),
    ).to.contain('stack.metricsKey.key must be at least 16 characters');
  });

  it("the PodMonitor selects the operator's pods on their ops port and keeps the stack's namespace label", async () => {
    const objects = await render(...twoValues);
    const spec = only(objects, 'PodMonitor').spec as { selector: Selector; podMetricsEndpoints: Array<{ port: string; honorLabels: boolean }> };
    const deployment = only(objects, 'Deployment') as unknown as {
      spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: Array<{ ports: Array<{ name: string }> }> } } };
    };
    expect(selects(spec.selector, deployment.spec.template.metadata.labels)).to.equal(true);
    expect(deployment.spec.template.spec.containers[0]?.ports.map((p) => p.name)).to.include(spec.podMetricsEndpoints[0]?.port);
    expect(spec.podMetricsEndpoints[0]?.honorLabels).to.equal(true);
  });

  it("rejects bad monitoring values with Helm's schema error", async () => {
    expect(await helmFails(['template', 'rel', chart, '--set', 'monitoring.enable=true'])).to.contain("additional properties 'enable' not allowed");
    expect(await helmFails(['template', 'rel', chart, '--set', 'monitoring.rules.gatewayErrorRatio=5'])).to.contain('/monitoring/rules/gatewayErrorRatio');
    expect(await helmFails(['template', 'rel', chart, '--set', 'monitoring.serviceMonitors.interval=soon'])).to.contain('/monitoring/serviceMonitors/interval');
    expect(await helmFails(['template', 'rel', chart, '--set', 'monitoring.dashboards.extra=1'])).to.contain("additional properties 'extra' not allowed");
  });

  for (const file of ['monitoring-values.yaml', 'production-values.yaml']) {
    it(`passes helm lint --strict with ci/${file}`, async () => {
      expect(await helm(['lint', '--strict', chart, '-f', join(chart, 'ci', file)])).to.contain('1 chart(s) linted, 0 chart(s) failed');
    });
  }

  describe('alert rules', () => {
    let dir: string | undefined;
    let groups: RuleGroup[];
    const work = (): string => {
      if (dir === undefined) throw new Error('no rules folder');
      return dir;
    };
    before(async function () {
      skipUnlessFound(this, helmFound);
      dir = await mkdtemp(join(tmpdir(), 'tenantry-rules-'));
      groups = (only(await render(...twoValues), 'PrometheusRule').spec as { groups: RuleGroup[] }).groups;
      await writeFile(join(dir, 'rules.yaml'), stringify({ groups }));
      await copyFile(join(fixtures, 'alerts-test.yaml'), join(dir, 'alerts-test.yaml'));
    });
    after(async () => {
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    });

    it('alert on what the issue names: gateway 5xx and 429, write queue, ClickHouse inserts, query timeouts, reconcile errors, a stack Degraded for 10 minutes', () => {
      const alerts = new Map(groups.flatMap((g) => g.rules).map((r) => [r.alert ?? '', r]));
      expect([...alerts.keys()]).to.include.members([
        'TenantryGatewayErrors',
        'TenantryGatewayThrottling',
        'TenantryWriteAheadLogFilling',
        'TenantryWriteQueueSaturated',
        'TenantryClickHouseInsertFailures',
        'TenantryQueryTimeouts',
        'TenantryOperatorReconcileErrors',
        'TenantryStackDegraded',
      ]);
      expect(alerts.get('TenantryStackDegraded')?.for).to.equal('10m');
      for (const r of alerts.values()) expect(r.labels?.['severity'], r.alert).to.be.oneOf(['critical', 'warning', 'info']);
    });

    it('name only metrics that a Tenantry component exports', async () => {
      const exported = await exportedSeriesNames(root);
      const named = groups.flatMap((g) => g.rules).flatMap((r) => metricNamesIn(r.expr).map((n) => [r.alert ?? '', n] as const));
      expect(named.length).to.be.greaterThan(12);
      expect(named.filter(([, n]) => !exported.has(n)).map(([a, n]) => `${a}: ${n}`)).to.deep.equal([]);
    });

    it('pass promtool check rules', async function () {
      skipUnlessFound(this, prometheusFound);
      if (!prometheusFound.ok) return;
      const { stdout } = await execFileAsync(prometheusFound.found.promtool, ['check', 'rules', join(work(), 'rules.yaml')]);
      expect(stdout).to.contain(`SUCCESS: ${groups.flatMap((g) => g.rules).length} rules found`);
    });

    it('pass promtool test rules: each alert fires on its input series after its for, and not before or elsewhere', async function () {
      skipUnlessFound(this, prometheusFound);
      if (!prometheusFound.ok) return;
      const run = await execFileAsync(prometheusFound.found.promtool, ['test', 'rules', 'alerts-test.yaml'], { cwd: work() }).catch(
        (e: unknown) => e as { stdout: string; stderr: string },
      );
      expect(`${run.stdout}${run.stderr}`).to.contain('SUCCESS').and.not.contain('FAILED');
    });

    it('promtool test rules fails when an alert misbehaves (the tests can fail)', async function () {
      skipUnlessFound(this, prometheusFound);
      if (!prometheusFound.ok) return;
      const broken = groups.map((g) => ({ ...g, rules: g.rules.map((r) => (r.alert === 'TenantryStackDegraded' ? { ...r, for: '30m' } : r)) }));
      await writeFile(join(work(), 'rules.yaml'), stringify({ groups: broken }));
      try {
        const run = await execFileAsync(prometheusFound.found.promtool, ['test', 'rules', 'alerts-test.yaml'], { cwd: work() }).catch(
          (e: unknown) => e as { stdout: string; stderr: string },
        );
        expect(`${run.stdout}${run.stderr}`).to.contain('FAILED').and.contain('TenantryStackDegraded');
      } finally {
        await writeFile(join(work(), 'rules.yaml'), stringify({ groups }));
      }
    });
  });
});

describe('Helm chart monitoring objects against a real kube-apiserver', function () {
  this.timeout(240_000);
  const binaries = findK8sBinaries();
  let server: KubeTestServer | undefined;

  before(async function () {
    skipUnlessFound(this, helmFound, binaries);
    if (!binaries.ok) return;
    server = await startKubeTestServer(binaries.binaries);
  });
  after(async () => {
    await server?.stop();
  });

  it("are accepted by the API server with prometheus-operator's CRDs (kubectl apply --dry-run=server --validate=strict)", async () => {
    const srv = server as KubeTestServer;
    await srv.kubectl(['apply', '--server-side', '-f', join(chart, 'crds'), '-f', join(fixtures, 'prometheus-operator-crds.yaml')]);
    await srv.kubectl([
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd/servicemonitors.monitoring.coreos.com',
      'crd/podmonitors.monitoring.coreos.com',
      'crd/prometheusrules.monitoring.coreos.com',
    ]);
    for (const ns of ['tenantry', 'grafana']) await srv.kubectl(['create', 'namespace', ns]);
    const variants: string[][] = [
      ['-f', join(chart, 'ci', 'monitoring-values.yaml')],
      // The stack's production options pass the CRD's schema through the chart too.
      ['-f', join(chart, 'ci', 'production-values.yaml')],
      [...twoValues, '--set', 'operator.watchNamespaces={team-a}', '--set', 'monitoring.dashboards.namespace=grafana'],
    ];
    for (const args of variants) {
      const rendered = await helm(['template', 'rel', chart, '--namespace', 'tenantry', ...args]);
      const out = await srv.kubectl(['apply', '--dry-run=server', '--validate=strict', '-f', '-'], rendered);
      if (args.includes(join(chart, 'ci', 'production-values.yaml'))) expect(out).to.contain('observabilitystack.tenantry.dev/prod created (server dry run)');
      expect(out, args.join(' '))
        .to.contain('podmonitor.monitoring.coreos.com/rel-tenantry-operator created (server dry run)')
        .and.contain('servicemonitor.monitoring.coreos.com/rel-tenantry-stacks created (server dry run)')
        .and.contain('prometheusrule.monitoring.coreos.com/rel-tenantry created (server dry run)')
        .and.contain('configmap/rel-tenantry-dashboard-tenants created (server dry run)');
    }
  });

  it('the strict check has teeth: a misspelt monitor field is refused', async () => {
    const srv = server as KubeTestServer;
    const bad = JSON.stringify({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: 'bad', namespace: 'tenantry' },
      spec: { selector: {}, endpoints: [{ prot: 'http' }] },
    });
    const error = await srv.kubectl(['apply', '--dry-run=server', '--validate=strict', '-f', '-'], bad).then(
      () => '',
      (e: unknown) => String((e as { stderr?: unknown }).stderr ?? e),
    );
    expect(error).to.contain('unknown field "spec.endpoints[0].prot"');
  });
});
