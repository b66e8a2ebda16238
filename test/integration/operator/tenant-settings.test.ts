// Declared tenant settings end to end: a real `all` process (embedded
// ClickHouse) and the operator against a real kube-apiserver. A Tenant's
// spec.limits/spec.retention reach the API as source "tenant", shadow values
// set through the API, win over edits made behind the operator's back, and
// give way again when removed from the spec; the stack's spec.tenantDefaults
// become source "stack"; Tenant.status shows the effective values; the CRD
// schema refuses values outside the bounds.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { builtInDefaults } from '../../../src/tenant/settings/tenant-settings.ts';
import { k8sBinariesOrSkip } from '../../k8s/k8s-binaries.ts';
import { startKubeTestServer } from '../../k8s/kube-test-server.ts';
import type { KubeTestServer } from '../../k8s/kube-test-server.ts';
import { createNamespace, eventually, getJson, startOperatorProcess } from '../../k8s/operator-under-test.ts';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const ns = 'settings';
const adminKey = 'settings-test-admin-key-0123456789';
const otherKey = 'settings-test-other-tenant-key-0123';

type Group = Record<string, number>;
interface ApiTenant {
  id: string;
  name: string;
  limits: Group;
  retention: Group;
  sources: { limits: Record<string, string>; retention: Record<string, string> };
}

function logsFor(tenant: string): unknown {
  return {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'tenant.id', value: { stringValue: tenant } }] },
        scopeLogs: [{ logRecords: [{ timeUnixNano: String(Date.now() * 1e6), severityNumber: 9, body: { stringValue: `hello from ${tenant}` } }] }],
      },
    ],
  };
}

