// The testcontainers suites' containers come from the operator's own
// desired-state functions (test/containers/): these tests check, without a
// Docker engine, that the translation yields a runnable, self-consistent
// set: every host the ClickHouse and Keeper configuration files name is the
// network alias of exactly one container of the right kind, environment is
// fully resolved, the Tenantry image is the one built from the Dockerfile,
// and a 2×2 → 3×2 change adds a shard without renaming anything.
import { expect } from 'chai';
import type { GeneratedCredentials } from '../../../operator/desired/credentials-secret.ts';
import type { Manifest } from '../../../operator/desired/manifest-types.ts';
import type { ContainerDefinition } from '../../containers/pod-containers.ts';
import { containersOf, expandReferences, resolveEnv } from '../../containers/pod-containers.ts';
import { clusterStack, externalSecret, keysSecret, ofComponent, serverStack, stackContainers, suiteKeys } from '../../containers/stack-definitions.ts';

const credentials: GeneratedCredentials = {
  adminKey: 'generated-admin-key-0123',
  clickhousePassword: 'app-pw',
  clickhouseDdlPassword: 'ddl-pw',
  interserverPassword: 'interserver-pw',
  clusterSecret: 'cluster-secret',
  keeperPassword: 'keeper-pw',
};
const keys = suiteKeys(() => '0123456789abcdef');
const image = 'tenantry-under-test:latest';
const cluster = (shards: number, replicas: number): ContainerDefinition[] =>
  stackContainers(clusterStack(shards, replicas), credentials, [keysSecret(keys)], image);

/** Every `<host>`/`<hostname>` a configuration file names. */
function hostsIn(xml: string): string[] {
  return [...xml.matchAll(/<(?:host|hostname)>([^<]+)<\/(?:host|hostname)>/g)].map((m) => m[1] ?? '');
}

function holdersOf(containers: readonly ContainerDefinition[], alias: string): ContainerDefinition[] {
  return containers.filter((c) => c.aliases.includes(alias));
}

