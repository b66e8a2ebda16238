// Day two of a managed ClickHouse cluster against a real kube-apiserver +
// etcd (issue 14; no kubelet: the test writes the workloads' and Jobs'
// status as their controllers would): a count change 2x2 → 3x2 adds the new
// shard's StatefulSet and budget and starts a new migrate Job (named by the
// topology), the stack stays Progressing until that Job is done; a failed
// migrate Job is deleted and created again; the CRD refuses 1x1 → cluster,
// fewer shards and a Keeper count change with a message saying how to migrate.
import { expect } from 'chai';
import { k8sBinariesOrSkip } from '../../k8s/k8s-binaries.ts';
import { startKubeTestServer } from '../../k8s/kube-test-server.ts';
import type { KubeTestServer } from '../../k8s/kube-test-server.ts';
import { createNamespace, eventually, getJson, startOperatorProcess } from '../../k8s/operator-under-test.ts';
import type { KubeItem } from '../../k8s/operator-under-test.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const ns = 'day2';
const kinds = 'statefulsets,jobs,deployments,poddisruptionbudgets,configmaps';

function stackDoc(name: string, managed: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'tenantry.dev/v1alpha1',
    kind: 'ObservabilityStack',
    metadata: { name, namespace: ns },
    spec: { clickhouse: { managed } },
  });
}

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