describe('operator pushes declared tenant settings to a real all process', function () {
  this.timeout(240_000);
  let server: KubeTestServer | undefined;
  let all: TenantryProcess | undefined;
  let operator: { process: TenantryProcess; port: number } | undefined;
  let dataDir = '';
  let api = '';
  const srv = (): KubeTestServer => {
    if (server === undefined) throw new Error('no server');
    return server;
  };
  const admin = { authorization: `Bearer ${adminKey}` };

  const tenant = async (id: string, key = adminKey): Promise<{ status: number; body: ApiTenant }> => {
    const res = await fetch(`${api}/v1/tenants/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as ApiTenant };
  };
  const put = async (path: string, body: unknown, key = adminKey): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(`${api}${path}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  /** [value, source] of one field as GET /v1/tenants/:id shows it. */
  const field = async (id: string, group: 'limits' | 'retention', name: string): Promise<[number | undefined, string | undefined]> => {
    const t = (await tenant(id)).body;
    return [t[group][name], t.sources[group][name]];
  };
  const applyJson = async (doc: unknown): Promise<string> => srv().kubectl(['apply', '-f', '-'], JSON.stringify(doc));
  const refused = async (doc: unknown): Promise<string> => {
    try {
      await applyJson(doc);
    } catch (error) {
      return (error as Error).message;
    }
    return '';
  };
  const tenantObject = (name: string, spec: Record<string, unknown>): unknown => ({
    apiVersion: 'tenantry.dev/v1alpha1',
    kind: 'Tenant',
    metadata: { name, namespace: ns },
    spec: { stackRef: { name: 'demo' }, ...spec },
  });
  /** Resolves once the operator completed a sync that started after this call (each sync ends by writing lastSyncTime). */
  const nextSync = async (object: string): Promise<void> => {
    const since = new Date(Date.now() + 1000).toISOString();
    await srv().kubectlUntil(['get', object, '-n', ns, '-w', '-o', 'jsonpath={.status.lastSyncTime}{"\\n"}'], (line) => line >= since, 30_000);
  };

  before(async function () {
    const binaries = k8sBinariesOrSkip(this);
    dataDir = await mkdtemp(join(tmpdir(), 'tenantry-settings-'));
    all = startTenantry(
      ['all'],
      testEnvironment(dataDir, {
        TENANTRY_API_KEYS: JSON.stringify([
          { key: adminKey, scopes: ['ingest', 'read', 'admin'], tenants: ['*'], name: 'admin' },
          { key: otherKey, scopes: ['read'], tenants: ['other'], name: 'other' },
        ]),
      }),
    );
    server = await startKubeTestServer(binaries);
    const ports = await all.started(90_000);
    api = `http://127.0.0.1:${ports['api'] ?? 0}`;
    const res = await fetch(`http://127.0.0.1:${ports['otlpHttp'] ?? 0}/v1/logs`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify(logsFor('other')),
    });
    expect(res.status, await res.text()).to.equal(200);
    await createNamespace(server, ns);
    await server.kubectl(['create', 'secret', 'generic', 'keys', '-n', ns, `--from-literal=admin-key=${adminKey}`, '--from-literal=api-keys.json=[]']);
    operator = await startOperatorProcess(server, { TENANTRY_WATCH_NAMESPACES: ns });
    await applyJson({
      apiVersion: 'tenantry.dev/v1alpha1',
      kind: 'ObservabilityStack',
      metadata: { name: 'demo', namespace: ns },
      spec: { apiKeys: { secretName: 'keys' }, tenantSync: { apiUrl: api, intervalSeconds: 1 } },
    });
  });

  after(async () => {
    await operator?.process.stop();
    await all?.stop();
    await server?.stop();
    if (dataDir !== '') await rm(dataDir, { recursive: true, force: true });
  });

  it('the CRD schemas refuse values outside the bounds, non-integers and unknown fields', async () => {
    expect(await refused(tenantObject('bad-zero', { tenantId: 'bad', limits: { maxQueryDays: 0 } }))).to.contain(
      'spec.limits.maxQueryDays: Invalid value: 0: spec.limits.maxQueryDays in body should be greater than or equal to 1',
    );
    expect(await refused(tenantObject('bad-rate', { tenantId: 'bad', limits: { ingestBytesPerSecond: 10 * 1024 ** 3 + 1 } }))).to.contain(
      'spec.limits.ingestBytesPerSecond in body should be less than or equal to 10737418240',
    );
    expect(await refused(tenantObject('bad-fraction', { tenantId: 'bad', retention: { logsDays: 1.5 } }))).to.contain(
      'spec.retention.logsDays in body must be of type int32',
    );
    expect(await refused(tenantObject('bad-field', { tenantId: 'bad', limits: { maxQueryDay: 7 } }))).to.contain('unknown field "spec.limits.maxQueryDay"');
    expect(
      await refused({
        apiVersion: 'tenantry.dev/v1alpha1',
        kind: 'ObservabilityStack',
        metadata: { name: 'bad', namespace: ns },
        spec: { tenantDefaults: { retention: { tracesDays: 36501 } } },
      }),
    ).to.contain('spec.tenantDefaults.retention.tracesDays in body should be less than or equal to 36500');
    // The bounds themselves are accepted (validated by the API server, not stored).
    await srv().kubectl(
      ['apply', '--dry-run=server', '-f', '-'],
      JSON.stringify(
        tenantObject('bounds-ok', {
          tenantId: 'bounds-ok',
          limits: { maxQueryDays: 1, ingestBytesPerSecond: 10 * 1024 ** 3, ingestBurstBytes: 100 * 1024 ** 3 },
          retention: { logsDays: 36500 },
        }),
      ),
    );
  });

  it('a Tenant declared with limits and retention creates the record; the API shows them with source "tenant", and Tenant.status the effective values', async () => {
    await applyJson(tenantObject('acme', { tenantId: 'acme', limits: { maxQueryDays: 7, ingestBytesPerSecond: 2 * 1024 ** 2 }, retention: { logsDays: 3 } }));
    await eventually(async () => {
      expect(await field('acme', 'limits', 'maxQueryDays')).to.deep.equal([7, 'tenant']);
      expect(await field('acme', 'limits', 'ingestBytesPerSecond')).to.deep.equal([2 * 1024 ** 2, 'tenant']);
      expect(await field('acme', 'retention', 'logsDays')).to.deep.equal([3, 'tenant']);
    });
    const t = (await tenant('acme')).body;
    expect(t.sources.limits['maxConcurrentQueries']).to.equal('default');
    expect(t.limits['maxConcurrentQueries']).to.equal(builtInDefaults.limits.maxConcurrentQueries);
    const status = await eventually(async () => {
      const s = (await getJson(srv(), ['tenant/acme', '-n', ns])).status as {
        limits?: Group;
        retention?: Group;
        sources?: ApiTenant['sources'];
        conditions?: Array<{ type: string; status: string; message: string }>;
      };
      expect(s.limits?.['maxQueryDays']).to.equal(7);
      return s;
    });
    expect(status.limits).to.deep.equal(t.limits);
    expect(status.retention).to.deep.equal(t.retention);
    expect(status.sources).to.deep.equal(t.sources);
    expect(status.conditions?.map((c) => [c.type, c.status])).to.deep.equal([['Synced', 'True']]);
    expect(status.conditions?.[0]?.message).to.contain('limits.maxQueryDays=7');
    // Printer columns (`kubectl get tnt -o wide`): fixed-width, some empty, so read each value at its header's offset.
    const [header = '', row = ''] = (await srv().kubectl(['get', 'tenant/acme', '-n', ns, '-o', 'wide'])).split('\n');
    const column = (name: string): string | undefined => row.slice(header.indexOf(name)).split(/\s+/)[0];
    expect([column('INGEST-BPS'), column('LOGS-DAYS'), column('TRACES-DAYS')]).to.deep.equal([
      String(2 * 1024 ** 2),
      '3',
      String(builtInDefaults.retention.tracesDays),
    ]);
    // Tenant isolation: acme's declared values are acme's alone.
    const other = (await tenant('other', otherKey)).body;
    expect(Object.values(other.sources.limits).concat(Object.values(other.sources.retention))).not.to.include('tenant');
    expect((await tenant('acme', otherKey)).status).to.equal(404);
    // Another tenant's read key can neither see acme (404, as an unknown id) nor write declared values, not even its own tenant's.
    expect((await put('/v1/tenants/acme?source=tenant', { limits: {}, retention: {} }, otherKey)).status).to.equal(404);
    expect((await put('/v1/tenants/other?source=tenant', { limits: { maxQueryDays: 1 }, retention: {} }, otherKey)).status).to.equal(403);
    expect(await field('acme', 'limits', 'maxQueryDays')).to.deep.equal([7, 'tenant']);
    expect(await field('other', 'limits', 'maxQueryDays')).to.deep.equal([builtInDefaults.limits.maxQueryDays, 'default']);
  });

  it('an API edit (source "api") of a declared field is stored but shadowed: GET keeps the Tenant\'s value', async () => {
    const edit = await put('/v1/tenants/acme', { limits: { maxQueryDays: 30 } });
    expect(edit.status, JSON.stringify(edit.body)).to.equal(200);
    expect(await field('acme', 'limits', 'maxQueryDays')).to.deep.equal([7, 'tenant']);
    await nextSync('tenant/acme');
    expect(await field('acme', 'limits', 'maxQueryDays')).to.deep.equal([7, 'tenant']);
  });

  it("a ?source=tenant edit made behind the operator's back is reverted at the next sync", async () => {
    const edit = await put('/v1/tenants/acme?source=tenant', { limits: { maxQueryDays: 99 }, retention: {} });
    expect(edit.status, JSON.stringify(edit.body)).to.equal(200);
    expect((edit.body as ApiTenant).limits['maxQueryDays']).to.equal(99);
    await eventually(async () => {
      expect(await field('acme', 'limits', 'maxQueryDays')).to.deep.equal([7, 'tenant']);
      expect(await field('acme', 'retention', 'logsDays')).to.deep.equal([3, 'tenant']);
    }, 20_000);
    const events = await srv().kubectl(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=acme', '-o', 'jsonpath={.items[*].reason}']);
    expect(events).to.contain('SettingsSynced');
  });

  it('removing a field from the Tenant lets the API value apply again, and unsetting that the default', async () => {
    await srv().kubectl(['patch', 'tenant/acme', '-n', ns, '--type=json', '-p', JSON.stringify([{ op: 'remove', path: '/spec/limits/maxQueryDays' }])]);
    await eventually(async () => {
      expect(await field('acme', 'limits', 'maxQueryDays')).to.deep.equal([30, 'api']);
    });
    expect(await field('acme', 'limits', 'ingestBytesPerSecond')).to.deep.equal([2 * 1024 ** 2, 'tenant']);
    const unset = await put('/v1/tenants/acme', { limits: { maxQueryDays: null } });
    expect(unset.status, JSON.stringify(unset.body)).to.equal(200);
    expect(await field('acme', 'limits', 'maxQueryDays')).to.deep.equal([builtInDefaults.limits.maxQueryDays, 'default']);
    await eventually(async () => {
      const s = (await getJson(srv(), ['tenant/acme', '-n', ns])).status as { limits?: Group; sources?: ApiTenant['sources'] };
      expect([s.limits?.['maxQueryDays'], s.sources?.limits['maxQueryDays']]).to.deep.equal([builtInDefaults.limits.maxQueryDays, 'default']);
    });
  });

  it('the stack\'s tenantDefaults become source "stack" for fields no tenant sets, and a direct edit of them is reverted', async () => {
    await srv().kubectl([
      'patch',
      'ostack/demo',
      '-n',
      ns,
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { tenantDefaults: { limits: { maxQueryDays: 60 }, retention: { logsDays: 10, tracesDays: 14 } } } }),
    ]);
    await eventually(async () => {
      expect(await field('other', 'limits', 'maxQueryDays')).to.deep.equal([60, 'stack']);
      expect(await field('other', 'retention', 'tracesDays')).to.deep.equal([14, 'stack']);
      expect(await field('acme', 'limits', 'maxQueryDays')).to.deep.equal([60, 'stack']);
    });
    // acme's own retention still wins over the stack's.
    expect(await field('acme', 'retention', 'logsDays')).to.deep.equal([3, 'tenant']);
    expect(await field('other', 'retention', 'logsDays')).to.deep.equal([10, 'stack']);
    const defaults = await (await fetch(`${api}/v1/settings/tenant-defaults`, { headers: admin })).json();
    expect(defaults).to.deep.equal({ limits: { maxQueryDays: 60 }, retention: { logsDays: 10, tracesDays: 14 } });

    const edit = await put('/v1/settings/tenant-defaults', { limits: { maxQueryDays: 5 }, retention: {} });
    expect(edit.status, JSON.stringify(edit.body)).to.equal(200);
    await eventually(async () => {
      expect(await (await fetch(`${api}/v1/settings/tenant-defaults`, { headers: admin })).json()).to.deep.equal({
        limits: { maxQueryDays: 60 },
        retention: { logsDays: 10, tracesDays: 14 },
      });
    });
    const events = await srv().kubectl(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=demo', '-o', 'jsonpath={.items[*].reason}']);
    expect(events).to.contain('TenantDefaultsSynced');
    // The mirrored Tenant of 'other' shows the stack's values in its status.
    await eventually(async () => {
      const s = (await getJson(srv(), ['tenant/demo-other', '-n', ns])).status as { limits?: Group; sources?: ApiTenant['sources'] };
      expect([s.limits?.['maxQueryDays'], s.sources?.limits['maxQueryDays']]).to.deep.equal([60, 'stack']);
    });
  });

  it('deleting the declaring Tenant removes its values: the tenant is mirrored again, declaring nothing', async () => {
    await srv().kubectl(['delete', 'tenant/acme', '-n', ns]);
    await eventually(async () => {
      const t = (await tenant('acme')).body;
      expect(Object.values(t.sources.limits).concat(Object.values(t.sources.retention))).not.to.include('tenant');
      expect([t.retention['logsDays'], t.sources.retention['logsDays']]).to.deep.equal([10, 'stack']);
    });
    const mirrored = await getJson(srv(), ['tenant/demo-acme', '-n', ns]);
    expect(mirrored.spec?.['limits']).to.equal(undefined);
  });

  it("pushed only on a difference: one PUT per change of acme's declared or held values, none for the once-a-second resyncs in between", () => {
    const pushes = (operator?.process.lines ?? []).filter((l) => l['msg'] === 'pushed declared settings to the API');
    // Declared, reverted after the ?source=tenant edit, a field removed, the Tenant deleted (re-mirrored declaring nothing).
    expect(pushes.map((l) => l['tenant'])).to.deep.equal(['acme', 'acme', 'acme', 'acme']);
    const syncs = (operator?.process.lines ?? []).filter((l) => l['msg'] === 'pushed spec.tenantDefaults to the API');
    expect(syncs).to.have.length(2);
  });
});