describe("testcontainers definitions from the operator's desired state", () => {
  describe('a 2×2 cluster with 3 Keepers', () => {
    const all = cluster(2, 2);
    const servers = ofComponent(all, 'clickhouse');
    const keepers = ofComponent(all, 'clickhouse-keeper');

    it('runs 4 ClickHouse servers, 3 Keepers, the migrate Job, a gateway and an API', () => {
      expect(servers.map((c) => c.name)).to.deep.equal(['tt-clickhouse-s0-0', 'tt-clickhouse-s0-1', 'tt-clickhouse-s1-0', 'tt-clickhouse-s1-1']);
      expect(keepers.map((c) => c.name)).to.deep.equal(['tt-clickhouse-keeper-0', 'tt-clickhouse-keeper-1', 'tt-clickhouse-keeper-2']);
      expect(ofComponent(all, 'migrate').map((c) => c.runsToCompletion)).to.deep.equal([true]);
      expect(ofComponent(all, 'gateway')).to.have.length(1);
      expect(ofComponent(all, 'api')).to.have.length(1);
    });

    it("every host the operator's config files name is the alias of exactly one container of the right kind", () => {
      const serverConfig = servers[0]?.files.find((f) => f.path === '/etc/clickhouse-server/config.d/tenantry.xml')?.content ?? '';
      const keeperConfig = keepers[0]?.files.find((f) => f.path === '/etc/clickhouse-keeper/keeper.xml')?.content ?? '';
      const serverHosts = hostsIn(serverConfig);
      expect(serverHosts).to.have.length(4 + 3);
      for (const host of serverHosts) {
        const holders = holdersOf(all, host);
        expect(holders, host).to.have.length(1);
        expect(holders[0]?.component).to.be.oneOf(['clickhouse', 'clickhouse-keeper']);
      }
      for (const host of hostsIn(keeperConfig)) expect(holdersOf(keepers, host), host).to.have.length(1);
      for (const c of [...servers, ...keepers])
        expect(
          c.files.every((f) => f.content === (c.component === 'clickhouse' ? servers[0] : keepers[0])?.files.find((g) => g.path === f.path)?.content),
        ).to.equal(true);
    });

    it('resolves every environment variable as the kubelet would: pod name, shard, secrets, $(VAR) references', () => {
      for (const c of [...servers, ...keepers]) expect(c.env['POD_NAME']).to.equal(c.name);
      expect(servers.map((c) => c.env['CLICKHOUSE_SHARD'])).to.deep.equal(['0', '0', '1', '1']);
      expect(servers[0]?.env['CLICKHOUSE_KEEPER_IDENTITY']).to.equal('tenantry:keeper-pw');
      expect(servers[0]?.env['CLICKHOUSE_CLUSTER_SECRET']).to.equal('cluster-secret');
      for (const c of all) for (const [k, v] of Object.entries(c.env)) expect(v, `${c.name} ${k}`).to.not.match(/\$\([A-Z_]+\)/);
      expect(keepers[2]?.entrypoint?.join(' ')).to.contain('clickhouse keeper --config-file=/etc/clickhouse-keeper/keeper.xml');
    });

    it('points migrate, gateway and API at the client Service every server answers, ON CLUSTER', () => {
      for (const c of [...ofComponent(all, 'migrate'), ...ofComponent(all, 'gateway'), ...ofComponent(all, 'api')]) {
        const host = new URL(c.env['TENANTRY_CLICKHOUSE_URL'] ?? '').hostname;
        expect(
          holdersOf(all, host).map((h) => h.name),
          c.name,
        ).to.deep.equal(servers.map((s) => s.name));
        expect(c.env['TENANTRY_CLICKHOUSE_CLUSTER'], c.name).to.equal('tenantry');
        expect(c.image).to.equal(image);
        expect(c.user).to.equal('1000');
      }
      expect(ofComponent(all, 'migrate')[0]?.env['TENANTRY_CLICKHOUSE_USER']).to.equal('tenantry_ddl');
      expect(ofComponent(all, 'gateway')[0]?.env['TENANTRY_CLICKHOUSE_USER']).to.equal('tenantry');
    });

    it('mounts the key file, gives the gateway its write-ahead log claim as scratch, and probes readiness on /readyz (the gateway: gRPC health)', () => {
      const gateway = ofComponent(all, 'gateway')[0];
      const file = gateway?.files.find((f) => f.path === gateway.env['TENANTRY_API_KEYS_FILE']);
      expect((JSON.parse(file?.content ?? '[]') as unknown[]).length).to.equal(4);
      expect(gateway?.emptyDirs).to.deep.equal([gateway?.env['TENANTRY_WAL_DIR']]);
      // The gateway's readiness probe is gRPC health, which Docker cannot ask: its listening ports are waited for.
      expect(gateway?.ready).to.equal(undefined);
      expect(ofComponent(all, 'api')[0]?.ready).to.deep.equal({ path: '/readyz', port: 8080 });
      expect(ofComponent(all, 'clickhouse-keeper')[0]?.ready).to.deep.equal({ path: '/ready', port: 9182 });
    });
  });

  it('a 2×2 → 3×2 change adds shard s2 and keeps every existing name and alias', () => {
    const before = cluster(2, 2);
    const after = cluster(3, 2);
    const names = (cs: readonly ContainerDefinition[]): string[] => ofComponent(cs, 'clickhouse').map((c) => c.name);
    expect(names(after)).to.deep.equal([...names(before), 'tt-clickhouse-s2-0', 'tt-clickhouse-s2-1']);
    for (const c of ofComponent(before, 'clickhouse')) expect(after.find((a) => a.name === c.name)?.aliases).to.deep.equal(c.aliases);
    const config = ofComponent(after, 'clickhouse')[0]?.files[0]?.content ?? '';
    expect((config.match(/<shard>/g) ?? []).length).to.equal(3);
    expect(ofComponent(after, 'clickhouse').map((c) => c.env['CLICKHOUSE_SHARD'])).to.deep.equal(['0', '0', '1', '1', '2', '2']);
  });

  it("a stack on an external server: no ClickHouse containers, the user Secret's credentials, no cluster", () => {
    const all = stackContainers(serverStack('http://clickhouse-server:8123'), credentials, [keysSecret(keys), externalSecret('tenantry', 'server-pw')], image);
    expect(all.map((c) => c.component)).to.deep.equal(['migrate', 'gateway', 'api']);
    for (const c of all) {
      expect(c.env['TENANTRY_CLICKHOUSE_URL']).to.equal('http://clickhouse-server:8123');
      expect(c.env['TENANTRY_CLICKHOUSE_PASSWORD']).to.equal('server-pw');
      expect(c.env).to.not.have.property('TENANTRY_CLICKHOUSE_CLUSTER');
    }
  });

  describe('the pod translation', () => {
    it('expands $(VAR) from earlier variables, keeps unknown references, and reads $$ as $', () => {
      expect(expandReferences('a:$(X):$(Y):$$(X)', { X: '1' })).to.equal('a:1:$(Y):$(X)');
      expect(
        resolveEnv(
          [
            { name: 'A', value: 'x' },
            { name: 'B', value: '$(A)-$(C)' },
            { name: 'C', value: 'c' },
          ],
          [],
          { name: 'p', namespace: 'n' },
        ),
      ).to.deep.equal({ A: 'x', B: 'x-$(C)', C: 'c' });
    });

    it('mounts Secret items (base64 data) and ConfigMap subPaths, and refuses a missing object', () => {
      const objects = [
        { kind: 'Secret', metadata: { name: 's', namespace: 'n' }, data: { k: Buffer.from('secret text').toString('base64') } },
        { kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' }, data: { 'a.xml': '<a/>', 'b.xml': '<b/>' } },
        {
          kind: 'Deployment',
          metadata: { name: 'd', namespace: 'n' },
          spec: {
            replicas: 2,
            template: {
              metadata: { labels: { app: 'd' } },
              spec: {
                containers: [
                  {
                    name: 'm',
                    image: 'i',
                    volumeMounts: [
                      { name: 'sv', mountPath: '/s' },
                      { name: 'cv', mountPath: '/etc/a.xml', subPath: 'a.xml' },
                      { name: 'cv', mountPath: '/all/' },
                    ],
                  },
                ],
                volumes: [
                  { name: 'sv', secret: { secretName: 's', items: [{ key: 'k', path: 'file' }] } },
                  { name: 'cv', configMap: { name: 'c' } },
                ],
              },
            },
          },
        },
        { kind: 'Service', metadata: { name: 'svc', namespace: 'n' }, spec: { selector: { app: 'd' } } },
      ] as unknown as Manifest[];
      const [first, second] = containersOf(objects);
      expect(first?.files).to.deep.equal([
        { path: '/s/file', content: 'secret text' },
        { path: '/etc/a.xml', content: '<a/>' },
        { path: '/all/a.xml', content: '<a/>' },
        { path: '/all/b.xml', content: '<b/>' },
      ]);
      expect([first?.name, second?.name]).to.deep.equal(['d-0', 'd-1']);
      expect(second?.aliases).to.deep.equal(['svc.n.svc', 'svc']);
      expect(() => containersOf(objects.slice(1))).to.throw('no Secret/s');
    });
  });
});
