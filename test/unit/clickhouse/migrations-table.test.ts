import { expect } from 'chai';
import { hostLayout, migrationsTablePlan, upgradeMigrationsTable } from '../../../src/clickhouse/schema/migrations-table.ts';
import type { HostObject } from '../../../src/clickhouse/schema/cluster-schema.ts';
import type { Store } from '../../../src/clickhouse/store.ts';

const t = { database: 'obs', cluster: 'tenantry' };
const hosts = ['s0-0', 's0-1', 's1-0', 's1-1'];

// The objects as system.tables reports them in each layout the conversion passes through.
const oldLocal = (host: string): HostObject => ({
  host,
  name: 'schema_migrations_local',
  engine: 'ReplicatedReplacingMergeTree',
  create:
    "CREATE TABLE obs.schema_migrations_local (`version` UInt32) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/obs/schema_migrations_local', '{replica}', applied_at) ORDER BY version",
});
const front = (host: string, name = 'schema_migrations'): HostObject => ({
  host,
  name,
  engine: 'Distributed',
  create: `CREATE TABLE obs.${name} (\`version\` UInt32) ENGINE = Distributed('tenantry', 'obs', 'schema_migrations_local', version)`,
});
const replicated = (host: string, name = 'schema_migrations'): HostObject => ({
  host,
  name,
  engine: 'ReplicatedReplacingMergeTree',
  create: `CREATE TABLE obs.${name} (\`version\` UInt32) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/obs/schema_migrations', '{replica}', applied_at) ORDER BY version`,
});
const old = (h: string): HostObject[] => [front(h), oldLocal(h)];
const copied = (h: string): HostObject[] => [...old(h), replicated(h, 'schema_migrations_replicated')];
const swapped = (h: string): HostObject[] => [replicated(h), front(h, 'schema_migrations_replicated'), oldLocal(h)];
const halfDropped = (h: string): HostObject[] => [replicated(h), oldLocal(h)];
const current = (h: string): HostObject[] => [replicated(h)];
const converted = current;

const conversion = [
  'CREATE TABLE IF NOT EXISTS obs.schema_migrations_replicated ON CLUSTER tenantry (\n  version UInt32,\n  name String,\n  checksum String,\n  applied_at DateTime64(3) DEFAULT now64(3)\n)\n' +
    "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/all/obs/schema_migrations', '{replica}', applied_at)\nORDER BY version",
  'INSERT INTO obs.schema_migrations_replicated (version, name, checksum, applied_at) SELECT version, name, checksum, applied_at FROM obs.schema_migrations SETTINGS skip_unavailable_shards = 0',
  'EXCHANGE TABLES obs.schema_migrations AND obs.schema_migrations_replicated ON CLUSTER tenantry',
  'DROP TABLE IF EXISTS obs.schema_migrations_replicated ON CLUSTER tenantry SYNC',
  'DROP TABLE IF EXISTS obs.schema_migrations_local ON CLUSTER tenantry SYNC',
];

