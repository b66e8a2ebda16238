import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { parseAllDocuments } from 'yaml';
import { findHelm } from '../../chart/helm-binary.ts';
import { findK8sBinaries } from '../../k8s/k8s-binaries.ts';
import { startKubeTestServer } from '../../k8s/kube-test-server.ts';
import type { KubeTestServer } from '../../k8s/kube-test-server.ts';
import { skipUnlessFound } from '../../support/skip-unless-found.ts';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const execFileAsync = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');
const chart = join(root, 'charts', 'tenantry');
const valuesFiles = ['', 'ci/stack-values.yaml', 'ci/namespaced-values.yaml', 'ci/dev-values.yaml'];

type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
};

const helmFound = findHelm();

async function helm(args: readonly string[], kubeconfig?: string): Promise<string> {
  if (!helmFound.ok) throw new Error(helmFound.reason);
  const { stdout } = await execFileAsync(helmFound.helm, [...args, ...(kubeconfig === undefined ? [] : ['--kubeconfig', kubeconfig])], {
    cwd: root,
    maxBuffer: 32 * 1024 * 1024,
  });
  return stdout;
}

/** helm's stderr for a command that must fail. */
async function helmFails(args: readonly string[]): Promise<string> {
  try {
    await helm(args);
  } catch (error) {
    return String((error as { stderr?: unknown }).stderr);
  }
  throw new Error(`helm ${args.join(' ')} succeeded`);
}

function manifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

function valuesArgs(file: string): string[] {
  return file === '' ? [] : ['-f', join(chart, file)];
}