describe('operator: managed ClickHouse cluster changes against a real API server', function () {
  this.timeout(180_000);
  let server: KubeTestServer | undefined;
  let operator: { process: TenantryProcess; port: number } | undefined;
  const srv = (): KubeTestServer => {
    if (server === undefined) throw new Error('no server');
    return server;
  };
  const children = async (stack: string): Promise<KubeItem[]> =>
    (await getJson<{ items: KubeItem[] }>(srv(), [kinds, '-n', ns, '-l', `tenantry.dev/stack=${stack}`])).items;
  const conditions = async (stack: string): Promise<Condition[]> =>
    ((await getJson(srv(), ['ostack', stack, '-n', ns])).status as { conditions?: Condition[] } | undefined)?.conditions ?? [];
  const condition = async (stack: string, type: string): Promise<Condition | undefined> => (await conditions(stack)).find((c) => c.type === type);
  const jobs = async (stack: string): Promise<KubeItem[]> => (await children(stack)).filter((o) => o.kind === 'Job');

  /** Plays the workload controllers: every Deployment and StatefulSet of the stack ready at its spec. */
  const workloadsReady = async (stack: string): Promise<void> => {
    for (const o of (await children(stack)).filter((c) => c.kind === 'Deployment' || c.kind === 'StatefulSet')) {
      const n = (o.spec?.['replicas'] as number | undefined) ?? 1;
      await srv().kubectl([
        'patch',
        `${o.kind.toLowerCase()}/${o.metadata.name}`,
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
  };
  const at = (msAgo: number): string => new Date(Date.now() - msAgo).toISOString().replace(/\.\d+Z$/, 'Z');
  /** Plays the Job controller: the Job finished, successfully or not, `msAgo` ago. */
  const jobDone = async (name: string, outcome: 'Complete' | 'Failed', msAgo = 0): Promise<void> => {
    const end = at(msAgo);
    const status =
      outcome === 'Complete'
        ? {
            startTime: at(msAgo + 5000),
            completionTime: end,
            succeeded: 1,
            conditions: [
              { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: end, lastProbeTime: end },
              { type: 'Complete', status: 'True', lastTransitionTime: end, lastProbeTime: end },
            ],
          }
        : {
            startTime: at(msAgo + 5000),
            failed: 1,
            conditions: [
              {
                type: 'FailureTarget',
                status: 'True',
                reason: 'BackoffLimitExceeded',
                message: 'Job has reached the specified backoff limit',
                lastTransitionTime: end,
                lastProbeTime: end,
              },
              {
                type: 'Failed',
                status: 'True',
                reason: 'BackoffLimitExceeded',
                message: 'Job has reached the specified backoff limit',
                lastTransitionTime: end,
                lastProbeTime: end,
              },
            ],
          };
    await srv().kubectl(['patch', `job/${name}`, '-n', ns, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
  };

  before(async function () {
    const binaries = k8sBinariesOrSkip(this);
    server = await startKubeTestServer(binaries);
    await createNamespace(server, ns);
    operator = await startOperatorProcess(server, { TENANTRY_WATCH_NAMESPACES: ns });
  });

  after(async () => {
    const code = await operator?.process.stop();
    if (code !== 0 || process.env['TEST_VERBOSE'] === '1') {
      const problems = operator?.process.lines.filter((l) => l['level'] === 'warn' || l['level'] === 'error') ?? [];
      console.log(`operator exited ${String(code)}; warnings:\n${problems.map((l) => JSON.stringify(l)).join('\n')}`);
    }
    await server?.stop();
  });

  it('2x2 → 3x2: a third shard StatefulSet and budget, a new migrate Job, Progressing until that Job is done', async () => {
    await srv().kubectl(['apply', '-f', '-'], stackDoc('c', { shards: 2, replicas: 2 }));
    const first = await eventually(async () => {
      const j = await jobs('c');
      expect(j).to.have.length(1);
      return j[0]?.metadata.name ?? '';
    });
    await workloadsReady('c');
    await jobDone(first, 'Complete');
    await eventually(async () => {
      expect(await condition('c', 'Ready')).to.include({ status: 'True', reason: 'AllComponentsReady' });
    });

    await srv().kubectl(['patch', 'ostack/c', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { clickhouse: { managed: { shards: 3 } } } })]);
    const second = await eventually(async () => {
      const keys = (await children('c')).map((o) => `${o.kind}/${o.metadata.name}`);
      expect(keys).to.include.members(['StatefulSet/c-clickhouse-s2', 'PodDisruptionBudget/c-clickhouse-s2']);
      const j = await jobs('c');
      expect(
        j.map((o) => o.metadata.name),
        'the old Job pruned, a new one for the new topology',
      ).to.have.length(1);
      expect(j[0]?.metadata.name).not.to.equal(first);
      return j[0]?.metadata.name ?? '';
    });
    const config = await getJson(srv(), ['configmap/c-clickhouse-config', '-n', ns]);
    expect(JSON.stringify(config.data)).to.contain('c-clickhouse-s2-1.c-clickhouse-headless.day2.svc');

    await workloadsReady('c');
    const progressing = await eventually(async () => {
      const p = await condition('c', 'Progressing');
      expect(p).to.include({ status: 'True', reason: 'MigrationRunning' });
      return p;
    });
    expect(progressing?.message).to.contain(`Job ${second} running`);
    expect(await condition('c', 'Ready')).to.include({ status: 'False', reason: 'MigrationPending' });

    await jobDone(second, 'Complete');
    await eventually(async () => {
      expect(await condition('c', 'Progressing')).to.include({ status: 'False', reason: 'Complete' });
      expect(await condition('c', 'Ready')).to.include({ status: 'True' });
    });
  });

  it('a failed migrate Job is deleted after the pause and created again under the same name', async () => {
    await srv().kubectl(['patch', 'ostack/c', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { retention: { logsDays: 5 } } })]);
    const job = await eventually(async () => {
      const j = await jobs('c');
      expect(j).to.have.length(1);
      expect(JSON.stringify(j[0]?.spec)).to.contain('"TENANTRY_LOGS_RETENTION_DAYS","value":"5"');
      return j[0];
    });
    // Failed two minutes ago: past the operator's pause before a retry.
    await jobDone(job?.metadata.name ?? '', 'Failed', 120_000);
    await eventually(async () => {
      const again = await jobs('c');
      expect(again.map((o) => o.metadata.name)).to.deep.equal([job?.metadata.name]);
      expect(again[0]?.metadata.uid).not.to.equal(job?.metadata.uid);
    }, 30_000);
    const events = await srv().kubectl(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=c', '-o', 'jsonpath={.items[*].reason}']);
    expect(events.split(' ')).to.include('MigrationRetried');
  });

  it('refuses 1x1 → cluster, cluster → 1x1, fewer shards and another Keeper count, with how to migrate; allows fewer replicas', async () => {
    const refused = async (doc: string): Promise<string> => {
      try {
        await srv().kubectl(['apply', '-f', '-'], doc);
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    };
    await srv().kubectl(['apply', '-f', '-'], stackDoc('single', { shards: 1, replicas: 1 }));
    expect(await refused(stackDoc('single', { shards: 2, replicas: 2 })))
      .to.contain('cannot change between one server (shards 1, replicas 1) and a cluster')
      .and.to.contain('Create a new stack with the cluster layout and copy the data');
    expect(await refused(stackDoc('c', { shards: 1, replicas: 1 }))).to.contain('cannot change between one server');
    expect(await refused(stackDoc('c', { shards: 2, replicas: 2 }))).to.contain('clickhouse.managed.shards cannot be reduced');
    expect(await refused(stackDoc('c', { shards: 3, replicas: 2, keeper: { replicas: 5 } }))).to.contain(
      'clickhouse.managed.keeper.replicas cannot change in place',
    );
    expect(await refused(stackDoc('c', { shards: 3, replicas: 1 }))).to.equal('');
  });
});
