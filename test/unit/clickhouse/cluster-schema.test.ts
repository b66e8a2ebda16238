import { expect } from 'chai';
import { convergeStatements, dropReplicaStatements, onClusterIfNotExists, waitForCluster } from '../../../src/clickhouse/schema/cluster-schema.ts';
import { migrationsTable } from '../../../src/clickhouse/schema/migrations-table.ts';
import type { Store } from '../../../src/clickhouse/store.ts';

const local = (host: string, name: string): { host: string; name: string; engine: string; create: string } => ({
  host,
  name,
  engine: 'ReplicatedMergeTree',
  create: `CREATE TABLE obs.${name} (\`tenant_id\` String) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/obs/${name}', '{replica}') ORDER BY tenant_id`,
});
const front = (host: string, name: string): { host: string; name: string; engine: string; create: string } => ({
  host,
  name,
  engine: 'Distributed',
  create: `CREATE TABLE obs.${name} (\`tenant_id\` String) ENGINE = Distributed('tenantry', 'obs', '${name}_local', rand())`,
});
const mv = (host: string): { host: string; name: string; engine: string; create: string } => ({
  host,
  name: 'logs_usage_mv',
  engine: 'MaterializedView',
  create: 'CREATE MATERIALIZED VIEW obs.logs_usage_mv TO obs.usage_daily_local (`tenant_id` String) AS SELECT tenant_id FROM obs.logs_local',
});
const view = (host: string): { host: string; name: string; engine: string; create: string } => ({
  host,
  name: 'tenant_retention',
  engine: 'View',
  create: 'CREATE VIEW obs.tenant_retention (`tenant_id` String) AS SELECT tenant_id FROM obs.tenant_settings',
});
const full = (host: string): Array<ReturnType<typeof local>> => [
  mv(host),
  view(host),
  front(host, 'logs'),
  local(host, 'logs_local'),
  local(host, 'usage_daily_local'),
];