describe('Helm chart charts/tenantry', function () {
  this.timeout(120_000);
  before(function () {
    skipUnlessFound(this, helmFound);
  });

  for (const file of valuesFiles) {
    const label = file === '' ? 'default values' : file;
    it(`passes helm lint --strict with ${label}`, async () => {
      expect(await helm(['lint', '--strict', chart, ...valuesArgs(file)])).to.contain('1 chart(s) linted, 0 chart(s) failed');
    });

    it(`renders with ${label}: standard labels on every object, operator least privilege`, async () => {
      const objects = manifests(await helm(['template', 'rel', chart, '--namespace', 'obs', ...valuesArgs(file)]));
      expect(objects.map((o) => o.kind)).to.include.members(['ServiceAccount', 'Deployment']);
      for (const o of objects) {
        expect(o.metadata.labels, `${o.kind}/${o.metadata.name}`).to.include.keys(
          'helm.sh/chart',
          'app.kubernetes.io/name',
          'app.kubernetes.io/instance',
          'app.kubernetes.io/version',
          'app.kubernetes.io/managed-by',
        );
      }
      const deployment = objects.find((o) => o.kind === 'Deployment');
      expect(JSON.stringify(deployment)).to.contain('"args":["operator"]').and.contain('"readOnlyRootFilesystem":true').and.contain('"runAsNonRoot":true');
      const rules = objects
        .filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')
        .flatMap((o) => (o as unknown as { rules: Array<{ resources: string[]; verbs: string[] }> }).rules);
      expect(rules.flatMap((r) => r.resources)).to.not.include.members(['*', 'pods', 'nodes', 'customresourcedefinitions']);
      expect(rules.flatMap((r) => r.verbs)).to.not.include('*');
    });
  }

  it('grants the operator exactly the rules it is tested with under least privilege', async () => {
    const fixture = manifests(await readFile(join(root, 'test', 'fixtures', 'k8s', 'operator-rbac.yaml'), 'utf8')).find(
      (o) => o.kind === 'ClusterRole',
    ) as unknown as { rules: unknown[] };
    const rendered = manifests(await helm(['template', 'rel', chart])).find((o) => o.kind === 'ClusterRole') as unknown as { rules: unknown[] };
    expect(rendered.rules).to.deep.equal(fixture.rules);
  });

  it('ships the repository CRDs unchanged', async () => {
    const names = (await readdir(join(root, 'crds'))).filter((n) => n.endsWith('.yaml'));
    expect(names).to.have.length(2);
    for (const name of names) {
      expect(await readFile(join(chart, 'crds', name), 'utf8'), `charts/tenantry/crds/${name} is a copy of crds/${name}`).to.equal(
        await readFile(join(root, 'crds', name), 'utf8'),
      );
    }
  });

  it("rejects bad values with Helm's own schema error", async () => {
    expect(await helmFails(['template', 'rel', chart, '--set', 'operator.replicas=two'])).to.contain("at '/operator/replicas': got string, want integer");
    expect(await helmFails(['template', 'rel', chart, '--set', 'operator.replica=2'])).to.contain("additional properties 'replica' not allowed");
    expect(await helmFails(['template', 'rel', chart, '--set', 'rbac.scope=namespaced'])).to.contain('/rbac/scope');
    expect(await helmFails(['template', 'rel', chart, '--set', 'image.pullPolicy=Sometimes'])).to.contain('/image/pullPolicy');
    expect(
      await helmFails(['template', 'rel', chart, '--set', 'stack.create=true', '--set', 'stack.apiKeys.create=true', '--set', 'stack.apiKeys.adminKey=short']),
    ).to.contain('at least 16 characters');
    expect(await helmFails(['template', 'rel', chart, '--set', 'rbac.scope=namespace'])).to.contain('needs operator.watchNamespaces');
  });

  it("puts the given keys and a generated admin entry into the stack's Secret", async () => {
    const objects = manifests(await helm(['template', 'rel', chart, ...valuesArgs('ci/stack-values.yaml')]));
    const secret = objects.find((o) => o.kind === 'Secret') as unknown as { metadata: { name: string }; stringData: Record<string, string> };
    const stack = objects.find((o) => o.kind === 'ObservabilityStack');
    expect(secret.metadata.name).to.equal('demo-api-keys');
    expect(stack?.spec).to.deep.include({ apiKeys: { secretName: 'demo-api-keys' } });
    const keys = JSON.parse(secret.stringData['api-keys.json'] ?? '[]') as Array<{ name: string; scopes: string[] }>;
    expect(keys.map((k) => k.name)).to.deep.equal(['admin (helm)', 'collectors']);
    expect(secret.stringData['admin-key']).to.equal('demo-admin-key-0123456789');
  });
});

