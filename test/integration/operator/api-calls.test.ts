// What the operator costs the API server, counted by the API server itself
// (its audit log, one line per request of the operator's own user): API calls
// per stack reconcile, and reconciles for a stack with 1,000 tenants. The
// numbers are printed for docs/operator.md; the assertions hold the
// watch-fed cache to its promise (no reads while reconciling).
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { k8sBinariesOrSkip } from '../../k8s/k8s-binaries.ts';
import { startKubeTestServer } from '../../k8s/kube-test-server.ts';
import type { AuditedRequest, KubeTestServer } from '../../k8s/kube-test-server.ts';
import { createNamespace, eventually, getJson, startOperatorProcess } from '../../k8s/operator-under-test.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const user = 'tenantry-operator';
const tenantCount = 1000;

/** Reconciles so far by task, from the operator's /metrics. */
async function reconciles(port: number): Promise<{ stack: number; tenants: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const sum = (task: string): number =>
    [...text.matchAll(new RegExp(`^tenantry_operator_reconciles_total\\{[^}]*task="${task}"[^}]*\\} (\\d+)`, 'gm'))].reduce((n, m) => n + Number(m[1]), 0);
  return { stack: sum('stack'), tenants: sum('tenants') };
}

/**
 * Waits until the operator has been idle for two seconds: neither its reconcile
 * counters nor its API calls moved. The operator is another process: no event
 * tells this test that it has nothing left to do, so this polls (step 1 s)
 * until two readings agree. A long reconcile keeps calling the API, so it is
 * never mistaken for idleness.
 */
async function settled(port: number, server: KubeTestServer): Promise<{ stack: number; tenants: number }> {
  const reading = async (): Promise<string> => JSON.stringify([await reconciles(port), work(server.requests()).length]);
  let last = await reading();
  for (let stable = 0; stable < 2;) {
    // Polled: "no more work" has no event of its own; a reading a second apart that did not change is the signal.
    await new Promise((r) => setTimeout(r, 1000));
    const now = await reading();
    stable = now === last ? stable + 1 : 0;
    last = now;
  }
  return reconciles(port);
}

/** The operator's requests, without its watches and its Lease (neither depends on reconciles). */
function work(requests: readonly AuditedRequest[]): AuditedRequest[] {
  return requests.filter((r) => r.user === user && r.verb !== 'watch' && r.resource !== 'leases');
}