describe('the schema follows the cluster (cluster-schema.ts)', () => {
  it("adds IF NOT EXISTS and ON CLUSTER to a server's own definition, keeping its macros", () => {
    expect(onClusterIfNotExists(local('a', 'logs_local').create, 'tenantry')).to.equal(
      "CREATE TABLE IF NOT EXISTS obs.logs_local ON CLUSTER tenantry (`tenant_id` String) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/obs/logs_local', '{replica}') ORDER BY tenant_id",
    );
    expect(onClusterIfNotExists(mv('a').create, 'tenantry')).to.match(
      /^CREATE MATERIALIZED VIEW IF NOT EXISTS obs\.logs_usage_mv ON CLUSTER tenantry TO obs\.usage_daily_local/,
    );
    expect(onClusterIfNotExists('ATTACH TABLE x', 'tenantry')).to.equal(undefined);
  });

  it('2x2 → 3x2: the two servers of the new shard have nothing, so every object is created on the cluster, stored tables first, materialized views last', () => {
    const hosts = ['s0-0', 's0-1', 's1-0', 's1-1', 's2-0', 's2-1'];
    const statements = convergeStatements('tenantry', hosts, hosts.slice(0, 4).flatMap(full));
    expect(statements.map((s) => /^CREATE (?:TABLE|VIEW|MATERIALIZED VIEW) IF NOT EXISTS (\S+) ON CLUSTER tenantry/.exec(s)?.[1])).to.deep.equal([
      'obs.logs_local',
      'obs.usage_daily_local',
      'obs.logs',
      'obs.tenant_retention',
      'obs.logs_usage_mv',
    ]);
  });

  it('a new replica of a shard lacking one table gets that table only; a converged cluster gets no statement', () => {
    const hosts = ['s0-0', 's0-1', 's0-2'];
    const objects = [...full('s0-0'), ...full('s0-1'), ...full('s0-2').filter((o) => o.name !== 'usage_daily_local')];
    expect(convergeStatements('tenantry', hosts, objects))
      .to.have.length(1)
      .and.to.satisfy((s: string[]) => s[0]?.includes('obs.usage_daily_local ON CLUSTER'));
    expect(convergeStatements('tenantry', hosts, hosts.flatMap(full))).to.deep.equal([]);
  });

  it('drops the Keeper entries of replicas that are no server any more (replicas 3 → 2), and only those', () => {
    const tables = [
      { zookeeperPath: '/clickhouse/tables/0/obs/logs_local', registered: ['c-clickhouse-s0-0', 'c-clickhouse-s0-1', 'c-clickhouse-s0-2'] },
      {
        zookeeperPath: '/clickhouse/tables/all/obs/schema_migrations',
        registered: ['c-clickhouse-s0-0', 'c-clickhouse-s0-1', 'c-clickhouse-s0-2', 'c-clickhouse-s1-0'],
      },
    ];
    const live = new Set(['c-clickhouse-s0-0', 'c-clickhouse-s0-1', 'c-clickhouse-s1-0', 'c-clickhouse-s1-1']);
    expect(dropReplicaStatements(tables, live)).to.deep.equal([
      { replica: 'c-clickhouse-s0-2', zookeeperPath: '/clickhouse/tables/0/obs/logs_local' },
      { replica: 'c-clickhouse-s0-2', zookeeperPath: '/clickhouse/tables/all/obs/schema_migrations' },
    ]);
  });

  it('schema_migrations is one replicated table on a cluster, not sharded (no {shard} in its path, no Distributed front)', () => {
    const statements = migrationsTable({ database: 'obs', cluster: 'tenantry' });
    expect(statements).to.have.length(1);
    expect(statements[0]).to.contain("ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/obs/schema_migrations', '{replica}', applied_at)");
    expect(statements[0]).to.match(/^CREATE TABLE IF NOT EXISTS obs\.schema_migrations ON CLUSTER tenantry/);
    expect(migrationsTable({ database: 'obs', cluster: undefined })[0]).to.contain('ENGINE = ReplacingMergeTree(applied_at)');
  });

  it('waits for every server and Keeper, polling until they answer or the time is up', async () => {
    let answered = 2;
    let clock = 0;
    const store = {
      client: {
        query: ({ query }: { query: string }) =>
          Promise.resolve({
            json: () => Promise.resolve(query.includes('system.clusters') ? [{ n: 4 }] : query.includes('clusterAllReplicas') ? [{ n: answered }] : [{}]),
          }),
      },
    } as unknown as Pick<Store, 'client'>;
    const sleep = (ms: number): Promise<void> => {
      clock += ms;
      answered = Math.min(4, answered + 1);
      return Promise.resolve();
    };
    expect(await waitForCluster(store, 'tenantry', { timeoutMs: 60_000, pollMs: 5_000, now: () => clock, sleep })).to.deep.equal({ ok: true, value: 4 });
    expect(clock).to.equal(10_000);
    answered = 0;
    clock = 0;
    const never = (ms: number): Promise<void> => {
      clock += ms;
      return Promise.resolve();
    };
    const gaveUp = await waitForCluster(store, 'tenantry', { timeoutMs: 20_000, pollMs: 5_000, now: () => clock, sleep: never });
    expect(gaveUp).to.deep.equal({ ok: false, error: 'cluster tenantry not ready after 20 s: 0 of 4 servers answered' });

    // Missing grants fail at once instead of after the wait.
    const { ClickHouseError } = await import('@clickhouse/client');
    const denied = {
      client: { query: () => Promise.reject(new ClickHouseError({ message: 'tenantry_ddl: Not enough privileges', code: '497', type: 'ACCESS_DENIED' })) },
    } as unknown as Pick<Store, 'client'>;
    clock = 0;
    const refused = await waitForCluster(denied, 'tenantry', { timeoutMs: 20_000, pollMs: 5_000, now: () => clock, sleep: never });
    expect(refused.ok).to.equal(false);
    expect(refused).to.have.property('error').that.contains('grant REMOTE and CREATE TEMPORARY TABLE');
    expect(clock).to.equal(0);
  });
});
