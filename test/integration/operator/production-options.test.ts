// The operator's production options against a real kube-apiserver, run as a
// user holding only the tested RBAC rules (test/fixtures/k8s/operator-rbac.yaml):
// HorizontalPodAutoscalers and NetworkPolicies are created (and validated by
// the API server), pruned when disabled, the replica count is handed to the
// HPA without a reset, and no call is refused.
import { expect } from 'chai';
import { k8sBinariesOrSkip } from '../../k8s/k8s-binaries.ts';
import { startKubeTestServer } from '../../k8s/kube-test-server.ts';
import type { KubeTestServer } from '../../k8s/kube-test-server.ts';
import { createNamespace, eventually, getJson, startOperatorProcess } from '../../k8s/operator-under-test.ts';
import type { KubeItem } from '../../k8s/operator-under-test.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const ns = 'prod';

describe('operator production options against a real API server (least privilege)', function () {
  this.timeout(120_000);
  let server: KubeTestServer | undefined;
  let operator: TenantryProcess | undefined;
  let operatorPort = 0;
  const srv = (): KubeTestServer => {
    if (server === undefined) throw new Error('no server');
    return server;
  };
  const names = async (kind: string): Promise<string[]> =>
    (await getJson<{ items: KubeItem[] }>(srv(), [kind, '-n', ns, '-l', 'tenantry.dev/stack=web'])).items.map((o) => o.metadata.name).sort();
  const apply = async (spec: Record<string, unknown>): Promise<void> => {
    await srv().kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'tenantry.dev/v1alpha1', kind: 'ObservabilityStack', metadata: { name: 'web', namespace: ns }, spec }),
    );
  };
  /** Waits for the operator to have reconciled the stack's current generation (a watch on the status, no timer). */
  const reconciled = async (): Promise<void> => {
    const generation = (await getJson(srv(), ['ostack', 'web', '-n', ns])).metadata.generation ?? 0;
    await srv().kubectlUntil(
      ['get', 'ostack/web', '-n', ns, '-w', '-o', 'jsonpath={.status.observedGeneration}{"\\n"}'],
      (line) => line === String(generation),
    );
  };

  before(async function () {
    const binaries = k8sBinariesOrSkip(this);
    server = await startKubeTestServer(binaries, { users: ['tenantry-operator'] });
    await server.kubectl(['apply', '-f', 'test/fixtures/k8s/operator-rbac.yaml']);
    await createNamespace(server, ns);
    const started = await startOperatorProcess(server, { TENANTRY_KUBECONFIG: server.kubeconfigFor('tenantry-operator'), TENANTRY_WATCH_NAMESPACES: ns });
    operator = started.process;
    operatorPort = started.port;
    // The operator starts its workers once every watch has listed; a fresh API server may answer the first
    // lists 429 ("storage is (re)initializing") and the watches back off. A sentinel stack reconciled
    // (a watching kubectl sees its status) means the operator is running before the tests time anything.
    await server.kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'tenantry.dev/v1alpha1',
        kind: 'ObservabilityStack',
        metadata: { name: 'sentinel', namespace: ns },
        spec: { tenantSync: { enabled: false } },
      }),
    );
    await server.kubectlUntil(['get', 'ostack/sentinel', '-n', ns, '-w', '-o', 'jsonpath={.status.observedGeneration}{"\\n"}'], (line) => line === '1', 90_000);
  });

  after(async () => {
    await operator?.stop();
    await server?.stop();
  });

  it('the tested role grants exactly the HPA and NetworkPolicy verbs the operator uses, and no update', async () => {
    const can = async (args: string[]): Promise<string> =>
      (
        await srv()
          .kubectl(['auth', 'can-i', ...args, '--as', 'tenantry-operator'])
          .catch((e: unknown) => (e as { stdout?: string }).stdout ?? (e as Error).message)
      ).trim();
    for (const verb of ['get', 'list', 'watch', 'create', 'patch', 'delete']) {
      expect(await can([verb, 'horizontalpodautoscalers.autoscaling', '-n', ns]), `${verb} hpa`).to.equal('yes');
      expect(await can([verb, 'networkpolicies.networking.k8s.io', '-n', ns]), `${verb} networkpolicy`).to.equal('yes');
    }
    expect(await can(['update', 'horizontalpodautoscalers.autoscaling', '-n', ns])).to.equal('no');
    expect(await can(['update', 'networkpolicies.networking.k8s.io', '-n', ns])).to.equal('no');
  });

  it('creates HPAs and NetworkPolicies when enabled and removes them when disabled', async () => {
    await apply({ tenantSync: { enabled: false }, gateway: { replicas: 3 } });
    await reconciled();
    expect(await names('hpa')).to.deep.equal([]);
    expect(await names('networkpolicy')).to.deep.equal([]);
    const gateway = await getJson(srv(), ['statefulset', 'web-gateway', '-n', ns]);
    expect(gateway.spec?.['replicas']).to.equal(3);
    // The API server keeps the spread constraints as sent (matchLabelKeys included).
    const constraints = (gateway.spec?.['template'] as { spec: { topologySpreadConstraints: Array<Record<string, unknown>> } }).spec.topologySpreadConstraints;
    expect(constraints.map((c) => [c['topologyKey'], c['whenUnsatisfiable'], c['matchLabelKeys']])).to.deep.equal([
      ['topology.kubernetes.io/zone', 'ScheduleAnyway', ['controller-revision-hash']],
      ['kubernetes.io/hostname', 'ScheduleAnyway', ['controller-revision-hash']],
    ]);

    await apply({
      tenantSync: { enabled: false },
      gateway: { replicas: 3, autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 6 } },
      api: { autoscaling: { enabled: true } },
      networkPolicy: { enabled: true },
    });
    await reconciled();
    expect(await names('hpa')).to.deep.equal(['web-api', 'web-gateway']);
    expect(await names('networkpolicy')).to.deep.equal(['web-api', 'web-clickhouse', 'web-gateway', 'web-migrate']);
    const hpa = await getJson(srv(), ['hpa', 'web-gateway', '-n', ns]);
    expect(hpa.spec).to.deep.include({ minReplicas: 2, maxReplicas: 6, scaleTargetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web-gateway' } });
    const policy = await getJson(srv(), ['networkpolicy', 'web-clickhouse', '-n', ns]);
    expect(policy.spec?.['ingress']).to.deep.equal([
      { from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/managed-by': 'tenantry-operator', 'tenantry.dev/stack': 'web' } } }] },
    ]);

    await apply({ tenantSync: { enabled: false }, gateway: { replicas: 3 } });
    await reconciled();
    // Pruning deletes in the background; the objects have no finalizers, so they are gone once the reconcile ends.
    await eventually(async () => {
      expect(await names('hpa')).to.deep.equal([]);
    });
    await eventually(async () => {
      expect(await names('networkpolicy')).to.deep.equal([]);
    });
    expect((await getJson(srv(), ['statefulset', 'web-gateway', '-n', ns])).spec?.['replicas']).to.equal(3);
  });

  it("hands the replica count to the HPA: enabling autoscaling does not reset it, and the HPA's scaling is not undone", async () => {
    await apply({ tenantSync: { enabled: false }, gateway: { replicas: 4 } });
    await reconciled();
    expect((await getJson(srv(), ['statefulset', 'web-gateway', '-n', ns])).spec?.['replicas']).to.equal(4);
    await apply({ tenantSync: { enabled: false }, gateway: { replicas: 4, autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 8 } } });
    await reconciled();
    expect((await getJson(srv(), ['statefulset', 'web-gateway', '-n', ns])).spec?.['replicas'], 'no reset to 1 while the HPA takes over').to.equal(4);
    // The HPA controller scales through the scale subresource (no controller manager runs here, so do what it does).
    await srv().kubectl(['scale', 'statefulset/web-gateway', '-n', ns, '--replicas=7']);
    // A spec change makes the operator apply the StatefulSet again.
    await apply({
      tenantSync: { enabled: false },
      gateway: { replicas: 4, autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 8 } },
      retention: { logsDays: 9 },
    });
    await reconciled();
    expect((await getJson(srv(), ['statefulset', 'web-gateway', '-n', ns])).spec?.['replicas'], "the HPA's count stands").to.equal(7);
  });

  it("exports each stack's Degraded condition for the alert: 0 for a healthy stack, 1 for one whose Secret is missing", async () => {
    await srv().kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'tenantry.dev/v1alpha1',
        kind: 'ObservabilityStack',
        metadata: { name: 'broken', namespace: ns },
        spec: { tenantSync: { enabled: false }, apiKeys: { secretName: 'missing' } },
      }),
    );
    await srv().kubectlUntil(
      ['get', 'ostack/broken', '-n', ns, '-w', '-o', 'jsonpath={.status.conditions[?(@.type=="Degraded")].status}{"\\n"}'],
      (line) => line === 'True',
    );
    // The gauge reads the watch cache, which the status write's event reaches a moment after the API server has it.
    const text = await eventually(async () => {
      const t = await (await fetch(`http://127.0.0.1:${operatorPort}/metrics`)).text();
      expect(t).to.contain(`tenantry_operator_stack_condition{namespace="${ns}",stack="broken",condition="Degraded"} 1`);
      return t;
    });
    expect(text).to.contain(`tenantry_operator_stack_condition{namespace="${ns}",stack="web",condition="Degraded"} 0`);
  });

  it('passes the /metrics settings: tenant labels to the gateways, the key from the named Secret to gateways and API, never as a value', async () => {
    type EnvView = Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }>;
    const envOf = async (kind: string, name: string): Promise<EnvView> =>
      ((await getJson(srv(), [kind, name, '-n', ns])).spec?.['template'] as { spec: { containers: Array<{ env: EnvView }> } }).spec.containers[0]?.env ?? [];
    const metricsEnv = (env: EnvView): EnvView => env.filter((e) => e.name.startsWith('TENANTRY_METRICS_') && !e.name.endsWith('_RETENTION_DAYS'));
    const checksumOf = async (): Promise<unknown> =>
      ((await getJson(srv(), ['statefulset', 'web-gateway', '-n', ns])).spec?.['template'] as { metadata: { annotations: Record<string, string> } }).metadata
        .annotations['tenantry.dev/config-checksum'];

    await apply({ tenantSync: { enabled: false }, gateway: { replicas: 3 } });
    await reconciled();
    // Off by default: no tenant id on /metrics, and no key (in-cluster scraping as before).
    expect(metricsEnv(await envOf('statefulset', 'web-gateway'))).to.deep.equal([]);
    expect(metricsEnv(await envOf('deployment', 'web-api'))).to.deep.equal([]);

    await srv().kubectl(['create', 'secret', 'generic', 'scrape', '-n', ns, '--from-literal=metrics-key=scrape-key-0123456789']);
    await apply({ tenantSync: { enabled: false }, gateway: { replicas: 3 }, metrics: { tenantLabels: true, keySecretRef: { name: 'scrape' } } });
    await reconciled();
    const stored = (await getJson(srv(), ['ostack', 'web', '-n', ns])).spec?.['metrics'];
    expect(stored, 'the API server fills the key name').to.deep.equal({ tenantLabels: true, keySecretRef: { name: 'scrape', key: 'metrics-key' } });
    const keyRef = { name: 'TENANTRY_METRICS_KEY', valueFrom: { secretKeyRef: { name: 'scrape', key: 'metrics-key' } } };
    expect(metricsEnv(await envOf('statefulset', 'web-gateway'))).to.deep.equal([{ name: 'TENANTRY_METRICS_TENANT_LABELS', value: 'on' }, keyRef]);
    expect(metricsEnv(await envOf('deployment', 'web-api'))).to.deep.equal([keyRef]);

    // A new key in the Secret rolls the pods (env from a Secret is read only at a container's start).
    const before = await checksumOf();
    await srv()
      .kubectl(['create', 'secret', 'generic', 'scrape', '-n', ns, '--from-literal=metrics-key=rotated-key-0123456789', '--dry-run=client', '-o', 'json'])
      .then((json) => srv().kubectl(['apply', '-f', '-'], json));
    await eventually(async () => {
      expect(await checksumOf()).not.to.equal(before);
    });

    // The key itself has no place in the spec: the schema knows no such field.
    const plain = await srv()
      .kubectl(
        ['apply', '--dry-run=server', '-f', '-'],
        JSON.stringify({
          apiVersion: 'tenantry.dev/v1alpha1',
          kind: 'ObservabilityStack',
          metadata: { name: 'web', namespace: ns },
          spec: { metrics: { key: 'plain-key-0123456789' } },
        }),
      )
      .then(
        () => '',
        (e: unknown) => String((e as { stderr?: unknown }).stderr ?? e),
      );
    expect(plain).to.contain('unknown field "spec.metrics.key"');
    await apply({ tenantSync: { enabled: false }, gateway: { replicas: 3 } });
    await reconciled();
  });

  it('the CRD refuses bad production options with a sentence', async () => {
    const refused = async (spec: Record<string, unknown>): Promise<string> =>
      srv()
        .kubectl(
          ['apply', '--dry-run=server', '-f', '-'],
          JSON.stringify({ apiVersion: 'tenantry.dev/v1alpha1', kind: 'ObservabilityStack', metadata: { name: 'bad', namespace: ns }, spec }),
        )
        .then(
          () => '',
          (e: unknown) => String((e as { stderr?: unknown }).stderr ?? e),
        );
    expect(await refused({ gateway: { autoscaling: { enabled: true, minReplicas: 5, maxReplicas: 2 } } })).to.contain(
      'autoscaling.minReplicas must not exceed autoscaling.maxReplicas',
    );
    expect(await refused({ topologySpread: { zone: 'Sometimes' } })).to.contain('spec.topologySpread.zone: Unsupported value: "Sometimes"');
    expect(await refused({ api: { autoscaling: { targetCPUUtilizationPercentage: 0 } } })).to.contain('spec.api.autoscaling.targetCPUUtilizationPercentage');
  });

  it('was never refused a call', () => {
    // By field, not by text: a timestamp or a retry delay may contain "403".
    const forbidden = (operator?.lines ?? []).filter((l) => l['status'] === 403 || /forbidden/i.test(JSON.stringify([l['msg'], l['error']])));
    expect(forbidden).to.deep.equal([]);
  });
});