function breakdown(requests: readonly AuditedRequest[]): string {
  const counts = new Map<string, number>();
  for (const r of requests) counts.set(`${r.verb} ${r.resource}`, (counts.get(`${r.verb} ${r.resource}`) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k}=${n}`)
    .join(', ');
}

const reads = (requests: readonly AuditedRequest[]): AuditedRequest[] => requests.filter((r) => r.verb === 'get' || r.verb === 'list');

/** A stack's /v1 tenants API holding `count` tenants, in cursor pages of the asked size. */
function fakeTenantApi(count: number): Server {
  const ids = Array.from({ length: count }, (_, i) => `tenant-${String(i).padStart(4, '0')}`);
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname === '/v1/tenants') {
      const from = Number(url.searchParams.get('page') ?? 0);
      const limit = Number(url.searchParams.get('limit') ?? 100);
      const data = ids.slice(from, from + limit).map((id) => ({ id, name: id }));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ data, nextPage: from + limit < ids.length ? String(from + limit) : null }));
      return;
    }
    res.writeHead(404).end();
  });
}

describe('operator API calls, counted by the API server', function () {
  this.timeout(600_000);
  let server: KubeTestServer | undefined;
  let operator: { process: TenantryProcess; port: number } | undefined;
  let tenantApi: Server | undefined;
  const srv = (): KubeTestServer => {
    if (server === undefined) throw new Error('no server');
    return server;
  };
  const port = (): number => operator?.port ?? 0;

  before(async function () {
    const binaries = k8sBinariesOrSkip(this);
    server = await startKubeTestServer(binaries, { users: [user], audit: true });
    await server.kubectl(['apply', '-f', 'test/fixtures/k8s/operator-rbac.yaml']);
    await createNamespace(server, 'calls');
    tenantApi = fakeTenantApi(tenantCount);
    await new Promise<void>((r) => {
      tenantApi?.listen(0, '127.0.0.1', r);
    });
    await server.kubectl([
      'create',
      'secret',
      'generic',
      'keys',
      '-n',
      'calls',
      '--from-literal=admin-key=calls-admin-key-0123456789',
      '--from-literal=api-keys.json=[]',
    ]);
    operator = await startOperatorProcess(server, { TENANTRY_KUBECONFIG: server.kubeconfigFor(user), TENANTRY_WATCH_NAMESPACES: 'calls' });
  });

  after(async () => {
    await operator?.process.stop();
    tenantApi?.closeAllConnections();
    await new Promise<void>((r) => {
      if (tenantApi === undefined) r();
      else
        tenantApi.close(() => {
          r();
        });
    });
    await server?.stop();
  });

  it('a stack reconcile reads nothing from the API server: applies, status and Events only', async () => {
    const ns = 'calls';
    await eventually(async () => {
      expect((await fetch(`http://127.0.0.1:${port()}/readyz`)).status).to.equal(200);
    });
    const before = await settled(port(), srv());
    const seen = srv().requests().length;
    await srv().kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'tenantry.dev/v1alpha1',
        kind: 'ObservabilityStack',
        metadata: { name: 'cost', namespace: ns },
        spec: { tenantSync: { enabled: false } },
      }),
    );
    await eventually(async () => {
      const s = await getJson(srv(), ['ostack', 'cost', '-n', ns]);
      expect((s.status?.['conditions'] as Array<{ reason: string }> | undefined)?.[0]?.reason).to.equal('WorkloadsNotReady');
    });
    // Play the workload controllers (no kubelet here): every workload ready, then the migration done.
    for (const kind of ['statefulset/cost-gateway', 'deployment/cost-api', 'statefulset/cost-clickhouse-s0']) {
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
    const job = (await getJson<{ items: Array<{ metadata: { name: string } }> }>(srv(), ['jobs', '-n', ns])).items[0]?.metadata.name ?? '';
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await srv().kubectl([
      'patch',
      `job/${job}`,
      '-n',
      ns,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          startTime: now,
          completionTime: now,
          succeeded: 1,
          conditions: [
            { type: 'SuccessCriteriaMet', status: 'True', lastTransitionTime: now, lastProbeTime: now },
            { type: 'Complete', status: 'True', lastTransitionTime: now, lastProbeTime: now },
          ],
        },
      }),
    ]);
    await eventually(async () => {
      const s = await getJson(srv(), ['ostack', 'cost', '-n', ns]);
      expect((s.status?.['conditions'] as Array<{ reason: string }> | undefined)?.[0]?.reason).to.equal('AllComponentsReady');
    });
    const after = await settled(port(), srv());
    const calls = work(srv().requests().slice(seen));
    const count = after.stack - before.stack;
    console.log(
      `      ${count} stack reconciles, ${calls.length} API calls (${(calls.length / count).toFixed(1)} per reconcile, ${(reads(calls).length / count).toFixed(1)} reads): ${breakdown(calls)}`,
    );
    expect(count).to.be.greaterThan(0);
    expect(breakdown(reads(calls))).to.equal('');
  });

  it(`mirrors ${tenantCount} tenants with a bounded number of reconciles`, async () => {
    const ns = 'calls';
    const before = await settled(port(), srv());
    const seen = srv().requests().length;
    const started = Date.now();
    const apiUrl = `http://127.0.0.1:${(tenantApi?.address() as AddressInfo).port}`;
    await srv().kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'tenantry.dev/v1alpha1',
        kind: 'ObservabilityStack',
        metadata: { name: 'many', namespace: ns },
        spec: { apiKeys: { secretName: 'keys' }, tenantSync: { apiUrl, intervalSeconds: 3600 } },
      }),
    );
    // Done when the stack counts them all and every Tenant's status shows a finished sync.
    const synced = async (): Promise<string[]> =>
      (await srv().kubectl(['get', 'tenants', '-n', ns, '-o', 'jsonpath={range .items[*]}{.spec.stackRef.name} {.status.lastSyncTime}{"\\n"}{end}']))
        .split('\n')
        .filter((l) => l.startsWith('many ') && l.length > 'many '.length);
    await eventually(
      async () => {
        expect((await getJson(srv(), ['ostack', 'many', '-n', ns])).status?.['tenantCount']).to.equal(tenantCount);
        expect(await synced()).to.have.length(tenantCount);
      },
      540_000,
      1000,
    );
    const after = await settled(port(), srv());
    const calls = work(srv().requests().slice(seen));
    console.log(
      `      ${tenantCount} tenants mirrored in ${Math.round((Date.now() - started) / 1000)} s: ${after.stack - before.stack} stack reconciles, ${after.tenants - before.tenants} tenant syncs, ${calls.length} API calls: ${breakdown(calls)}`,
    );
    expect(await synced()).to.have.length(tenantCount);
    expect(after.tenants - before.tenants).to.be.at.most(3);
    expect(after.stack - before.stack).to.be.at.most(10);
    expect(breakdown(reads(calls))).to.equal('');
  });
});
