// The operator against a real kube-apiserver + etcd (no kubelet, no
// controller manager): children, ownership, edits, drift, pruning, status,
// schema validation and an API server restart.
import { expect } from 'chai';
import { k8sBinariesOrSkip } from '../../k8s/k8s-binaries.ts';
import { startKubeTestServer } from '../../k8s/kube-test-server.ts';
import type { KubeTestServer } from '../../k8s/kube-test-server.ts';
import { createNamespace, eventually, getJson, startOperatorProcess, tryGet } from '../../k8s/operator-under-test.ts';
import type { KubeItem } from '../../k8s/operator-under-test.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const ns = 'obs';
const ownedKinds = 'secrets,configmaps,services,statefulsets,jobs,deployments,poddisruptionbudgets';

function stackYaml(name: string, spec: Record<string, unknown>): string {
  return JSON.stringify({ apiVersion: 'tenantry.dev/v1alpha1', kind: 'ObservabilityStack', metadata: { name, namespace: ns }, spec });
}

async function children(server: KubeTestServer, stack: string): Promise<KubeItem[]> {
  return (await getJson<{ items: KubeItem[] }>(server, [ownedKinds, '-n', ns, '-l', `tenantry.dev/stack=${stack}`])).items;
}

const keyOf = (o: KubeItem): string => `${o.kind}/${o.metadata.name}`;

