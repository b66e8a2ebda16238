// The managed ClickHouse cluster's day-two settings on the rendered objects
// (issue 14; docs/operator.md, "Day two"), and what a count change renders.
import { expect } from 'chai';
import type { ConfigMap, Deployment, Job, Manifest, PodDisruptionBudget, StatefulSet } from '../../../../operator/desired/manifest-types.ts';
import { desiredObjects, objectKey } from '../../../../operator/desired/desired-state.ts';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { quantityBytes, systemTablesOfMigrate, withMemoryLimit } from '../../../../operator/desired/managed-clickhouse.ts';
import { inputs, stackOf } from './stack-fixtures.ts';

const render = (managed: Record<string, unknown>): Manifest[] => desiredObjects(stackOf('demo', { clickhouse: { managed } }), inputs);
function get<T extends Manifest>(objects: Manifest[], key: string, _kind?: T): T {
  const o = objects.find((x) => objectKey(x) === key);
  if (o === undefined) throw new Error(`no ${key}`);
  return o as T;
}
const container = (o: StatefulSet | Deployment | Job): NonNullable<NonNullable<StatefulSet['spec']>['template']['spec']>['containers'][number] => {
  const c = o.spec?.template.spec?.containers[0];
  if (c === undefined) throw new Error('no container');
  return c;
};
const envOf = (o: StatefulSet | Deployment | Job): Record<string, unknown> =>
  Object.fromEntries((container(o).env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
const config = (objects: Manifest[], file: string): string => get<ConfigMap>(objects, 'ConfigMap/demo-clickhouse-config').data?.[file] ?? '';
const keeperXml = (objects: Manifest[]): string => get<ConfigMap>(objects, 'ConfigMap/demo-clickhouse-keeper-config').data?.['keeper.xml'] ?? '';
const jobName = (objects: Manifest[]): string => objects.find((o) => o.kind === 'Job')?.metadata?.name ?? '';

describe('managed ClickHouse day two (rendered objects)', () => {
  const cluster = render({ shards: 2, replicas: 2 });

  it('memory: the limit defaults to the request (servers and Keepers), an explicit limit stays, caches sized from it', () => {
    expect(container(get<StatefulSet>(cluster, 'StatefulSet/demo-clickhouse-s0')).resources).to.deep.equal({
      requests: { cpu: '1', memory: '4Gi' },
      limits: { memory: '4Gi' },
    });
    expect(withMemoryLimit({ requests: { memory: '2Gi' }, limits: { memory: '3Gi' } }).limits).to.deep.equal({ memory: '3Gi' });
    expect(withMemoryLimit({ requests: { cpu: '1' } })).to.deep.equal({ requests: { cpu: '1' } });
    expect(container(get<StatefulSet>(cluster, 'StatefulSet/demo-clickhouse-keeper')).resources?.limits?.['memory']).to.equal('1Gi');
    const xml = config(cluster, 'tenantry.xml');
    expect(xml).to.contain('<max_server_memory_usage_to_ram_ratio>0.8</max_server_memory_usage_to_ram_ratio>');
    expect(xml).to.contain(`<mark_cache_size>${(4 * 2 ** 30) / 8}</mark_cache_size>`);
    expect([quantityBytes('512Mi'), quantityBytes('1G'), quantityBytes('1.5Gi'), quantityBytes('lots')]).to.deep.equal([
      512 * 2 ** 20,
      1e9,
      1.5 * 2 ** 30,
      undefined,
    ]);
  });

  it('Keeper is ready on its HTTP control /ready (in the quorum), not when its client port opens', () => {
    const keeper = container(get<StatefulSet>(cluster, 'StatefulSet/demo-clickhouse-keeper'));
    expect(keeper.readinessProbe).to.deep.equal({ httpGet: { path: '/ready', port: 'http-control' }, periodSeconds: 5 });
    expect(keeper.ports?.map((p) => p.name)).to.include('http-control');
    expect(keeperXml(cluster)).to.contain('<http_control><port>9182</port><readiness><endpoint>/ready</endpoint></readiness></http_control>');
  });

  it('replicas of a shard never share a node, nor do Keepers (required), and both spread over zones (preferred)', () => {
    const s1 = get<StatefulSet>(cluster, 'StatefulSet/demo-clickhouse-s1').spec?.template.spec;
    const selector = get<StatefulSet>(cluster, 'StatefulSet/demo-clickhouse-s1').spec?.selector.matchLabels;
    expect(selector).to.include({ 'tenantry.dev/shard': '1' });
    expect(s1?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution).to.deep.equal([
      { labelSelector: { matchLabels: selector }, topologyKey: 'kubernetes.io/hostname' },
    ]);
    expect(s1?.topologySpreadConstraints?.[0]).to.include({ topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', maxSkew: 1 });
    const keeper = get<StatefulSet>(cluster, 'StatefulSet/demo-clickhouse-keeper').spec;
    expect(keeper?.template.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.[0]?.labelSelector?.matchLabels).to.deep.equal(
      keeper?.selector.matchLabels,
    );
  });

  it('listens on :: and 0.0.0.0 with listen_try, servers and Keepers', () => {
    for (const xml of [config(cluster, 'tenantry.xml'), keeperXml(cluster), config(render({}), 'tenantry.xml')]) {
      expect(xml).to.contain('<listen_host>::</listen_host>\n  <listen_host>0.0.0.0</listen_host>\n  <listen_try>1</listen_try>');
    }
  });

  it('authenticates inside the cluster: cluster secret (no password in remote_servers), interserver credentials, Keeper digest identity', () => {
    const xml = config(cluster, 'tenantry.xml');
    expect(xml).to.contain('<secret from_env="CLICKHOUSE_CLUSTER_SECRET"/>');
    expect(xml).not.to.match(/<replica>[^\n]*<password/);
    expect(xml).to.contain('<interserver_http_credentials>\n    <user>interserver</user>\n    <password from_env="CLICKHOUSE_INTERSERVER_PASSWORD"/>');
    expect(xml).to.contain('<identity from_env="CLICKHOUSE_KEEPER_IDENTITY"/>');
    const env = envOf(get<StatefulSet>(cluster, 'StatefulSet/demo-clickhouse-s0'));
    expect(env).to.include({ CLICKHOUSE_KEEPER_IDENTITY: 'tenantry:$(CLICKHOUSE_KEEPER_PASSWORD)', CLICKHOUSE_SKIP_USER_SETUP: '1' });
    expect(env['CLICKHOUSE_CLUSTER_SECRET']).to.deep.equal({ secretKeyRef: { name: 'demo-credentials', key: 'clickhouse-cluster-secret' } });
    expect(env).not.to.have.property('CLICKHOUSE_PASSWORD');
  });

  it('a least-privilege application user for the gateway and API, a DDL user for the migrate Job, default only from inside the pod', () => {
    const users = config(cluster, 'tenantry-users.xml');
    expect(users).to.contain('<query>GRANT SELECT, INSERT, ALTER MODIFY TTL, ALTER MATERIALIZE TTL ON tenantry.*</query>');
    expect(users).to.contain('<query>GRANT CLUSTER, CREATE TEMPORARY TABLE ON *.*</query>');
    expect(users).to.contain('<query>GRANT ALL ON tenantry.*</query>');
    expect(users).to.contain('<query>GRANT CLUSTER, REMOTE, CREATE TEMPORARY TABLE, SYSTEM DROP REPLICA ON *.*</query>');
    // The image's config.xml has select_from_system_db_requires_grant: every system table migrate reads (but tables, columns, one) is granted.
    for (const t of ['zookeeper', 'clusters', 'replicas']) expect(users).to.contain(`<query>GRANT SELECT ON system.${t}</query>`);
    expect(users).to.contain('<networks replace="replace"><ip>::1</ip><ip>127.0.0.1</ip></networks>');
    expect(users).to.contain('<distributed_foreground_insert>1</distributed_foreground_insert>');
    expect(envOf(get<StatefulSet>(cluster, 'StatefulSet/demo-gateway'))).to.include({ TENANTRY_CLICKHOUSE_USER: 'tenantry' });
    const job = get<Job>(cluster, `Job/${jobName(cluster)}`);
    expect(envOf(job)).to.include({ TENANTRY_CLICKHOUSE_USER: 'tenantry_ddl' });
    expect(envOf(job)['TENANTRY_CLICKHOUSE_PASSWORD']).to.deep.equal({ secretKeyRef: { name: 'demo-credentials', key: 'clickhouse-ddl-password' } });
  });

  it('every system table the schema code and the migrate Job read is one every user may read or one the DDL user is granted', () => {
    const root = join(import.meta.dirname, '..', '..', '..', '..');
    const schemaDir = join(root, 'src', 'clickhouse', 'schema');
    const sources = [...readdirSync(schemaDir).map((f) => join(schemaDir, f)), join(root, 'operator', 'desired', 'migration-job.ts')];
    const read = new Set(sources.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/\bsystem\.([a-z_]+)/g)].map((m) => m[1] ?? '')));
    // Readable without a grant under select_from_system_db_requires_grant (ClickHouse's config.xml comment names them).
    const open = new Set(['tables', 'columns', 'databases', 'one']);
    expect([...read].filter((t) => !open.has(t) && !(systemTablesOfMigrate as readonly string[]).includes(t))).to.deep.equal([]);
    expect(read).to.include('zookeeper');
  });

  it('the pod name comes from the downward API for {replica} and the Keeper server id', () => {
    expect(envOf(get<StatefulSet>(cluster, 'StatefulSet/demo-clickhouse-s0'))['POD_NAME']).to.deep.equal({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(config(cluster, 'tenantry.xml')).to.contain('<replica from_env="POD_NAME"/>').and.not.to.contain('HOSTNAME');
    const keeper = container(get<StatefulSet>(cluster, 'StatefulSet/demo-clickhouse-keeper'));
    expect(keeper.command?.[2]).to.contain('${POD_NAME##*-}');
    expect(envOf(get<StatefulSet>(cluster, 'StatefulSet/demo-clickhouse-keeper'))['POD_NAME']).to.deep.equal({ fieldRef: { fieldPath: 'metadata.name' } });
  });

  it('1x1 → 2x2 (refused by the CRD, see the integration test) would add Keepers, a second shard and a new Job', () => {
    const single = render({});
    const two = render({ shards: 2, replicas: 2 });
    const added = two.map(objectKey).filter((k) => !single.map(objectKey).includes(k) && !k.startsWith('Job/'));
    expect(added.sort()).to.deep.equal([
      'ConfigMap/demo-clickhouse-keeper-config',
      'PodDisruptionBudget/demo-clickhouse-keeper',
      'PodDisruptionBudget/demo-clickhouse-s0',
      'PodDisruptionBudget/demo-clickhouse-s1',
      'Service/demo-clickhouse-keeper',
      'StatefulSet/demo-clickhouse-keeper',
      'StatefulSet/demo-clickhouse-s1',
    ]);
    expect(jobName(two)).not.to.equal(jobName(single));
  });

  it('2x2 → 3x2: a third shard StatefulSet and budget, its hosts in remote_servers, every server rolled by the config checksum, a new migrate Job', () => {
    const three = render({ shards: 3, replicas: 2 });
    const added = three.map(objectKey).filter((k) => !cluster.map(objectKey).includes(k));
    expect(added.filter((k) => !k.startsWith('Job/'))).to.deep.equal(['StatefulSet/demo-clickhouse-s2', 'PodDisruptionBudget/demo-clickhouse-s2']);
    expect(get<PodDisruptionBudget>(three, 'PodDisruptionBudget/demo-clickhouse-s2').spec?.maxUnavailable).to.equal(1);
    expect(config(three, 'tenantry.xml')).to.contain('<replica><host>demo-clickhouse-s2-1.demo-clickhouse-headless.obs.svc</host><port>9000</port></replica>');
    const annotation = (o: Manifest[]): unknown => get<StatefulSet>(o, 'StatefulSet/demo-clickhouse-s0').spec?.template.metadata?.annotations;
    expect(annotation(three)).not.to.deep.equal(annotation(cluster));
    expect(jobName(three)).not.to.equal(jobName(cluster));
    // Replicas only (2x2 → 2x3): a new Job too, so the new replicas get the schema.
    expect(jobName(render({ shards: 2, replicas: 3 }))).not.to.equal(jobName(cluster));
    expect(jobName(render({ shards: 2, replicas: 2 }))).to.equal(jobName(cluster));
  });

  it("2x3 → 2x2: the removed replica's volume goes with it (a later scale-up starts it empty, not read-only on metadata dropped from Keeper); deleting the stack keeps volumes", () => {
    for (const s of ['s0', 's1']) {
      expect(get<StatefulSet>(cluster, `StatefulSet/demo-clickhouse-${s}`).spec?.persistentVolumeClaimRetentionPolicy).to.deep.equal({
        whenScaled: 'Delete',
        whenDeleted: 'Retain',
      });
    }
  });

  it("the migrate Job of a cluster first waits until every server runs the new topology's config (a server still on the old remote_servers would hide the new hosts)", () => {
    const three = render({ shards: 3, replicas: 2 });
    const spec = get<Job>(three, `Job/${jobName(three)}`).spec?.template.spec;
    const wait = spec?.initContainers?.[0];
    expect(wait?.image).to.equal(container(get<StatefulSet>(three, 'StatefulSet/demo-clickhouse-s0')).image);
    const env = Object.fromEntries((wait?.env ?? []).map((e) => [e.name, e.value ?? e.valueFrom]));
    expect(env).to.include({ EXPECTED_HOSTS: '6', CLUSTER_NAME: 'tenantry', CLICKHOUSE_USER: 'tenantry_ddl' });
    expect((wait?.env?.find((e) => e.name === 'CLUSTER_HOSTS')?.value ?? '').split(' '))
      .to.have.length(6)
      .and.include('demo-clickhouse-s2-1.demo-clickhouse-headless.obs.svc');
    expect(env['CLICKHOUSE_PASSWORD']).to.deep.equal({ secretKeyRef: { name: 'demo-credentials', key: 'clickhouse-ddl-password' } });
    // The cluster name is bound, and each host must list exactly the expected servers.
    expect(wait?.command?.[2]).to.contain('WHERE cluster = {c:String}').and.contain('[ "$n" = "$EXPECTED_HOSTS" ]').and.contain('exit 1');
    expect(wait?.securityContext).to.include({ runAsNonRoot: true, readOnlyRootFilesystem: true });
    expect(spec?.volumes).to.deep.equal([{ name: 'tmp', emptyDir: {} }]);
    // One server, or an external ClickHouse: nothing to wait for.
    const single = render({});
    expect(get<Job>(single, `Job/${jobName(single)}`).spec?.template.spec?.initContainers).to.equal(undefined);
  });
});
