// As a new user would: `kubectl apply -f crds/ -f crds/examples/` against the
// test API server with two operator replicas running. One leads (Lease); the
// examples become every object a cluster needs, with a truthful status; when
// the leader stops, the other takes over.
import { expect } from 'chai';
import { k8sBinariesOrSkip } from '../../k8s/k8s-binaries.ts';
import { startKubeTestServer } from '../../k8s/kube-test-server.ts';
import type { KubeTestServer } from '../../k8s/kube-test-server.ts';
import { eventually, getJson, startOperatorProcess } from '../../k8s/operator-under-test.ts';
import type { KubeItem } from '../../k8s/operator-under-test.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const owned = 'secrets,configmaps,services,statefulsets,jobs,deployments,poddisruptionbudgets';

describe('operator with the shipped examples and two replicas', function () {
  this.timeout(120_000);
  let server: KubeTestServer | undefined;
  const operators: TenantryProcess[] = [];
  const srv = (): KubeTestServer => {
    if (server === undefined) throw new Error('no server');
    return server;
  };
  const leaders = (): TenantryProcess[] =>
    operators.filter((p) => {
      const became = p.lines.filter((l) => l['msg'] === 'became leader').length;
      const lost = p.lines.filter((l) => l['msg'] === 'lost leadership').length;
      return became > lost;
    });

  before(async function () {
    const binaries = k8sBinariesOrSkip(this);
    server = await startKubeTestServer(binaries);
    for (let i = 0; i < 2; i++) operators.push((await startOperatorProcess(server)).process);
  });

  after(async () => {
    for (const p of operators) await p.stop();
    await server?.stop();
  });

  it('elects exactly one leader', async () => {
    await Promise.any(operators.map((p) => p.waitForLine((l) => l['msg'] === 'became leader')));
    expect(leaders()).to.have.length(1);
    // Still one after the leader renewed the Lease twice: both replicas run a round every 2 s,
    // so two renewals span at least one full round of the other replica.
    const renewals = new Set<string>();
    await srv().kubectlUntil(['get', 'lease/tenantry-operator', '-n', 'kube-system', '-w', '-o', 'jsonpath={.spec.renewTime}{"\\n"}'], (line) => {
      renewals.add(line);
      return renewals.size >= 3;
    });
    expect(leaders()).to.have.length(1);
  });

  it('turns crds/examples into every object the stacks need, with a truthful status', async () => {
    await srv().kubectl(['apply', '-f', 'crds/', '-f', 'crds/examples/']);
    const kinds = async (stack: string): Promise<string[]> =>
      (await getJson<{ items: KubeItem[] }>(srv(), [owned, '-n', 'default', '-l', `tenantry.dev/stack=${stack}`])).items.map((o) =>
        `${o.kind}/${o.metadata.name}`.replace(/-migrate-[0-9a-f]{10}$/, '-migrate'),
      );
    await eventually(async () => {
      expect(await kinds('prod')).to.have.members([
        'Secret/prod-credentials',
        'ConfigMap/prod-clickhouse-config',
        'Service/prod-clickhouse',
        'Service/prod-clickhouse-headless',
        'StatefulSet/prod-clickhouse-s0',
        'StatefulSet/prod-clickhouse-s1',
        'ConfigMap/prod-clickhouse-keeper-config',
        'Service/prod-clickhouse-keeper',
        'StatefulSet/prod-clickhouse-keeper',
        'Job/prod-migrate',
        'StatefulSet/prod-gateway',
        'Service/prod-gateway',
        'Deployment/prod-api',
        'Service/prod-api',
        'PodDisruptionBudget/prod-gateway',
        'PodDisruptionBudget/prod-api',
        'PodDisruptionBudget/prod-clickhouse-s0',
        'PodDisruptionBudget/prod-clickhouse-s1',
        'PodDisruptionBudget/prod-clickhouse-keeper',
      ]);
      expect(await kinds('shared-ch')).to.have.members([
        'Job/shared-ch-migrate',
        'StatefulSet/shared-ch-gateway',
        'Service/shared-ch-gateway',
        'Deployment/shared-ch-api',
        'Service/shared-ch-api',
        'PodDisruptionBudget/shared-ch-gateway',
        'PodDisruptionBudget/shared-ch-api',
      ]);
      expect(await kinds('demo')).to.include.members(['StatefulSet/demo-clickhouse-s0', 'StatefulSet/demo-gateway', 'Deployment/demo-api', 'Job/demo-migrate']);
    }, 30_000);
    const table = await eventually(async () => {
      const out = await srv().kubectl(['get', 'ostack', '-n', 'default']);
      expect(out).to.match(/prod\s+False\s+WorkloadsNotReady\s+http:\/\/prod-gateway\.default\.svc:4318\s+http:\/\/prod-api\.default\.svc:8080/);
      return out;
    });
    console.log(
      table
        .split('\n')
        .map((l) => `      ${l}`)
        .join('\n'),
    );
    // No pods run here, and the demo API is not reachable from outside a cluster: the declared Tenant says so.
    await eventually(async () => {
      const t = await getJson(srv(), ['tenant/demo-acme', '-n', 'default']);
      const synced = (t.status?.['conditions'] as Array<{ type: string; status: string; reason: string }> | undefined)?.find((c) => c.type === 'Synced');
      expect([synced?.status, synced?.reason]).to.deep.equal(['False', 'ApiUnavailable']);
    });
  });

  it('hands over to the other replica when the leader stops', async () => {
    const [leader] = leaders();
    if (leader === undefined) throw new Error('no leader');
    expect(await leader.stop(), 'graceful exit on SIGTERM').to.equal(0);
    expect(leader.lines.map((l) => l['msg'])).to.include.members(['shutting down', 'lost leadership', 'stopped']);
    await Promise.any(operators.filter((p) => p !== leader).map((p) => p.waitForLine((l) => l['msg'] === 'became leader', 30_000)));
    expect(leaders().filter((p) => p !== leader)).to.have.length(1);
    await srv().kubectl(['patch', 'ostack/demo', '-n', 'default', '--type=merge', '-p', '{"spec":{"api":{"replicas":5}}}']);
    await eventually(async () => {
      expect((await getJson(srv(), ['deployment/demo-api', '-n', 'default'])).spec?.['replicas']).to.equal(5);
    });
  });
});
