import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { deterministicShardingStatements } from '../../../src/clickhouse/schema/cluster-schema.ts';
import { createTable } from '../../../src/clickhouse/schema/ddl.ts';
import { migrations } from '../../../src/clickhouse/schema/migrations.ts';
import { migrationChecksum } from '../../../src/clickhouse/schema/migrator.ts';
import { logsTable, metricsTable, shardingKeys, spansTable, traceIndexTable } from '../../../src/clickhouse/schema/tables.ts';

const cluster = { database: 'obs', cluster: 'main' };
const retention = { logsDays: 30, tracesDays: 30, metricsDays: 90 };
const nonDeterministic =
  /\b(rand|rand32|rand64|randConstant|randCanonical|generateUUIDv4|generateUUIDv7|now|now64|today|rowNumberInAllBlocks|rowNumberInBlock|blockNumber)\s*\(/i;

describe('deterministic sharding of the signal tables (migration 9)', () => {
  it('every Distributed front a migration creates shards by a function of the row, never by rand() or the clock', () => {
    const fronts = migrations.flatMap((m) => m.statements({ ...cluster, retention })).filter((s) => s.includes('ENGINE = Distributed('));
    expect(fronts.length).to.be.greaterThan(10);
    const latest = new Map<string, string>();
    for (const s of fronts) latest.set(/TABLE (?:IF NOT EXISTS )?(\S+)/.exec(s)?.[1] ?? s, s);
    for (const [table, s] of latest) expect(nonDeterministic.test(s), `${table}: ${s}`).to.equal(false);
  });

  it("the keys leave out retention_days (read from the settings at each INSERT, so it may differ on a retry) and name only the table's columns", () => {
    const specs = { logs: logsTable(retention), spans: spansTable(retention), metrics: metricsTable(retention), traceIndex: traceIndexTable };
    for (const [name, spec] of Object.entries(specs)) {
      const key = shardingKeys[name as keyof typeof shardingKeys];
      expect(spec.shardingKey).to.equal(key);
      expect(key).to.not.contain('retention_days');
      const columns = new Set(spec.columns.map((c) => c.slice(0, c.indexOf(' '))));
      const named = /^cityHash64\((.*)\)$/.exec(key)?.[1]?.split(', ') ?? [];
      expect(named.length, key).to.be.greaterThan(0);
      for (const column of named) expect(columns.has(column), `${name}.${column}`).to.equal(true);
    }
    // A trace's spans and its index rows land on one shard.
    expect(shardingKeys.spans).to.equal('cityHash64(trace_id)');
    expect(shardingKeys.traceIndex).to.equal(shardingKeys.spans);
  });

  it('re-creates each front with its key after sending what it still queued, on a cluster', () => {
    expect(deterministicShardingStatements(cluster)).to.deep.equal([
      'SYSTEM FLUSH DISTRIBUTED obs.logs ON CLUSTER main',
      'CREATE OR REPLACE TABLE obs.logs ON CLUSTER main AS obs.logs_local ENGINE = Distributed(main, obs, logs_local, cityHash64(log_id, timestamp))',
      'SYSTEM FLUSH DISTRIBUTED obs.spans ON CLUSTER main',
      'CREATE OR REPLACE TABLE obs.spans ON CLUSTER main AS obs.spans_local ENGINE = Distributed(main, obs, spans_local, cityHash64(trace_id))',
      'SYSTEM FLUSH DISTRIBUTED obs.metrics ON CLUSTER main',
      'CREATE OR REPLACE TABLE obs.metrics ON CLUSTER main AS obs.metrics_local ENGINE = Distributed(main, obs, metrics_local, cityHash64(metric_name, resource_attributes, attributes, timestamp))',
      'SYSTEM FLUSH DISTRIBUTED obs.trace_index ON CLUSTER main',
      'CREATE OR REPLACE TABLE obs.trace_index ON CLUSTER main AS obs.trace_index_local ENGINE = Distributed(main, obs, trace_index_local, cityHash64(trace_id))',
    ]);
    // A fresh cluster's migration 1 already creates the same fronts.
    expect(createTable(cluster, spansTable(retention))[1]).to.contain('Distributed(main, obs, spans_local, cityHash64(trace_id))');
  });

  it('has no statement on one node (no fronts there), so its checksum is that of nothing', () => {
    const last = migrations.find((m) => m.name === 'deterministic sharding keys for the signal tables');
    expect(last?.statements({ database: 'obs', cluster: undefined, retention })).to.deep.equal([]);
    if (last === undefined) throw new Error('no migrations');
    expect(migrationChecksum(last)).to.equal(createHash('sha256').update('').digest('hex'));
  });
});
