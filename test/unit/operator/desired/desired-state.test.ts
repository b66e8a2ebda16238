import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConfigMap, Deployment, Job, Manifest, Secret, Service, StatefulSet } from '../../../../operator/desired/manifest-types.ts';
import { expect } from 'chai';
import { parse, stringify } from 'yaml';
import { desiredObjects, objectKey } from '../../../../operator/desired/desired-state.ts';
import { checksumAnnotation } from '../../../../operator/desired/object-meta.ts';
import { generatedKeysFile } from '../../../../operator/desired/credentials-secret.ts';
import { inputs, stackOf } from './stack-fixtures.ts';

const fixtures = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'k8s');

function find(objects: Manifest[], key: string): Manifest {
  const found = objects.find((o) => objectKey(o) === key);
  if (found === undefined) throw new Error(`no ${key} in ${objects.map(objectKey).join(', ')}`);
  return found;
}

function podAnnotation(o: Manifest): string | undefined {
  return (o as Deployment).spec?.template.metadata?.annotations?.[checksumAnnotation];
}

function env(d: Deployment | StatefulSet | Job): Record<string, unknown> {
  const c = d.spec?.template.spec?.containers[0];
  return Object.fromEntries((c?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
}

describe('operator desired state', () => {
  // The exact objects for the two example shapes are recorded in test/fixtures/k8s;
  // UPDATE_FIXTURES=1 rewrites them after an intended change.
  for (const [fixture, spec] of [
    ['desired-minimal.yaml', {}],
    [
      'desired-replicated.yaml',
      {
        gateway: { replicas: 3, serviceType: 'LoadBalancer' },
        clickhouse: { managed: { shards: 2, replicas: 2, storage: { size: '100Gi', storageClassName: 'fast' } } },
      },
    ],
    [
      'desired-external.yaml',
      {
        clickhouse: { mode: 'external', external: { url: 'https://ch.example:8443', cluster: 'main', secretRef: { name: 'ch' } } },
        apiKeys: { secretName: 'keys' },
        api: { replicas: 1 },
      },
    ],
  ] as const) {
    it(`builds exactly the recorded objects (${fixture})`, () => {
      const objects = desiredObjects(stackOf('demo', spec), inputs);
      const path = join(fixtures, fixture);
      if (process.env['UPDATE_FIXTURES'] === '1') writeFileSync(path, objects.map((o) => stringify(o)).join('---\n'));
      const recorded = readFileSync(path, 'utf8')
        .split(/^---$/m)
        .map((doc) => parse(doc) as unknown);
      expect(JSON.parse(JSON.stringify(objects))).to.deep.equal(recorded);
    });
  }

  it('minimal stack: Secret, single ClickHouse, migrate Job, gateway and API with Services and PDBs', () => {
    const objects = desiredObjects(stackOf('demo', {}), inputs);
    expect(objects.map(objectKey).map((k) => k.replace(/^(Job\/demo-migrate-)[0-9a-f]{10}$/, '$1<hash>'))).to.deep.equal([
      'Secret/demo-credentials',
      'ConfigMap/demo-clickhouse-config',
      'Service/demo-clickhouse',
      'Service/demo-clickhouse-headless',
      'StatefulSet/demo-clickhouse-s0',
      'Job/demo-migrate-<hash>',
      'StatefulSet/demo-gateway',
      'Service/demo-gateway',
      'Deployment/demo-api',
      'Service/demo-api',
      'PodDisruptionBudget/demo-gateway',
      'PodDisruptionBudget/demo-api',
    ]);
  });

  it('every child has the stack as controller owner, the standard labels and the namespace', () => {
    const objects = desiredObjects(stackOf('demo', { clickhouse: { managed: { shards: 2 } } }), inputs);
    for (const o of objects) {
      expect(o.metadata?.namespace, objectKey(o)).to.equal('obs');
      expect(o.metadata?.ownerReferences, objectKey(o)).to.deep.equal([
        { apiVersion: 'tenantry.dev/v1alpha1', kind: 'ObservabilityStack', name: 'demo', uid: 'uid-demo', controller: true, blockOwnerDeletion: true },
      ]);
      expect(o.metadata?.labels, objectKey(o)).to.include({
        'app.kubernetes.io/instance': 'demo',
        'app.kubernetes.io/part-of': 'tenantry',
        'app.kubernetes.io/managed-by': 'tenantry-operator',
        'tenantry.dev/stack': 'demo',
      });
    }
  });

  it('gateway: ports, target, readiness over gRPC health on the OTLP/gRPC port, liveness on /healthz, service type and body limit from spec', () => {
    const objects = desiredObjects(
      stackOf('demo', { gateway: { replicas: 4, ports: { otlpHttp: 14318, otlpGrpc: 14317 }, serviceType: 'NodePort', maxRequestBytes: 1048576 } }),
      inputs,
    );
    const d = find(objects, 'StatefulSet/demo-gateway') as StatefulSet;
    const c = d.spec?.template.spec?.containers[0];
    expect(d.spec?.replicas).to.equal(4);
    expect(c?.args).to.deep.equal(['gateway']);
    expect(c?.ports?.map((p) => p.containerPort)).to.deep.equal([14318, 14317]);
    // Kubernetes' gRPC probe takes a port number, not a name.
    expect(c?.readinessProbe).to.deep.equal({ grpc: { port: 14317 }, periodSeconds: 5, failureThreshold: 2 });
    expect(c?.livenessProbe?.httpGet).to.deep.equal({ path: '/healthz', port: 'otlp-http' });
    expect(env(d)).to.include({
      TENANTRY_OTLP_HTTP_PORT: '14318',
      TENANTRY_OTLP_GRPC_PORT: '14317',
      TENANTRY_MAX_REQUEST_BYTES: '1048576',
      TENANTRY_API_KEYS_FILE: '/etc/tenantry/keys/api-keys.json',
    });
    const s = find(objects, 'Service/demo-gateway') as Service;
    expect(s.spec?.type).to.equal('NodePort');
    expect(s.spec?.ports?.map((p) => [p.name, p.port])).to.deep.equal([
      ['otlp-http', 14318],
      ['otlp-grpc', 14317],
    ]);
  });

  it('api: port 8080, its resources, no PDB for a single replica', () => {
    const objects = desiredObjects(stackOf('demo', { api: { replicas: 1, resources: { requests: { cpu: 2, memory: '1Gi' } } } }), inputs);
    const d = find(objects, 'Deployment/demo-api') as Deployment;
    expect(d.spec?.template.spec?.containers[0]?.resources).to.deep.equal({ requests: { cpu: '2', memory: '1Gi' } });
    expect((find(objects, 'Service/demo-api') as Service).spec?.ports?.[0]?.port).to.equal(8080);
    expect(objects.map(objectKey)).not.to.include('PodDisruptionBudget/demo-api');
    expect(env(d)['TENANTRY_MEMORY_LIMIT_BYTES'], "the statement bounds follow the pod's memory limit").to.deep.equal({
      resourceFieldRef: { containerName: 'api', resource: 'limits.memory' },
    });
  });

  it('generated Secret holds the admin key, and the key file holds only its digest', () => {
    const secret = find(desiredObjects(stackOf('demo', {}), inputs), 'Secret/demo-credentials') as Secret;
    const data = Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
    expect(data).to.deep.equal({
      'admin-key': 'admin-key-value',
      'api-keys.json': generatedKeysFile('admin-key-value'),
      'clickhouse-password': 'ch-password',
      'clickhouse-ddl-password': 'ch-ddl',
      'clickhouse-interserver-password': 'ch-interserver',
      'clickhouse-cluster-secret': 'ch-secret',
      'clickhouse-keeper-password': 'keeper-pw',
    });
    expect(data['api-keys.json']).not.to.contain('admin-key-value');
  });

  it('replicated ClickHouse: one StatefulSet per shard, Keeper of 3, macros and remote servers, cluster env', () => {
    const objects = desiredObjects(stackOf('demo', { clickhouse: { managed: { shards: 2, replicas: 3, storage: { size: '50Gi' } } } }), inputs);
    const shards = objects.filter((o): o is StatefulSet => o.kind === 'StatefulSet' && o.metadata?.name?.startsWith('demo-clickhouse-s') === true);
    expect(shards.map((s) => [s.metadata?.name, s.spec?.replicas])).to.deep.equal([
      ['demo-clickhouse-s0', 3],
      ['demo-clickhouse-s1', 3],
    ]);
    expect(shards[0]?.spec?.volumeClaimTemplates?.[0]?.spec?.resources?.requests).to.deep.equal({ storage: '50Gi' });
    expect((find(objects, 'StatefulSet/demo-clickhouse-keeper') as StatefulSet).spec?.replicas).to.equal(3);
    const xml = (find(objects, 'ConfigMap/demo-clickhouse-config') as ConfigMap).data?.['tenantry.xml'] ?? '';
    expect(xml).to.contain('<shard from_env="CLICKHOUSE_SHARD"/>');
    expect(xml).to.contain('<host>demo-clickhouse-s1-2.demo-clickhouse-headless.obs.svc</host>');
    expect(xml).to.contain('<host>demo-clickhouse-keeper-2.demo-clickhouse-keeper.obs.svc</host>');
    expect(env(find(objects, 'Deployment/demo-api'))).to.include({
      TENANTRY_CLICKHOUSE_CLUSTER: 'tenantry',
      TENANTRY_CLICKHOUSE_URL: 'http://demo-clickhouse.obs.svc:8123',
    });
    expect(objects.map(objectKey)).to.include.members([
      'PodDisruptionBudget/demo-clickhouse-s0',
      'PodDisruptionBudget/demo-clickhouse-s1',
      'PodDisruptionBudget/demo-clickhouse-keeper',
    ]);
  });

  it('single ClickHouse server: no Keeper, no cluster', () => {
    const objects = desiredObjects(stackOf('demo', {}), inputs);
    expect(objects.map(objectKey)).not.to.include('StatefulSet/demo-clickhouse-keeper');
    expect(env(find(objects, 'Deployment/demo-api'))).not.to.have.property('TENANTRY_CLICKHOUSE_CLUSTER');
  });

  it('external ClickHouse with own key Secret: no ClickHouse objects, no generated Secret, credentials from the named Secrets', () => {
    const objects = desiredObjects(
      stackOf('demo', {
        clickhouse: { mode: 'external', external: { url: 'https://ch:8443', secretRef: { name: 'ch', userKey: 'u' } } },
        apiKeys: { secretName: 'keys', keysFileKey: 'keys.yaml' },
      }),
      inputs,
    );
    expect(objects.filter((o) => o.metadata?.labels?.['app.kubernetes.io/name'] === 'clickhouse')).to.deep.equal([]);
    expect(objects.map(objectKey)).not.to.include('Secret/demo-credentials');
    const d = find(objects, 'StatefulSet/demo-gateway') as StatefulSet;
    expect(env(d)).to.deep.include({
      TENANTRY_CLICKHOUSE_URL: 'https://ch:8443',
      TENANTRY_CLICKHOUSE_USER: { secretKeyRef: { name: 'ch', key: 'u' } },
      TENANTRY_CLICKHOUSE_PASSWORD: { secretKeyRef: { name: 'ch', key: 'password' } },
      TENANTRY_API_KEYS_FILE: '/etc/tenantry/keys/keys.yaml',
    });
    expect(d.spec?.template.spec?.volumes?.[0]?.secret).to.deep.equal({ secretName: 'keys', items: [{ key: 'keys.yaml', path: 'keys.yaml' }] });
  });

  it('config checksums: a config or Secret change rolls the pods, an unrelated change does not', () => {
    const base = desiredObjects(stackOf('demo', {}), inputs);
    const sum = (objects: Manifest[], key: string): string | undefined => podAnnotation(find(objects, key));
    const limit = desiredObjects(stackOf('demo', { gateway: { maxRequestBytes: 2048 } }), inputs);
    expect(sum(limit, 'StatefulSet/demo-gateway')).not.to.equal(sum(base, 'StatefulSet/demo-gateway'));
    expect(sum(limit, 'Deployment/demo-api')).to.equal(sum(base, 'Deployment/demo-api'));
    const rotated = desiredObjects(stackOf('demo', {}), { ...inputs, referencedSecretsChecksum: 'other' });
    expect(sum(rotated, 'Deployment/demo-api')).not.to.equal(sum(base, 'Deployment/demo-api'));
    const replicas = desiredObjects(stackOf('demo', { gateway: { replicas: 5 } }), inputs);
    expect(sum(replicas, 'StatefulSet/demo-gateway')).to.equal(sum(base, 'StatefulSet/demo-gateway'));
  });

  it('migration Job: target migrate with retention; a new Job name when retention or image changes, the same otherwise', () => {
    const job = (spec: unknown): Job => desiredObjects(stackOf('demo', spec), inputs).find((o) => o.kind === 'Job') as Job;
    const base = job({ retention: { logsDays: 7 } });
    expect(base.spec?.template.spec?.containers[0]?.args).to.deep.equal(['migrate']);
    expect(env(base)).to.include({ TENANTRY_LOGS_RETENTION_DAYS: '7', TENANTRY_TRACES_RETENTION_DAYS: '30', TENANTRY_METRICS_RETENTION_DAYS: '90' });
    expect(job({ retention: { logsDays: 7 } }).metadata?.name).to.equal(base.metadata?.name);
    expect(job({ retention: { logsDays: 8 } }).metadata?.name).not.to.equal(base.metadata?.name);
    expect(job({ retention: { logsDays: 7 }, image: 'x:2' }).metadata?.name).not.to.equal(base.metadata?.name);
    expect(job({ retention: { logsDays: 7 }, gateway: { replicas: 9 } }).metadata?.name).to.equal(base.metadata?.name);
  });
});
