// The operator as a user holding only the documented RBAC rules: it must do
// its whole job (apply, prune, status, Events, Lease, Tenant status) without
// a single 403.
import { expect } from 'chai';
import { k8sBinariesOrSkip } from '../../k8s/k8s-binaries.ts';
import { startKubeTestServer } from '../../k8s/kube-test-server.ts';
import type { KubeTestServer } from '../../k8s/kube-test-server.ts';
import { createNamespace, eventually, getJson, startOperatorProcess } from '../../k8s/operator-under-test.ts';
import type { KubeItem } from '../../k8s/operator-under-test.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

describe('operator with least-privilege RBAC', function () {
  this.timeout(120_000);
  let server: KubeTestServer | undefined;
  let operator: TenantryProcess | undefined;
  const srv = (): KubeTestServer => {
    if (server === undefined) throw new Error('no server');
    return server;
  };

  before(async function () {
    const binaries = k8sBinariesOrSkip(this);
    server = await startKubeTestServer(binaries, { users: ['tenantry-operator'] });
    await server.kubectl(['apply', '-f', 'test/fixtures/k8s/operator-rbac.yaml']);
    await createNamespace(server, 'rbac');
    operator = (await startOperatorProcess(server, { TENANTRY_KUBECONFIG: server.kubeconfigFor('tenantry-operator') })).process;
  });

  after(async () => {
    await operator?.stop();
    await server?.stop();
  });

  it('the user has no rights beyond the role (sanity check of the setup)', async () => {
    const can = async (args: string[]): Promise<string> =>
      (
        await srv()
          .kubectl(['auth', 'can-i', ...args, '--as', 'tenantry-operator'])
          .catch((e: unknown) => (e as { stdout?: string }).stdout ?? (e as Error).message)
      ).trim();
    expect(await can(['patch', 'deployments', '-n', 'rbac'])).to.equal('yes');
    expect(await can(['create', 'pods', '-n', 'rbac'])).to.equal('no');
    expect(await can(['update', 'deployments', '-n', 'rbac'])).to.equal('no');
  });

  it('reconciles, prunes, writes status and Events, holds the Lease, and updates Tenant status without a 403', async () => {
    await srv().kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'tenantry.dev/v1alpha1', kind: 'ObservabilityStack', metadata: { name: 'least', namespace: 'rbac' }, spec: {} }),
    );
    await srv().kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'tenantry.dev/v1alpha1',
        kind: 'Tenant',
        metadata: { name: 't', namespace: 'rbac' },
        spec: { stackRef: { name: 'least' }, tenantId: 'acme' },
      }),
    );
    await eventually(async () => {
      const s = await getJson(srv(), ['ostack', 'least', '-n', 'rbac']);
      expect((s.status?.['conditions'] as Array<{ reason: string }> | undefined)?.[0]?.reason).to.equal('WorkloadsNotReady');
    });
    const jobs = async (): Promise<string[]> => (await getJson<{ items: KubeItem[] }>(srv(), ['jobs', '-n', 'rbac'])).items.map((j) => j.metadata.name);
    const first = await eventually(async () => {
      const j = await jobs();
      expect(j).to.have.length(1);
      return j;
    });
    await srv().kubectl(['patch', 'ostack/least', '-n', 'rbac', '--type=merge', '-p', '{"spec":{"retention":{"tracesDays":2}}}']);
    await eventually(async () => {
      const j = await jobs();
      expect(j).to.have.length(1);
      expect(j).not.to.deep.equal(first);
    });
    await eventually(async () => {
      const t = await getJson(srv(), ['tenant/t', '-n', 'rbac']);
      expect((t.status?.['conditions'] as Array<{ reason: string }> | undefined)?.[0]?.reason).to.equal('ApiUnavailable');
    });
    expect(await srv().kubectl(['get', 'events', '-n', 'rbac', '-o', 'name'])).to.contain('event/least.');
    expect((await getJson(srv(), ['lease', 'tenantry-operator', '-n', 'kube-system'])).spec?.['holderIdentity']).to.be.a('string');
    // By field, not by text: a timestamp or a retry delay may contain "403".
    const forbidden = (operator?.lines ?? []).filter((l) => l['status'] === 403 || /forbidden/i.test(JSON.stringify([l['msg'], l['error']])));
    expect(forbidden).to.deep.equal([]);
  });
});