describe('operator against a real API server', function () {
  this.timeout(120_000);
  let server: KubeTestServer | undefined;
  let operator: { process: TenantryProcess; port: number } | undefined;
  const srv = (): KubeTestServer => {
    if (server === undefined) throw new Error('no server');
    return server;
  };

  before(async function () {
    const binaries = k8sBinariesOrSkip(this);
    server = await startKubeTestServer(binaries);
    console.log(`    kube-apiserver + etcd ready in ${server.startMs} ms`);
    await createNamespace(server, ns);
    await createNamespace(server, 'sentinel');
    operator = await startOperatorProcess(server, { TENANTRY_WATCH_NAMESPACES: `${ns},sentinel` });
  });

  after(async () => {
    const code = await operator?.process.stop();
    const problems = operator?.process.lines.filter((l) => l['level'] === 'warn' || l['level'] === 'error') ?? [];
    if (code !== 0 || process.env['TEST_VERBOSE'] === '1')
      console.log(`operator exited ${String(code)}; warnings:\n${problems.map((l) => JSON.stringify(l)).join('\n')}`);
    await server?.stop();
  });

  it('answers /healthz, /readyz and /metrics on its port and holds the leader Lease', async () => {
    const base = `http://127.0.0.1:${operator?.port ?? 0}`;
    expect((await fetch(`${base}/healthz`)).status).to.equal(200);
    await eventually(async () => {
      expect((await fetch(`${base}/readyz`)).status).to.equal(200);
    });
    const lease = await eventually(() => getJson(srv(), ['lease', 'tenantry-operator', '-n', 'kube-system']));
    expect(lease.spec?.['holderIdentity']).to.be.a('string').and.not.equal('');
    const metrics = await eventually(async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(text).to.contain('tenantry_operator_leader 1');
      return text;
    });
    expect(metrics).to.contain('tenantry_operator_reconciles_total');
  });

  it('ignores stacks outside its watched namespaces', async () => {
    await srv().kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'tenantry.dev/v1alpha1', kind: 'ObservabilityStack', metadata: { name: 'outside', namespace: 'default' }, spec: {} }),
    );
    // The sentinel, created after it in a watched namespace (its own, so the other tests' namespace stays clean):
    // once the operator has reconciled it, the operator has had its chance at 'outside' too.
    await srv().kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'tenantry.dev/v1alpha1',
        kind: 'ObservabilityStack',
        metadata: { name: 'sentinel', namespace: 'sentinel' },
        spec: { tenantSync: { enabled: false } },
      }),
    );
    await srv().kubectlUntil(['get', 'ostack/sentinel', '-n', 'sentinel', '-w', '-o', 'jsonpath={.status.observedGeneration}{"\\n"}'], (line) => line === '1');
    expect((await getJson<{ items: KubeItem[] }>(srv(), [ownedKinds, '-n', 'default', '-l', 'tenantry.dev/stack=outside'])).items).to.deep.equal([]);
    expect((await getJson(srv(), ['ostack', 'outside', '-n', 'default'])).status).to.equal(undefined);
  });

  it('creates every child of a stack with an owner reference and the one field manager', async () => {
    await srv().kubectl(['apply', '-f', '-'], stackYaml('demo', {}));
    const stack = await getJson(srv(), ['ostack', 'demo', '-n', ns]);
    const expected = [
      'Secret/demo-credentials',
      'ConfigMap/demo-clickhouse-config',
      'Service/demo-clickhouse',
      'Service/demo-clickhouse-headless',
      'StatefulSet/demo-clickhouse-s0',
      'StatefulSet/demo-gateway',
      'Service/demo-gateway',
      'Deployment/demo-api',
      'Service/demo-api',
      'PodDisruptionBudget/demo-gateway',
      'PodDisruptionBudget/demo-api',
    ];
    const found = await eventually(async () => {
      const items = await children(srv(), 'demo');
      expect(items.map(keyOf)).to.include.members(expected);
      expect(items.filter((o) => o.kind === 'Job')).to.have.length(1);
      return items;
    });
    for (const o of found) {
      expect(o.metadata.ownerReferences, keyOf(o)).to.deep.equal([
        { apiVersion: 'tenantry.dev/v1alpha1', kind: 'ObservabilityStack', name: 'demo', uid: stack.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      expect(
        o.metadata.managedFields?.filter((f) => f.operation === 'Apply').map((f) => f.manager),
        keyOf(o),
      ).to.deep.equal(['tenantry-operator']);
    }
  });

  it('writes truthful status, and conditions move as the workloads become ready', async () => {
    const status = await eventually(async () => {
      const s = (await getJson(srv(), ['ostack', 'demo', '-n', ns])).status as {
        observedGeneration: number;
        conditions: Array<{ type: string; status: string; reason: string }>;
        endpoints: Record<string, string>;
      };
      expect(s.observedGeneration).to.equal(1);
      return s;
    });
    expect(status.endpoints).to.deep.equal({
      otlpHttp: 'http://demo-gateway.obs.svc:4318',
      otlpGrpc: 'demo-gateway.obs.svc:4317',
      api: 'http://demo-api.obs.svc:8080',
    });
    expect(status.conditions.map((c) => [c.type, c.status, c.reason])).to.deep.equal([
      ['Ready', 'False', 'WorkloadsNotReady'],
      ['Progressing', 'True', 'RollingOut'],
      ['Degraded', 'False', 'AsExpected'],
    ]);

    // No kubelet here: play the controllers' part by writing the workloads' status.
    for (const kind of ['statefulset/demo-gateway', 'deployment/demo-api', 'statefulset/demo-clickhouse-s0']) {
      const o = await getJson(srv(), [kind, '-n', ns]);
      const n = (o.spec?.['replicas'] as number | undefined) ?? 1;
      await srv().kubectl([
        'patch',
        kind,
        '-n',
        ns,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({
          status: { observedGeneration: o.metadata.generation, replicas: n, readyReplicas: n, updatedReplicas: n, availableReplicas: n, currentReplicas: n },
        }),
      ]);
    }
    const pending = await eventually(async () => {
      const s = (await getJson(srv(), ['ostack', 'demo', '-n', ns])).status as { conditions: Array<{ type: string; reason: string }> };
      expect(s.conditions.find((c) => c.type === 'Ready')?.reason).to.equal('MigrationPending');
      return s;
    });
    expect(pending.conditions.find((c) => c.type === 'Progressing')?.reason).to.equal('MigrationRunning');
    const job = (await children(srv(), 'demo')).find((o) => o.kind === 'Job');
    const start = new Date(Date.now() - 5000).toISOString().replace(/\.\d+Z$/, 'Z');
    const end = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await srv().kubectl([
      'patch',
      `job/${job?.metadata.name ?? ''}`,
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          startTime: start,
          completionTime: end,
          succeeded: 1,
          conditions: [
            { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: end, lastProbeTime: end },
            { type: 'Complete', status: 'True', lastTransitionTime: end, lastProbeTime: end },
          ],
        },
      }),
    ]);
    await eventually(async () => {
      const s = (await getJson(srv(), ['ostack', 'demo', '-n', ns])).status as { conditions: Array<{ type: string; status: string; reason: string }> };
      expect(s.conditions.map((c) => [c.type, c.status, c.reason])).to.deep.equal([
        ['Ready', 'True', 'AllComponentsReady'],
        ['Progressing', 'False', 'Complete'],
        ['Degraded', 'False', 'AsExpected'],
      ]);
    });
    const events = await srv().kubectl(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=demo', '-o', 'jsonpath={.items[*].reason}']);
    expect(events.split(' ')).to.include.members(['Created', 'WorkloadsNotReady', 'AllComponentsReady']);
  });

  it('corrects drift: a deleted child is recreated, a changed field is put back', async () => {
    const before = await getJson(srv(), ['deployment/demo-api', '-n', ns]);
    await srv().kubectl(['delete', 'deployment/demo-api', '-n', ns, '--wait=false']);
    await eventually(async () => {
      const again = await getJson(srv(), ['deployment/demo-api', '-n', ns]);
      expect(again.metadata.uid).not.to.equal(before.metadata.uid);
    });
    await srv().kubectl(['scale', 'statefulset/demo-gateway', '-n', ns, '--replicas=7']);
    await srv().kubectl(['patch', 'service/demo-gateway', '-n', ns, '--type=merge', '-p', '{"spec":{"type":"NodePort"}}']);
    await eventually(async () => {
      expect((await getJson(srv(), ['statefulset/demo-gateway', '-n', ns])).spec?.['replicas']).to.equal(2);
      expect((await getJson(srv(), ['service/demo-gateway', '-n', ns])).spec?.['type']).to.equal('ClusterIP');
    });
  });

  it('applies edits: replicas, image, retention (a new migrate Job, the old one pruned), then managed → external', async () => {
    const oldJob = (await children(srv(), 'demo')).find((o) => o.kind === 'Job')?.metadata.name;
    await srv().kubectl([
      'patch',
      'ostack/demo',
      '-n',
      ns,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { image: 'example.org/tenantry:9.9.9', gateway: { replicas: 4 }, retention: { logsDays: 3 } } }),
    ]);
    await eventually(async () => {
      const d = await getJson(srv(), ['statefulset/demo-gateway', '-n', ns]);
      expect(d.spec?.['replicas']).to.equal(4);
      expect(JSON.stringify(d.spec)).to.contain('example.org/tenantry:9.9.9');
      const jobs = (await children(srv(), 'demo')).filter((o) => o.kind === 'Job').map((o) => o.metadata.name);
      expect(jobs).to.have.length(1);
      expect(jobs[0]).not.to.equal(oldJob);
      expect(JSON.stringify(await getJson(srv(), [`job/${jobs[0] ?? ''}`, '-n', ns]).then((j) => j.spec))).to.contain(
        '"TENANTRY_LOGS_RETENTION_DAYS","value":"3"',
      );
    });
    await srv().kubectl(['create', 'secret', 'generic', 'ch', '-n', ns, '--from-literal=username=u', '--from-literal=password=p']);
    await srv()
      .kubectl([
        'patch',
        'ostack/demo',
        '-n',
        ns,
        '--type=json',
        '-p',
        JSON.stringify([
          { op: 'remove', path: '/spec/clickhouse/managed' },
          { op: 'replace', path: '/spec/clickhouse/mode', value: 'external' },
          { op: 'add', path: '/spec/clickhouse/external', value: { url: 'https://ch.example:8443', secretRef: { name: 'ch' } } },
        ]),
      ])
      .catch(async () => {
        // managed may be absent (defaults are not written for it): then only switch the mode.
        await srv().kubectl([
          'patch',
          'ostack/demo',
          '-n',
          ns,
          '--type=merge',
          '-p',
          JSON.stringify({ spec: { clickhouse: { mode: 'external', external: { url: 'https://ch.example:8443', secretRef: { name: 'ch' } } } } }),
        ]);
      });
    await eventually(async () => {
      const keys = (await children(srv(), 'demo')).map(keyOf);
      expect(keys.filter((k) => k.includes('clickhouse'))).to.deep.equal([]);
      const d = await getJson(srv(), ['deployment/demo-api', '-n', ns]);
      expect(JSON.stringify(d.spec)).to.contain('https://ch.example:8443');
      const secret = await getJson(srv(), ['secret/demo-credentials', '-n', ns]);
      expect(Object.keys(secret.data ?? {}).sort()).to.deep.equal(['admin-key', 'api-keys.json']);
    });
  });

  it('rejects invalid stacks and tenants through the CRD schema with a clear message', async () => {
    const reject = async (doc: string, message: string): Promise<void> => {
      let failure = '';
      try {
        await srv().kubectl(['apply', '-f', '-'], doc);
      } catch (error) {
        failure = (error as Error).message;
      }
      expect(failure).to.contain(message);
    };
    await reject(
      stackYaml('bad1', { gateway: { replicas: -1 } }),
      'spec.gateway.replicas: Invalid value: -1: spec.gateway.replicas in body should be greater than or equal to 0',
    );
    await reject(
      stackYaml('bad2', { clickhouse: { mode: 'external' } }),
      'clickhouse.external (url and secretRef) is required when clickhouse.mode is external',
    );
    await reject(stackYaml('bad3', { gateway: { ports: { otlpHttp: 4317 } } }), 'gateway.ports.otlpHttp and gateway.ports.otlpGrpc must differ');
    await reject(stackYaml('a-name-that-is-far-too-long-for-a-stack', {}), 'metadata.name must be at most 30 characters');
    await reject(stackYaml('bad4', { clickhouse: { managed: { shards: 0 } } }), 'spec.clickhouse.managed.shards: Invalid value: 0');
    await reject(stackYaml('bad5', { gateway: { serviceType: 'Ingress' } }), 'spec.gateway.serviceType: Unsupported value: "Ingress"');
    const tenant = (id: string): string =>
      JSON.stringify({
        apiVersion: 'tenantry.dev/v1alpha1',
        kind: 'Tenant',
        metadata: { name: 't1', namespace: ns },
        spec: { stackRef: { name: 'demo' }, tenantId: id },
      });
    await reject(tenant('has space'), 'spec.tenantId in body should match');
    await reject(tenant('..'), 'spec.tenantId must not be "." or ".."');
  });

  it('leaves nothing unowned: every object it made carries the stack as controller owner (no GC runs here)', async () => {
    const stack = await getJson(srv(), ['ostack', 'demo', '-n', ns]);
    const all = (await getJson<{ items: KubeItem[] }>(srv(), [`${ownedKinds},tenants`, '-n', ns])).items;
    const made = all.filter((o) => o.metadata.managedFields?.some((f) => f.manager === 'tenantry-operator' && f.operation === 'Apply') === true);
    expect(made.length).to.be.greaterThan(5);
    const unowned = made.filter((o) => o.metadata.ownerReferences?.some((r) => r.uid === stack.metadata.uid && r.controller === true) !== true);
    expect(unowned.map(keyOf)).to.deep.equal([]);
    await srv().kubectl(['delete', 'ostack/demo', '-n', ns]);
    // kube-apiserver alone has no garbage collector: what remains is exactly what a cluster's GC deletes via owner references.
    const remaining = (await children(srv(), 'demo')).map(keyOf);
    console.log(`      remaining after stack deletion (all owned, collected by the GC in a cluster): ${remaining.join(', ')}`);
    expect(remaining.sort()).to.deep.equal(made.map(keyOf).sort());
  });

  it('survives an API server restart mid-watch and catches up', async () => {
    await srv().restartApiServer(1500);
    await srv().kubectl(['apply', '-f', '-'], stackYaml('after', { api: { replicas: 1 } }));
    await eventually(async () => {
      expect((await children(srv(), 'after')).map(keyOf)).to.include.members([
        'Deployment/after-api',
        'StatefulSet/after-gateway',
        'StatefulSet/after-clickhouse-s0',
      ]);
    }, 60_000);
    const metrics = await (await fetch(`http://127.0.0.1:${operator?.port ?? 0}/metrics`)).text();
    expect(metrics).to.match(/tenantry_operator_watch_restarts_total\{kind="ObservabilityStack",reason="(error|closed)"\} [1-9]/);
    expect(await tryGet(srv(), ['deployment/outside-api', '-n', 'default'])).to.equal(undefined);
  });
});