describe('Helm chart against a real kube-apiserver', function () {
  this.timeout(240_000);
  const binaries = findK8sBinaries();
  let server: KubeTestServer;
  let operator: TenantryProcess | undefined;

  before(async function () {
    skipUnlessFound(this, helmFound, binaries);
    if (!binaries.ok) return;
    server = await startKubeTestServer(binaries.binaries);
  });
  after(async () => {
    await operator?.stop('SIGKILL');
    await (server as KubeTestServer | undefined)?.stop();
  });

  const get = async (args: readonly string[]): Promise<Record<string, unknown>> =>
    JSON.parse(await server.kubectl(['get', ...args, '-o', 'json'])) as Record<string, unknown>;
  const exists = async (args: readonly string[]): Promise<boolean> =>
    server.kubectl(['get', ...args]).then(
      () => true,
      () => false,
    );
  /** kubectl wait: a watch on the object, so the test wakes on the event, not on a timer. */
  const waitFor = async (condition: string, object: string): Promise<void> => {
    await server.kubectl(['wait', '-n', 'tenantry', `--for=${condition}`, '--timeout=60s', object]);
  };

  it('every rendered manifest is accepted by the API server (kubectl apply --dry-run=server)', async () => {
    await server.kubectl(['apply', '--server-side', '-f', join(chart, 'crds')]);
    await server.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/observabilitystacks.tenantry.dev', 'crd/tenants.tenantry.dev']);
    for (const ns of ['obs', 'team-a', 'team-b']) await server.kubectl(['create', 'namespace', ns]);
    for (const file of valuesFiles) {
      const rendered = await helm(['template', 'rel', chart, '--namespace', 'obs', ...valuesArgs(file)]);
      const out = await server.kubectl(['apply', '--dry-run=server', '-f', '-'], rendered);
      expect(out, file).to.contain('(server dry run)');
    }
  });

  it("installs, runs the operator on the chart's stack, upgrades and uninstalls as a user expects", async () => {
    const kubeconfig = server.kubeconfigPath;
    await helm(['install', 'tenantry', chart, '--namespace', 'tenantry', '--create-namespace', ...valuesArgs('ci/stack-values.yaml')], kubeconfig);
    // The operator's own objects and the stack are there.
    expect(await exists(['crd', 'observabilitystacks.tenantry.dev'])).to.equal(true);
    for (const object of ['deployment/tenantry', 'serviceaccount/tenantry', 'secret/demo-api-keys', 'observabilitystack/demo']) {
      expect(await exists(['-n', 'tenantry', object]), object).to.equal(true);
    }
    expect(await exists(['clusterrole/tenantry'])).to.equal(true);

    // Pods do not run here (no kubelet), so run the operator process itself with the chart's settings.
    operator = startTenantry(
      ['operator'],
      testEnvironment(root, {
        TENANTRY_KUBECONFIG: kubeconfig,
        TENANTRY_OPERATOR_PORT: '0',
        TENANTRY_LEADER_ELECTION: 'off',
        TENANTRY_LOG_LEVEL: 'warn',
      }),
    );
    for (const child of ['statefulset/demo-gateway', 'deployment/demo-api', 'service/demo-gateway', 'service/demo-api']) {
      await waitFor('create', child);
      expect(await exists(['-n', 'tenantry', child]), child).to.equal(true);
    }
    const gateway = await get(['-n', 'tenantry', 'statefulset/demo-gateway']);
    expect(gateway).to.have.nested.property('spec.replicas', 1);
    expect(gateway).to.have.nested.property('metadata.ownerReferences[0].kind', 'ObservabilityStack');

    // helm upgrade with changed values reaches the operator Deployment and, through the stack, the children.
    await helm(
      [
        'upgrade',
        'tenantry',
        chart,
        '--namespace',
        'tenantry',
        ...valuesArgs('ci/stack-values.yaml'),
        '--set',
        'operator.replicas=2',
        '--set',
        'stack.spec.gateway.replicas=3',
      ],
      kubeconfig,
    );
    expect(await get(['-n', 'tenantry', 'deployment/tenantry'])).to.have.nested.property('spec.replicas', 2);
    await waitFor('jsonpath={.spec.replicas}=3', 'statefulset/demo-gateway');
    expect(await get(['-n', 'tenantry', 'statefulset/demo-gateway']), 'gateway scaled to 3 by the operator').to.have.nested.property('spec.replicas', 3);

    // helm uninstall: the release's objects go; CRDs stay (Helm never deletes crds/);
    // the stack's children carry owner references, so the cluster's garbage
    // collector (absent from this test server) removes them with the stack.
    await operator.stop('SIGTERM');
    operator = undefined;
    await helm(['uninstall', 'tenantry', '--namespace', 'tenantry'], kubeconfig);
    for (const object of ['deployment/tenantry', 'serviceaccount/tenantry', 'secret/demo-api-keys', 'observabilitystack/demo']) {
      expect(await exists(['-n', 'tenantry', object]), `${object} is removed`).to.equal(false);
    }
    expect(await exists(['clusterrole/tenantry'])).to.equal(false);
    expect(await exists(['crd', 'observabilitystacks.tenantry.dev']), 'CRDs stay').to.equal(true);
    const orphan = await get(['-n', 'tenantry', 'statefulset/demo-gateway']);
    expect(orphan).to.have.nested.property('metadata.ownerReferences[0].name', 'demo');
  });
});
