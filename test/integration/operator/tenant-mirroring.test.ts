// Tenant mirroring end to end: a real `all` process (embedded ClickHouse)
// receives telemetry for three tenants; the operator, pointed at its API,
// mirrors them as Tenant resources, pushes spec.displayName, reverts a rename
// made through the API, and creates the record for a Tenant declared first.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { k8sBinariesOrSkip } from '../../k8s/k8s-binaries.ts';
import { startKubeTestServer } from '../../k8s/kube-test-server.ts';
import type { KubeTestServer } from '../../k8s/kube-test-server.ts';
import { createNamespace, eventually, getJson, startOperatorProcess } from '../../k8s/operator-under-test.ts';
import type { KubeItem } from '../../k8s/operator-under-test.ts';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const ns = 'mirror';
const adminKey = 'mirror-test-admin-key-0123456789';
const tenantIds = ['acme', 'Globex', 'initech.prod'];

function logsFor(tenant: string): unknown {
  return {
    resourceLogs: [
      {
        resource: {
          attributes: [
            { key: 'tenant.id', value: { stringValue: tenant } },
            { key: 'service.name', value: { stringValue: 'shop' } },
          ],
        },
        scopeLogs: [{ logRecords: [{ timeUnixNano: String(Date.now() * 1e6), severityNumber: 9, body: { stringValue: `hello from ${tenant}` } }] }],
      },
    ],
  };
}