describe('schema_migrations upgrade from the sharded layout (migrations-table.ts)', () => {
  it("reads each server's layout from the engines system.tables reports", () => {
    expect(hostLayout([])).to.equal('none');
    expect(hostLayout(old('a'))).to.equal('sharded');
    expect(hostLayout(copied('a'))).to.equal('sharded');
    expect(hostLayout(swapped('a'))).to.equal('swapped');
    expect(hostLayout(halfDropped('a'))).to.equal('swapped');
    expect(hostLayout(current('a'))).to.equal('replicated');
    // A Distributed schema_migrations beside a Distributed staging table, or a lone staging table, is no step of the conversion.
    expect(hostLayout([front('a'), front('a', 'schema_migrations_replicated')])).to.equal('unknown');
    expect(hostLayout([replicated('a', 'schema_migrations_replicated')])).to.equal('unknown');
  });

  it('old layout on every server: new replicated table under the final Keeper path, rows copied from every shard, exchanged, the old ones dropped', () => {
    expect(migrationsTablePlan(t, hosts, hosts.flatMap(old))).to.deep.equal({ kind: 'convert', statements: conversion });
  });

  it('interrupted after the copy: the same steps again (the CREATE is IF NOT EXISTS, a second copy only repeats versions)', () => {
    expect(migrationsTablePlan(t, hosts, hosts.flatMap(copied))).to.deep.equal({ kind: 'convert', statements: conversion });
  });

  it('interrupted after the exchange or the first drop: only the drops, which never name the new table', () => {
    const drops = conversion.slice(3);
    expect(migrationsTablePlan(t, hosts, hosts.flatMap(swapped))).to.deep.equal({ kind: 'convert', statements: drops });
    expect(migrationsTablePlan(t, hosts, hosts.flatMap(halfDropped))).to.deep.equal({ kind: 'convert', statements: drops });
    for (const s of drops) expect(s).to.not.match(/obs\.schema_migrations ON/);
  });

  it('new layout everywhere, or a fresh cluster: nothing to do', () => {
    expect(migrationsTablePlan(t, hosts, hosts.flatMap(current))).to.deep.equal({ kind: 'current' });
    expect(migrationsTablePlan(t, hosts, [])).to.deep.equal({ kind: 'current' });
    // A server added since (no tables yet) beside converted ones: CREATE … IF NOT EXISTS makes it a replica.
    expect(migrationsTablePlan(t, [...hosts, 's2-0'], hosts.flatMap(current))).to.deep.equal({ kind: 'current' });
  });

  it('a server added to an old-layout cluster first gets the old pair, so the exchange runs on every server', () => {
    const plan = migrationsTablePlan(t, [...hosts, 's2-0', 's2-1'], hosts.flatMap(old));
    if (plan.kind !== 'convert') throw new Error(plan.kind);
    expect(plan.statements.slice(0, 2)).to.deep.equal([
      "CREATE TABLE IF NOT EXISTS obs.schema_migrations_local ON CLUSTER tenantry (`version` UInt32) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/obs/schema_migrations_local', '{replica}', applied_at) ORDER BY version",
      "CREATE TABLE IF NOT EXISTS obs.schema_migrations ON CLUSTER tenantry (`version` UInt32) ENGINE = Distributed('tenantry', 'obs', 'schema_migrations_local', version)",
    ]);
    expect(plan.statements.slice(2)).to.deep.equal(conversion);
  });

  it('refuses while servers disagree (an exchange still queued on some): running it again would swap the others back', () => {
    const objects = [...old('s0-0'), ...swapped('s0-1'), ...current('s1-0'), ...current('s1-1')];
    const plan = migrationsTablePlan(t, hosts, objects);
    expect(plan).to.deep.equal({
      kind: 'refuse',
      message:
        'obs.schema_migrations is being converted to one replicated table: still Distributed on s0-0, replicated on s0-1, s1-0, s1-1. ' +
        "If the distributed DDL queue still holds the conversion's statements for some of them, wait until it has run them, then run migrate again; " +
        'if not (a server created the new table before the conversion, e.g. by an earlier migrate), drop that empty schema_migrations on it by hand (DROP TABLE … SYNC) and run migrate again',
    });
    const odd = migrationsTablePlan(t, hosts, [...hosts.flatMap(current).filter((o) => o.host !== 's1-1'), replicated('s1-1', 'schema_migrations_replicated')]);
    expect(odd).to.have.property('kind', 'refuse');
    expect(odd).to.have.property('message').that.contains('unexpected layout on s1-1');
  });

  it('runs the plan on the store, asking every server for its schema_migrations tables only', async () => {
    const commands: string[] = [];
    const queries: Array<{ query: string; params: Record<string, unknown> }> = [];
    const store = {
      client: {
        query: ({ query, query_params }: { query: string; query_params: Record<string, unknown> }) => {
          queries.push({ query, params: query_params });
          return Promise.resolve({ json: () => Promise.resolve(query.includes('system.one') ? hosts.map((host) => ({ host })) : hosts.flatMap(old)) });
        },
        command: ({ query }: { query: string }) => {
          commands.push(query);
          return Promise.resolve({});
        },
      },
    } as unknown as Pick<Store, 'client'>;
    expect(await upgradeMigrationsTable(store, t)).to.deep.equal({ ok: true, value: conversion });
    expect(commands).to.deep.equal(conversion);
    expect(queries[1]?.query).to.contain('clusterAllReplicas({c:String}, system.tables)').and.to.contain('name IN {names:Array(String)}');
    expect(queries[1]?.params).to.deep.equal({
      c: 'tenantry',
      db: 'obs',
      names: ['schema_migrations', 'schema_migrations_replicated', 'schema_migrations_local'],
    });
  });
});

