// The gateways' write-ahead-log volumes against a real kube-apiserver + etcd
// (docs/adr/0007-gateway-wal-volumes.md): the StatefulSet with its claim
// template (size and class from the spec), the emptyDir when chosen, the old
// gateway Deployment removed on upgrade once the StatefulSet is ready, and the
// drain decision after a scale-down, all as a user holding only the
// documented RBAC rules. No controller manager runs here: the
// test plays the StatefulSet controller (it creates the claims and pods) and
// the Job controller (it marks a Job succeeded).
import { expect } from 'chai';
import { k8sBinariesOrSkip } from '../../k8s/k8s-binaries.ts';
import { startKubeTestServer } from '../../k8s/kube-test-server.ts';
import type { KubeTestServer } from '../../k8s/kube-test-server.ts';
import { createNamespace, eventually, getJson, startOperatorProcess, tryGet } from '../../k8s/operator-under-test.ts';
import type { KubeItem } from '../../k8s/operator-under-test.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const ns = 'wal';

interface PodSpecView {
  volumes?: Array<{ name: string; emptyDir?: { sizeLimit?: string }; persistentVolumeClaim?: { claimName: string } }>;
  containers: Array<{
    command?: string[];
    args?: string[];
    volumeMounts?: Array<{ name: string; mountPath: string }>;
    readinessProbe?: { grpc?: { port: number; service?: string } };
    livenessProbe?: { httpGet?: { path: string } };
    lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  }>;
  terminationGracePeriodSeconds?: number;
}
interface StatefulSetSpecView {
  replicas?: number;
  volumeClaimTemplates?: Array<{
    metadata: { name: string; labels?: Record<string, string> };
    spec: { storageClassName?: string; accessModes: string[]; resources: { requests: { storage: string } } };
  }>;
  persistentVolumeClaimRetentionPolicy?: { whenScaled: string; whenDeleted: string };
  template: { spec: PodSpecView };
}

function stackDoc(name: string, spec: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'tenantry.dev/v1alpha1',
    kind: 'ObservabilityStack',
    metadata: { name, namespace: ns },
    spec: { tenantSync: { enabled: false }, ...spec },
  });
}