describe('operator tenant mirroring against a real all process', function () {
  this.timeout(180_000);
  let server: KubeTestServer | undefined;
  let all: TenantryProcess | undefined;
  let operator: { process: TenantryProcess; port: number } | undefined;
  let dataDir = '';
  let api = '';
  const srv = (): KubeTestServer => {
    if (server === undefined) throw new Error('no server');
    return server;
  };
  const auth = { authorization: `Bearer ${adminKey}` };
  const storedName = async (id: string): Promise<string | undefined> => {
    const res = await fetch(`${api}/v1/tenants/${encodeURIComponent(id)}`, { headers: auth });
    return res.status === 404 ? undefined : ((await res.json()) as { name: string }).name;
  };
  const tenants = async (): Promise<KubeItem[]> => (await getJson<{ items: KubeItem[] }>(srv(), ['tenants', '-n', ns])).items;

  before(async function () {
    const binaries = k8sBinariesOrSkip(this);
    dataDir = await mkdtemp(join(tmpdir(), 'tenantry-mirror-'));
    all = startTenantry(
      ['all'],
      testEnvironment(dataDir, { TENANTRY_API_KEYS: JSON.stringify([{ key: adminKey, scopes: ['ingest', 'read', 'admin'], tenants: ['*'], name: 'admin' }]) }),
    );
    server = await startKubeTestServer(binaries);
    const ports = await all.started(90_000);
    api = `http://127.0.0.1:${ports['api'] ?? 0}`;
    for (const id of tenantIds) {
      const res = await fetch(`http://127.0.0.1:${ports['otlpHttp'] ?? 0}/v1/logs`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(logsFor(id)),
      });
      expect(res.status, await res.text()).to.equal(200);
    }
    await createNamespace(server, ns);
    await server.kubectl([
      'create',
      'secret',
      'generic',
      'keys',
      '-n',
      ns,
      `--from-literal=admin-key=${adminKey}`,
      `--from-literal=api-keys.json=[{"key":"${adminKey}","scopes":["admin"],"tenants":["*"]}]`,
    ]);
    operator = await startOperatorProcess(server, { TENANTRY_WATCH_NAMESPACES: ns });
  });

  after(async () => {
    await operator?.process.stop();
    await all?.stop();
    await server?.stop();
    if (dataDir !== '') await rm(dataDir, { recursive: true, force: true });
  });

  it('creates one Tenant per tenant the API reports, labelled and owned by the stack, with the stored name in status', async () => {
    await srv().kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'tenantry.dev/v1alpha1',
        kind: 'ObservabilityStack',
        metadata: { name: 'demo', namespace: ns },
        spec: { apiKeys: { secretName: 'keys' }, tenantSync: { apiUrl: api, intervalSeconds: 1 } },
      }),
    );
    const stack = await getJson(srv(), ['ostack', 'demo', '-n', ns]);
    const items = await eventually(async () => {
      const list = await tenants();
      expect(list.map((t) => t.spec?.['tenantId']).sort()).to.deep.equal([...tenantIds].sort());
      expect(list.every((t) => typeof t.status?.['lastSyncTime'] === 'string')).to.equal(true);
      return list;
    }, 30_000);
    const byId = new Map(items.map((t) => [t.spec?.['tenantId'], t]));
    expect(byId.get('acme')?.metadata.name).to.equal('demo-acme');
    expect(byId.get('initech.prod')?.metadata.name).to.equal('demo-initech.prod');
    expect(byId.get('Globex')?.metadata.name).to.match(/^demo-globex-[0-9a-f]{8}$/);
    for (const t of items) {
      expect(t.metadata.labels).to.include({ 'tenantry.dev/stack': 'demo' });
      expect(t.metadata.ownerReferences?.map((r) => r.uid)).to.deep.equal([stack.metadata.uid]);
      expect(t.spec?.['stackRef']).to.deep.equal({ name: 'demo' });
      expect(t.status?.['storedName']).to.be.a('string');
    }
    await eventually(async () => {
      expect((await getJson(srv(), ['ostack', 'demo', '-n', ns])).status?.['tenantCount']).to.equal(3);
    });
  });

  it('pushes spec.displayName to the API and shows it as the stored name', async () => {
    await srv().kubectl(['patch', 'tenant/demo-acme', '-n', ns, '--type=merge', '-p', '{"spec":{"displayName":"ACME Corporation"}}']);
    await eventually(async () => {
      expect(await storedName('acme')).to.equal('ACME Corporation');
    });
    await eventually(async () => {
      expect((await getJson(srv(), ['tenant/demo-acme', '-n', ns])).status?.['storedName']).to.equal('ACME Corporation');
    });
  });

  it('reverts a rename through the API that contradicts spec (GitOps wins)', async () => {
    const res = await fetch(`${api}/v1/tenants/acme`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'renamed elsewhere' }),
    });
    expect(res.status).to.equal(200);
    expect(await storedName('acme')).to.equal('renamed elsewhere');
    await eventually(async () => {
      expect(await storedName('acme')).to.equal('ACME Corporation');
    }, 15_000);
    const events = await srv().kubectl(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=demo-acme', '-o', 'jsonpath={.items[*].reason}']);
    expect(events).to.contain('NameSynced');
  });

  it('a Tenant declared before any telemetry creates the tenant record (GitOps first)', async () => {
    expect(await storedName('declared-first')).to.equal(undefined);
    await srv().kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'tenantry.dev/v1alpha1',
        kind: 'Tenant',
        metadata: { name: 'my-tenant', namespace: ns },
        spec: { stackRef: { name: 'demo' }, tenantId: 'declared-first', displayName: 'Declared First' },
      }),
    );
    await eventually(async () => {
      expect(await storedName('declared-first')).to.equal('Declared First');
    });
    const status = await eventually(async () => {
      const t = await getJson(srv(), ['tenant/my-tenant', '-n', ns]);
      expect(t.status?.['storedName']).to.equal('Declared First');
      return t.status as { lastSyncTime: string; conditions: Array<{ type: string; status: string }> };
    });
    // It is not mirrored a second time under a derived name. The event that proves it: a later
    // complete sync (every sync ends by writing each Tenant's lastSyncTime), which found the id in the API.
    await srv().kubectlUntil(['get', 'tenant/my-tenant', '-n', ns, '-w', '-o', 'jsonpath={.status.lastSyncTime}{"\\n"}'], (line) => line > status.lastSyncTime);
    expect((await tenants()).filter((t) => t.spec?.['tenantId'] === 'declared-first').map((t) => t.metadata.name)).to.deep.equal(['my-tenant']);
    expect(status.conditions.map((c) => [c.type, c.status])).to.deep.equal([['Synced', 'True']]);
  });
});