describe('migrate on a cluster with the old schema_migrations (fake store at the client port)', () => {
  /** A store whose servers hold `layout`; EXCHANGE turns it into the converted one. Records every DDL statement. */
  function clusterStore(layout: (h: string) => HostObject[]): { store: Store; commands: string[] } {
    const commands: string[] = [];
    let current = layout;
    const answer = (query: string): unknown[] => {
      if (query.includes('system.clusters')) return [{ n: hosts.length }];
      if (query.includes('AS n FROM clusterAllReplicas')) return [{ n: hosts.length }];
      if (query.includes('hostName() AS host FROM clusterAllReplicas({c:String}, system.one)')) return hosts.map((host) => ({ host }));
      if (query.includes('name IN {names:Array(String)}') && query.includes('clusterAllReplicas')) return hosts.flatMap(current);
      if (query.includes('system.zookeeper')) return [{}];
      return [];
    };
    const client = {
      query: ({ query }: { query: string }) => Promise.resolve({ json: () => Promise.resolve(answer(query)) }),
      command: ({ query }: { query: string }) => {
        commands.push(query);
        if (query.startsWith('EXCHANGE TABLES obs.schema_migrations ')) current = swapped;
        if (query.startsWith('DROP TABLE IF EXISTS obs.schema_migrations_local')) current = converted;
        return Promise.resolve({});
      },
      insert: () => Promise.resolve({}),
    };
    const store = {
      client,
      insertClients: [client],
      mode: 'server',
      database: 'obs',
      cluster: 'tenantry',
      spoolDir: undefined,
      close: () => Promise.resolve(),
    } as unknown as Store;
    return { store, commands };
  }

  const wait = { timeoutMs: 1000, pollMs: 10, sleep: () => Promise.resolve() };

  it('converts before CREATE … IF NOT EXISTS and SYSTEM SYNC REPLICA of schema_migrations, then runs nothing of it again', async () => {
    const { migrate } = await import('../../../src/clickhouse/schema/migrator.ts');
    const { silentLogger } = await import('../../../src/log/logger.ts');
    const { store, commands } = clusterStore(old);
    const first = await migrate(store, { logsDays: 30, tracesDays: 30, metricsDays: 90 }, silentLogger, [], wait);
    expect(first).to.have.property('ok', true);
    expect(commands[0]).to.equal('CREATE DATABASE IF NOT EXISTS obs ON CLUSTER tenantry');
    expect(commands.slice(1, 1 + conversion.length)).to.deep.equal(conversion);
    expect(commands[1 + conversion.length]).to.match(/^CREATE TABLE IF NOT EXISTS obs\.schema_migrations ON CLUSTER tenantry/);
    expect(commands.indexOf('SYSTEM SYNC REPLICA obs.schema_migrations')).to.be.greaterThan(1 + conversion.length);

    commands.length = 0;
    expect(await migrate(store, { logsDays: 30, tracesDays: 30, metricsDays: 90 }, silentLogger, [], wait)).to.have.property('ok', true);
    expect(commands.filter((c) => /schema_migrations_(replicated|local)|EXCHANGE/.test(c))).to.deep.equal([]);
  });

  it('refuses, having changed nothing, while servers disagree', async () => {
    const { migrate } = await import('../../../src/clickhouse/schema/migrator.ts');
    const { silentLogger } = await import('../../../src/log/logger.ts');
    const { store, commands } = clusterStore((h) => (h === 's0-0' ? old(h) : swapped(h)));
    const result = await migrate(store, { logsDays: 30, tracesDays: 30, metricsDays: 90 }, silentLogger, [], wait);
    expect(result).to.have.property('ok', false);
    expect(result).to.have.nested.property('error.message').that.contains('still Distributed on s0-0');
    expect(commands).to.deep.equal(['CREATE DATABASE IF NOT EXISTS obs ON CLUSTER tenantry']);
  });
});