describe('operator: gateway write-ahead-log volumes against a real API server', function () {
  this.timeout(120_000);
  let server: KubeTestServer | undefined;
  let operator: { process: TenantryProcess; port: number } | undefined;
  const srv = (): KubeTestServer => {
    if (server === undefined) throw new Error('no server');
    return server;
  };
  const statefulSet = async (name: string): Promise<StatefulSetSpecView> =>
    (await getJson(srv(), ['statefulset', name, '-n', ns])).spec as unknown as StatefulSetSpecView;
  /** What the StatefulSet controller would do for a replica: its claim from the template (and, optionally, its pod). */
  const createClaim = async (stack: string, ordinal: number): Promise<KubeItem> => {
    const template = (await statefulSet(`${stack}-gateway`)).volumeClaimTemplates?.[0];
    await srv().kubectl(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: `wal-${stack}-gateway-${ordinal}`, namespace: ns, labels: template?.metadata.labels },
        spec: template?.spec,
      }),
    );
    return getJson(srv(), ['pvc', `wal-${stack}-gateway-${ordinal}`, '-n', ns]);
  };
  const markReady = async (kind: string): Promise<void> => {
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
  };
  /** A claim is deleted: gone, or (kube-apiserver alone never removes the pvc-protection finalizer) marked for deletion. */
  const claimDeleted = async (name: string): Promise<boolean> => {
    const claim = await tryGet(srv(), ['pvc', name, '-n', ns]);
    return claim === undefined || (claim.metadata as { deletionTimestamp?: string }).deletionTimestamp !== undefined;
  };

  before(async function () {
    const binaries = k8sBinariesOrSkip(this);
    server = await startKubeTestServer(binaries, { users: ['tenantry-operator'] });
    // As a user holding only the documented rules: the claims and pods the drain reads and deletes are in them.
    await server.kubectl(['apply', '-f', 'test/fixtures/k8s/operator-rbac.yaml']);
    await createNamespace(server, ns);
    operator = await startOperatorProcess(server, { TENANTRY_WATCH_NAMESPACES: ns, TENANTRY_KUBECONFIG: server.kubeconfigFor('tenantry-operator') });
  });

  after(async () => {
    const code = await operator?.process.stop();
    const problems = operator?.process.lines.filter((l) => l['level'] === 'warn' || l['level'] === 'error') ?? [];
    if (code !== 0 || process.env['TEST_VERBOSE'] === '1')
      console.log(`operator exited ${String(code)}; warnings:\n${problems.map((l) => JSON.stringify(l)).join('\n')}`);
    await server?.stop();
  });

  it("runs the gateways as a StatefulSet with a claim template of the spec's size and class, retained on scale-down", async () => {
    await srv().kubectl(['apply', '-f', '-'], stackDoc('keep', { gateway: { replicas: 3, wal: { size: '5Gi', storageClassName: 'fast-ssd' } } }));
    const spec = await eventually(() => statefulSet('keep-gateway'));
    expect(spec.replicas).to.equal(3);
    expect(
      spec.volumeClaimTemplates?.map((t) => [t.metadata.name, t.spec.accessModes, t.spec.resources.requests.storage, t.spec.storageClassName]),
    ).to.deep.equal([['wal', ['ReadWriteOnce'], '5Gi', 'fast-ssd']]);
    expect(spec.volumeClaimTemplates?.[0]?.metadata.labels).to.include({ 'tenantry.dev/stack': 'keep', 'app.kubernetes.io/managed-by': 'tenantry-operator' });
    expect(spec.persistentVolumeClaimRetentionPolicy).to.deep.equal({ whenScaled: 'Retain', whenDeleted: 'Retain' });
    expect(spec.template.spec.containers[0]?.volumeMounts).to.deep.include({ name: 'wal', mountPath: '/var/lib/tenantry/wal' });
    expect(spec.template.spec.volumes?.map((v) => v.name)).not.to.include('wal');
    // Readiness from grpc.health.v1.Health on the OTLP/gRPC port, liveness from /healthz on the HTTP port (ADR 7).
    expect(spec.template.spec.containers[0]?.readinessProbe?.grpc?.port).to.equal(4317);
    expect(spec.template.spec.containers[0]?.livenessProbe?.httpGet?.path).to.equal('/healthz');
    // Stopping: a 5 s delay (Kubernetes' sleep action, accepted as sent), then up to a minute of draining.
    expect(spec.template.spec.containers[0]?.lifecycle).to.deep.equal({ preStop: { sleep: { seconds: 5 } } });
    expect(spec.template.spec.terminationGracePeriodSeconds).to.equal(75);
    expect(await tryGet(srv(), ['deployment', 'keep-gateway', '-n', ns])).to.equal(undefined);
  });

  it('puts the log on an emptyDir when the spec chooses EmptyDir, and refuses changing the choice later', async () => {
    await srv().kubectl(['apply', '-f', '-'], stackDoc('scratch', { gateway: { wal: { volume: 'EmptyDir', size: '3Gi' } } }));
    const spec = await eventually(() => statefulSet('scratch-gateway'));
    expect(spec.volumeClaimTemplates).to.equal(undefined);
    expect(spec.template.spec.volumes).to.deep.include({ name: 'wal', emptyDir: { sizeLimit: '3Gi' } });
    let refusal = '';
    try {
      await srv().kubectl([
        'patch',
        'ostack/scratch',
        '-n',
        ns,
        '--type=merge',
        '-p',
        JSON.stringify({ spec: { gateway: { wal: { volume: 'PersistentVolumeClaim' } } } }),
      ]);
    } catch (error) {
      refusal = (error as Error).message;
    }
    expect(refusal).to.contain('gateway.wal cannot change after creation');
  });

  it('upgrade: keeps the old gateway Deployment serving until the StatefulSet is ready, then deletes it', async () => {
    await srv().kubectl(['apply', '-f', '-'], stackDoc('upgrade', { gateway: { replicas: 2 } }));
    await eventually(() => statefulSet('upgrade-gateway'));
    const stack = await getJson(srv(), ['ostack', 'upgrade', '-n', ns]);
    // What an operator of the previous version left: the gateways as a Deployment the stack controls.
    const labels = {
      'app.kubernetes.io/name': 'tenantry',
      'app.kubernetes.io/instance': 'upgrade',
      'app.kubernetes.io/component': 'gateway',
      'app.kubernetes.io/part-of': 'tenantry',
      'app.kubernetes.io/managed-by': 'tenantry-operator',
      'tenantry.dev/stack': 'upgrade',
    };
    await srv().kubectl(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: {
          name: 'upgrade-gateway',
          namespace: ns,
          labels,
          ownerReferences: [
            {
              apiVersion: 'tenantry.dev/v1alpha1',
              kind: 'ObservabilityStack',
              name: 'upgrade',
              uid: stack.metadata.uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: {
          replicas: 2,
          selector: {
            matchLabels: { 'app.kubernetes.io/name': 'tenantry', 'app.kubernetes.io/instance': 'upgrade', 'app.kubernetes.io/component': 'gateway' },
          },
          template: { metadata: { labels }, spec: { containers: [{ name: 'gateway', image: 'old' }] } },
        },
      }),
    );
    // Its creation wakes the operator (an owned object); a marker edit afterwards proves a reconcile ran since.
    await srv().kubectl(['patch', 'ostack/upgrade', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { retention: { logsDays: 7 } } })]);
    await srv().kubectlUntil(['get', 'ostack/upgrade', '-n', ns, '-w', '-o', 'jsonpath={.status.observedGeneration}{"\\n"}'], (line) => line === '2');
    expect(await tryGet(srv(), ['deployment', 'upgrade-gateway', '-n', ns]), 'kept while the StatefulSet is not ready').not.to.equal(undefined);
    await markReady('statefulset/upgrade-gateway');
    await eventually(async () => {
      expect(await tryGet(srv(), ['deployment', 'upgrade-gateway', '-n', ns])).to.equal(undefined);
    });
    expect(await tryGet(srv(), ['statefulset', 'upgrade-gateway', '-n', ns])).not.to.equal(undefined);
  });

  it("after a scale-down, drains each departed replica's claim with a Job once its pod is gone, then deletes claim and Job", async () => {
    await srv().kubectl(['apply', '-f', '-'], stackDoc('drain', { gateway: { replicas: 3 } }));
    await eventually(() => statefulSet('drain-gateway'));
    const claims = [await createClaim('drain', 0), await createClaim('drain', 1), await createClaim('drain', 2)];
    // Replica 2's pod is still stopping (draining on SIGTERM): no Job may mount its claim yet.
    await srv().kubectl(
      ['create', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'drain-gateway-2', namespace: ns },
        spec: { containers: [{ name: 'gateway', image: 'x' }] },
      }),
    );
    await srv().kubectl(['patch', 'ostack/drain', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { gateway: { replicas: 1 } } })]);

    const stack = await getJson(srv(), ['ostack', 'drain', '-n', ns]);
    const job = await eventually(() => getJson(srv(), ['job', 'drain-gateway-drain-1', '-n', ns]));
    expect(job.metadata.ownerReferences).to.deep.equal([
      { apiVersion: 'tenantry.dev/v1alpha1', kind: 'ObservabilityStack', name: 'drain', uid: stack.metadata.uid, controller: true, blockOwnerDeletion: true },
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: 'wal-drain-gateway-1', uid: claims[1]?.metadata.uid },
    ]);
    const pod = (job.spec?.['template'] as { spec: PodSpecView }).spec;
    expect(pod.volumes).to.deep.equal([{ name: 'wal', persistentVolumeClaim: { claimName: 'wal-drain-gateway-1' } }]);
    expect(pod.containers[0]?.volumeMounts).to.deep.include({ name: 'wal', mountPath: '/var/lib/tenantry/wal' });
    expect([pod.containers[0]?.command, pod.containers[0]?.args], "the image's ENTRYPOINT with target drain").to.deep.equal([undefined, ['drain']]);
    expect(await tryGet(srv(), ['job', 'drain-gateway-drain-0', '-n', ns]), 'replica 0 stays').to.equal(undefined);
    expect(await tryGet(srv(), ['job', 'drain-gateway-drain-2', '-n', ns]), "replica 2's pod still runs").to.equal(undefined);

    // The pod is gone: the operator looks again on its own (no pod watch) and starts the second drain.
    await srv().kubectl(['delete', 'pod', 'drain-gateway-2', '-n', ns, '--grace-period=0', '--force']);
    await eventually(() => getJson(srv(), ['job', 'drain-gateway-drain-2', '-n', ns]), 20_000);

    // Not succeeded yet: the claim stays.
    expect(await claimDeleted('wal-drain-gateway-1')).to.equal(false);
    const end = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await srv().kubectl([
      'patch',
      'job/drain-gateway-drain-1',
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          startTime: end,
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
      expect(await claimDeleted('wal-drain-gateway-1')).to.equal(true);
      expect(await tryGet(srv(), ['job', 'drain-gateway-drain-1', '-n', ns])).to.equal(undefined);
    });
    expect(await claimDeleted('wal-drain-gateway-0'), "a remaining replica's claim is never touched").to.equal(false);
    expect(await claimDeleted('wal-drain-gateway-2'), 'a claim whose drain has not succeeded stays').to.equal(false);
    const events = await srv().kubectl(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=drain', '-o', 'jsonpath={.items[*].reason}']);
    expect(events.split(' ')).to.include.members(['WalDrainStarted', 'WalDrained']);
  });

  it('a replica scaled back up before its drain finished replays its own log: the drain Job goes, the claim stays', async () => {
    await srv().kubectl(['patch', 'ostack/drain', '-n', ns, '--type=merge', '-p', JSON.stringify({ spec: { gateway: { replicas: 3 } } })]);
    await eventually(async () => {
      expect(await tryGet(srv(), ['job', 'drain-gateway-drain-2', '-n', ns])).to.equal(undefined);
    });
    expect(await claimDeleted('wal-drain-gateway-2')).to.equal(false);
  });

  it('was never refused a call', () => {
    const forbidden = (operator?.process.lines ?? []).filter((l) => l['status'] === 403 || /forbidden/i.test(JSON.stringify([l['msg'], l['error']])));
    expect(forbidden).to.deep.equal([]);
  });
});
