import { expect } from 'chai';
import { migrate, migrationChecksum } from '../../../src/clickhouse/schema/migrator.ts';
import { migrations } from '../../../src/clickhouse/schema/migrations.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { databaseStore, defaultRetention, migratedStore, rows } from '../../support/embedded-store.ts';

const day = '2026-11-20';

describe('schema on embedded ClickHouse', function () {
  this.timeout(60_000);

  describe('migrations', () => {
    let store: Store;
    before(async () => {
      store = await databaseStore('migrations');
    });
    after(async () => {
      await store.close();
    });

    it('apply on an empty database, then re-apply as a no-op', async () => {
      const first = await migrate(store, defaultRetention, silentLogger);
      expect(first).to.deep.equal({ ok: true, value: { applied: migrations.map((m) => m.version), retentionChanged: [] } });
      const tables = await rows<{ name: string }>(store, 'SELECT name FROM system.tables WHERE database = {db:String} ORDER BY name', { db: store.database });
      expect(tables.map((t) => t.name)).to.include.members([
        'logs',
        'spans',
        'metrics',
        'tenants',
        'usage_daily',
        'schema_migrations',
        'logs_usage_mv',
        'spans_tenants_mv',
      ]);
      const second = await migrate(store, defaultRetention, silentLogger);
      expect(second).to.deep.equal({ ok: true, value: { applied: [], retentionChanged: [] } });
      const recorded = await rows<{ n: number }>(store, `SELECT count() AS n FROM ${store.database}.schema_migrations`);
      expect(Number(recorded[0]?.n)).to.equal(migrations.length);
    });

    it('migration 4 creates the tenant settings, gateway replicas and rejected usage tables', async () => {
      const tables = await rows<{ name: string; engine: string; sorting_key: string; engine_full: string }>(
        store,
        "SELECT name, engine, sorting_key, engine_full FROM system.tables WHERE database = {db:String} AND name IN ('tenant_settings', 'gateway_replicas', 'usage_rejected_daily') ORDER BY name",
        { db: store.database },
      );
      expect(tables.map(({ name, engine, sorting_key }) => ({ name, engine, sorting_key }))).to.deep.equal([
        { name: 'gateway_replicas', engine: 'ReplacingMergeTree', sorting_key: 'replica_id' },
        { name: 'tenant_settings', engine: 'ReplacingMergeTree', sorting_key: 'source, tenant_id, field' },
        { name: 'usage_rejected_daily', engine: 'SummingMergeTree', sorting_key: 'tenant_id, day, signal, reason' },
      ]);
      expect(tables[0]?.engine_full).to.contain('TTL toDateTime(seen_at) + toIntervalDay(1)');
    });

    it('migrations 10 and 11 give the signal tables compact inserted parts and wider merges', async () => {
      const tables = await rows<{ name: string; engine_full: string }>(
        store,
        "SELECT name, engine_full FROM system.tables WHERE database = {db:String} AND name IN ('logs', 'spans', 'metrics') ORDER BY name",
        { db: store.database },
      );
      expect(tables.map((t) => t.name)).to.deep.equal(['logs', 'metrics', 'spans']);
      for (const t of tables) expect(t.engine_full, t.name).to.contain('min_rows_for_wide_part = 110000').and.to.contain('merge_selector_base = 12');
    });

    it('migration 12 stores span attributes at ZSTD(3), leaving the other maps and the logs at ZSTD(6)', async () => {
      const codecs = await rows<{ table: string; name: string; compression_codec: string }>(
        store,
        "SELECT table, name, compression_codec FROM system.columns WHERE database = {db:String} AND table IN ('logs', 'spans') AND name LIKE '%_attributes' ORDER BY table, name",
        { db: store.database },
      );
      expect(codecs).to.deep.equal([
        { table: 'logs', name: 'log_attributes', compression_codec: 'CODEC(ZSTD(6))' },
        { table: 'logs', name: 'resource_attributes', compression_codec: 'CODEC(ZSTD(6))' },
        { table: 'logs', name: 'scope_attributes', compression_codec: 'CODEC(ZSTD(6))' },
        { table: 'spans', name: 'event_attributes', compression_codec: 'CODEC(ZSTD(3))' },
        { table: 'spans', name: 'link_attributes', compression_codec: 'CODEC(ZSTD(3))' },
        { table: 'spans', name: 'resource_attributes', compression_codec: 'CODEC(ZSTD(6))' },
        { table: 'spans', name: 'scope_attributes', compression_codec: 'CODEC(ZSTD(6))' },
        { table: 'spans', name: 'span_attributes', compression_codec: 'CODEC(ZSTD(3))' },
      ]);
    });

    it('refuses to run when an applied migration was edited', async () => {
      const [first] = migrations;
      if (first === undefined) throw new Error('no migrations');
      const edited = { ...first, statements: () => ['SELECT 1'] };
      const result = await migrate(store, defaultRetention, silentLogger, [edited]);
      expect(result.ok).to.equal(false);
      expect(result).to.have.nested.property('error.message').that.contains('was changed after it was applied');
    });

    it('moves the default retention (tenant_retention view, retention_days DEFAULTs) to the retention settings, once', async () => {
      const changed = await migrate(store, { logsDays: 7, tracesDays: 30, metricsDays: 365 }, silentLogger);
      expect(changed).to.deep.equal({ ok: true, value: { applied: [], retentionChanged: ['logs', 'metrics'] } });
      const defaults = await rows<{ table: string; default_expression: string }>(
        store,
        "SELECT table, default_expression FROM system.columns WHERE database = {db:String} AND name = 'retention_days' ORDER BY table",
        { db: store.database },
      );
      expect(defaults).to.deep.equal([
        { table: 'logs', default_expression: '7' },
        { table: 'metrics', default_expression: '365' },
        { table: 'spans', default_expression: '30' },
      ]);
      const everyone = await rows<Record<string, number>>(
        store,
        `SELECT logs_days, traces_days, metrics_days FROM ${store.database}.tenant_retention WHERE tenant_id = ''`,
      );
      expect(everyone).to.deep.equal([{ logs_days: 7, traces_days: 30, metrics_days: 365 }]);
      const again = await migrate(store, { logsDays: 7, tracesDays: 30, metricsDays: 365 }, silentLogger);
      expect(again).to.deep.equal({ ok: true, value: { applied: [], retentionChanged: [] } });
    });

    it('before migration 5, moves table TTLs to the retention settings, once', async () => {
      const old = await databaseStore('ttl_before_5');
      try {
        const upTo4 = migrations.filter((m) => m.version <= 4);
        expect(await migrate(old, defaultRetention, silentLogger, upTo4)).to.have.property('ok', true);
        const changed = await migrate(old, { logsDays: 7, tracesDays: 30, metricsDays: 365 }, silentLogger, upTo4);
        expect(changed).to.deep.equal({ ok: true, value: { applied: [], retentionChanged: ['logs', 'metrics'] } });
        const engines = await rows<{ name: string; engine_full: string }>(
          old,
          "SELECT name, engine_full FROM system.tables WHERE database = {db:String} AND name IN ('logs', 'metrics')",
          { db: old.database },
        );
        expect(engines.find((e) => e.name === 'logs')?.engine_full).to.contain('toIntervalDay(7)');
        expect(engines.find((e) => e.name === 'metrics')?.engine_full).to.contain('toIntervalDay(365)');
      } finally {
        await old.close();
      }
    });

    it('keep the checksums of released migrations (tables.ts builds migration 1: change it by a new migration)', () => {
      const released: Record<number, string> = {
        1: '8793ffd55971ba6b690621e19271c84bfdce8f4d4abdc43f0c121e7c15d2d764',
        2: '7ff071e6d54f94d3540040cd6143acd3eecfef1a0dcdc6ec37f5c87b076a1258',
        3: '57a88c3591dcf73eec9a212b4ece8a537920b44f2bdfefeb9c429a9befb0484f',
        4: '126f3248de66105f2c165fbb57c84813e8d350b2c6c68d21e1006f4deb26a7dc',
        5: 'db0f8530defcf2ea4b0fc9c9a78d51a43ca4f980bbfd43243a2162c0eced4e27',
        6: '616a80a3d147a6372bd3a73294780ea16e46da32f98ac9320aa3f8d8e099d6b2',
        7: '088de4697ee2901c3725479edf17fcf760c1f3d5b205a4208a5187144aa495de',
        8: '015d6357129c7afc104213c686b774c0850e5f459b5d9b8e5a3c655aaac48d94',
        9: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
        10: '201919ee32cc5b1b20986177d051be900c5379a1eee643e13c734f07424d2458',
        11: '887088bf63bb8e53bcfb079062ba2fd0fd8d2ed1b3de09661da4782222898034',
        12: '5703f6be105984764a4cb4de53cb98a8716a5fe615ca686a2001b8eeaf9b9962',
        13: 'a3671c8901100f64b249341c9018694e1a39439cc1538279b58a825f4db40983',
        14: '3685797b90518ffd056b301629431fad6a2bb1685040671c6a54a44f846fae86',
      };
      for (const migration of migrations) expect(migrationChecksum(migration), `migration ${migration.version}`).to.equal(released[migration.version]);
    });

    it('reports an unreachable ClickHouse as a value, not a crash', async () => {
      const { openStore } = await import('../../../src/clickhouse/store.ts');
      const opened = await openStore({ kind: 'server', url: 'http://127.0.0.1:1', user: 'default', password: '', database: 'x', cluster: undefined });
      if (!opened.ok) throw new Error(opened.error);
      const result = await migrate(opened.value, defaultRetention, silentLogger);
      await opened.value.close();
      expect(result.ok).to.equal(false);
      expect(result).to.have.nested.property('error.failure.kind', 'unavailable');
    });
  });

  describe('tables', () => {
    let store: Store;
    before(async () => {
      store = await migratedStore('tables');
    });
    after(async () => {
      await store.close();
    });

    const logRow = {
      tenant_id: 'acme',
      timestamp: `${day} 10:00:00.123456789`,
      observed_timestamp: `${day} 10:00:01.000000000`,
      log_id: '01JD0000000000000000000000',
      trace_id: '5b8efff798038103d269b633813fc60c',
      span_id: 'eee19b7ec3c1b174',
      trace_flags: 1,
      severity_number: 17,
      severity_text: 'ERROR',
      service_name: 'cart',
      event_name: '',
      body: 'payment failed: card declined',
      resource_schema_url: '',
      resource_attributes: { 'service.name': 'cart', 'tenant.id': 'acme' },
      scope_name: 'cart.logger',
      scope_version: '1.2.0',
      scope_schema_url: '',
      scope_attributes: {},
      log_attributes: { 'http.method': 'POST', 'user.id': '42' },
      dropped_attributes_count: 0,
    };
    const spanRow = {
      tenant_id: 'acme',
      timestamp: `${day} 10:00:00.000000001`,
      trace_id: '5b8efff798038103d269b633813fc60c',
      span_id: 'eee19b7ec3c1b174',
      parent_span_id: '',
      trace_state: 'vendor=1',
      flags: 1,
      span_name: 'POST /checkout',
      span_kind: 'SERVER',
      service_name: 'cart',
      duration_ns: 1_500_000,
      status_code: 'ERROR',
      status_message: 'card declined',
      resource_schema_url: '',
      resource_attributes: { 'service.name': 'cart' },
      scope_name: 'http',
      scope_version: '',
      scope_attributes: {},
      span_attributes: { 'http.route': '/checkout' },
      event_timestamps: [`${day} 10:00:00.000500000`],
      event_names: ['exception'],
      event_attributes: [{ 'exception.type': 'CardError' }],
      link_trace_ids: ['0af7651916cd43dd8448eb211c80319c'],
      link_span_ids: ['b7ad6b7169203331'],
      link_trace_states: [''],
      link_attributes: [{}],
      dropped_attributes_count: 0,
      dropped_events_count: 0,
      dropped_links_count: 0,
    };
    const histogramRow = {
      tenant_id: 'acme',
      metric_name: 'http.server.duration',
      metric_type: 'histogram',
      description: 'request latency',
      unit: 'ms',
      temporality: 'cumulative',
      is_monotonic: false,
      service_name: 'cart',
      resource_schema_url: '',
      resource_attributes: { 'service.name': 'cart' },
      scope_name: 'http',
      scope_version: '',
      scope_attributes: {},
      attributes: { 'http.route': '/checkout' },
      start_timestamp: `${day} 09:00:00.000000000`,
      timestamp: `${day} 10:00:00.000000000`,
      flags: 0,
      value: 0,
      count: 10,
      sum: 123.5,
      min: 1.5,
      max: 40,
      bucket_counts: [2, 5, 3],
      explicit_bounds: [5, 25],
      exp_scale: 0,
      exp_zero_count: 0,
      exp_zero_threshold: 0,
      exp_positive_offset: 0,
      exp_positive_bucket_counts: [],
      exp_negative_offset: 0,
      exp_negative_bucket_counts: [],
      quantiles: [],
      quantile_values: [],
    };

    async function roundTrip(table: string, row: Record<string, unknown>, orderBy: string): Promise<Record<string, unknown>> {
      await store.client.insert({ table: `${store.database}.${table}`, values: [row], format: 'JSONEachRow' });
      const [back] = await rows<Record<string, unknown>>(
        store,
        `SELECT * FROM ${store.database}.${table} WHERE tenant_id = {t:String} ORDER BY ${orderBy} LIMIT 1`,
        { t: row['tenant_id'] },
      );
      if (back === undefined) throw new Error(`${table}: row not found`);
      return back;
    }

    it('logs accept a full record and return it', async () => {
      expect(await roundTrip('logs', logRow, 'timestamp')).to.deep.equal({ ...logRow, retention_days: 30 });
    });

    it('spans accept a full record with events and links and return it', async () => {
      expect(await roundTrip('spans', spanRow, 'timestamp')).to.deep.equal({ ...spanRow, retention_days: 30 });
    });

    it('metrics accept every point type and return them', async () => {
      expect(await roundTrip('metrics', histogramRow, 'timestamp')).to.deep.equal({ ...histogramRow, retention_days: 90 });
      const others = [
        {
          ...histogramRow,
          metric_name: 'queue.depth',
          metric_type: 'gauge',
          temporality: 'unspecified',
          value: 7.25,
          count: 0,
          sum: 0,
          min: null,
          max: null,
          bucket_counts: [],
          explicit_bounds: [],
        },
        {
          ...histogramRow,
          metric_name: 'requests',
          metric_type: 'sum',
          is_monotonic: true,
          value: 1234,
          count: 0,
          sum: 0,
          min: null,
          max: null,
          bucket_counts: [],
          explicit_bounds: [],
        },
        {
          ...histogramRow,
          metric_name: 'latency.exp',
          metric_type: 'exponential_histogram',
          bucket_counts: [],
          explicit_bounds: [],
          exp_scale: 3,
          exp_zero_count: 1,
          exp_zero_threshold: 0.001,
          exp_positive_offset: -2,
          exp_positive_bucket_counts: [1, 4, 4],
          exp_negative_offset: 0,
          exp_negative_bucket_counts: [],
        },
        {
          ...histogramRow,
          metric_name: 'latency.summary',
          metric_type: 'summary',
          temporality: 'unspecified',
          min: null,
          max: null,
          bucket_counts: [],
          explicit_bounds: [],
          quantiles: [0.5, 0.99],
          quantile_values: [12, 39],
        },
      ];
      for (const row of others) {
        await store.client.insert({ table: `${store.database}.metrics`, values: [row], format: 'JSONEachRow' });
        const [back] = await rows(store, `SELECT * FROM ${store.database}.metrics WHERE tenant_id = 'acme' AND metric_name = {m:String}`, {
          m: row.metric_name,
        });
        expect(back, row.metric_type).to.deep.equal({ ...row, retention_days: 90 });
      }
    });
  });

  describe('codecs of migration 3', () => {
    let store: Store;
    before(async () => {
      store = await databaseStore('codecs');
    });
    after(async () => {
      await store.close();
    });

    type Column = { table: string; name: string; type: string; compression_codec: string };
    const columns = (): Promise<Column[]> =>
      rows<Column>(
        store,
        "SELECT table, name, type, compression_codec FROM system.columns WHERE database = {db:String} AND table IN ('logs', 'spans') ORDER BY table, name",
        { db: store.database },
      );

    it('change codecs only, on tables that hold rows: no mutation, types and rows as they were', async () => {
      const before = migrations.filter((m) => m.version < 3);
      expect(await migrate(store, defaultRetention, silentLogger, before)).to.have.property('ok', true);
      const log = {
        tenant_id: 'acme',
        timestamp: `${day} 10:00:00.123456789`,
        log_id: 'l1',
        trace_id: '5b8efff798038103d269b633813fc60c',
        span_id: 'eee19b7ec3c1b174',
        body: 'payment failed',
        log_attributes: { 'user.id': '42' },
      };
      const span = {
        tenant_id: 'acme',
        timestamp: `${day} 10:00:00.000000001`,
        trace_id: '5b8efff798038103d269b633813fc60c',
        span_id: 'eee19b7ec3c1b174',
        event_timestamps: [`${day} 10:00:00.000500000`, `${day} 10:00:00.000600000`],
        event_names: ['a', 'b'],
        span_attributes: { 'http.route': '/checkout' },
      };
      await store.client.insert({ table: `${store.database}.logs`, values: [log], format: 'JSONEachRow' });
      await store.client.insert({ table: `${store.database}.spans`, values: [span], format: 'JSONEachRow' });
      const typesBefore = (await columns()).map(({ table, name, type }) => ({ table, name, type }));

      expect(
        await migrate(
          store,
          defaultRetention,
          silentLogger,
          migrations.filter((m) => m.version <= 3),
        ),
      ).to.deep.equal({ ok: true, value: { applied: [3], retentionChanged: [] } });
      const after = await columns();
      expect(after.map(({ table, name, type }) => ({ table, name, type }))).to.deep.equal(typesBefore);
      const codec = (table: string, name: string): string | undefined => after.find((c) => c.table === table && c.name === name)?.compression_codec;
      expect(codec('logs', 'log_attributes')).to.equal('CODEC(ZSTD(6))');
      expect(codec('logs', 'span_id')).to.equal('CODEC(ZSTD(3))');
      expect(codec('spans', 'span_attributes')).to.equal('CODEC(ZSTD(6))');
      expect(codec('spans', 'event_timestamps')).to.equal('CODEC(Delta(8), ZSTD(3))');
      expect(codec('spans', 'duration_ns'), 'a column migration 3 leaves alone').to.equal('CODEC(T64, ZSTD(1))');
      const mutations = await rows<{ n: string }>(store, 'SELECT count() AS n FROM system.mutations WHERE database = {db:String}', { db: store.database });
      expect(Number(mutations[0]?.n)).to.equal(0);

      // Old parts and a merge of old and new parts read back the same rows.
      await store.client.insert({ table: `${store.database}.logs`, values: [{ ...log, log_id: 'l2' }], format: 'JSONEachRow' });
      await store.client.command({ query: `OPTIMIZE TABLE ${store.database}.logs FINAL` });
      const logs = await rows<Record<string, unknown>>(
        store,
        `SELECT log_id, trace_id, span_id, body, log_attributes FROM ${store.database}.logs ORDER BY log_id`,
      );
      expect(logs).to.deep.equal(
        ['l1', 'l2'].map((logId) => ({ log_id: logId, trace_id: log.trace_id, span_id: log.span_id, body: log.body, log_attributes: log.log_attributes })),
      );
      const [back] = await rows<Record<string, unknown>>(store, `SELECT event_timestamps, event_names, span_attributes FROM ${store.database}.spans`);
      expect(back).to.deep.equal({ event_timestamps: span.event_timestamps, event_names: span.event_names, span_attributes: span.span_attributes });
    });
  });

  describe('usage and discovery views', () => {
    let store: Store;
    before(async () => {
      store = await migratedStore('usage');
    });
    after(async () => {
      await store.close();
    });

    const log = (tenant: string, body: string, attributes: Record<string, string>) => ({
      tenant_id: tenant,
      timestamp: `${day} 10:00:00`,
      log_id: `${tenant}-${body}`,
      body,
      log_attributes: attributes,
      resource_attributes: { 'service.name': 'svc' },
    });
    const bytes = (body: string, attributes: Record<string, string>): number =>
      Buffer.byteLength(body) +
      Buffer.byteLength('service.name') +
      Buffer.byteLength('svc') +
      Object.entries(attributes).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);

    it('count log records and bytes, spans and metric points per tenant and UTC day of ingestion', async () => {
      const acmeLogs = [log('acme', 'héllo wörld', { k: 'v' }), log('acme', 'second', {}), log('acme', 'third', { 'user.id': '12345' })];
      await store.client.insert({ table: `${store.database}.logs`, values: acmeLogs.slice(0, 2), format: 'JSONEachRow' });
      await store.client.insert({ table: `${store.database}.logs`, values: acmeLogs.slice(2), format: 'JSONEachRow' });
      await store.client.insert({ table: `${store.database}.logs`, values: [log('globex', 'x', {})], format: 'JSONEachRow' });
      await store.client.insert({
        table: `${store.database}.spans`,
        values: [1, 2, 3, 4].map((i) => ({ tenant_id: 'acme', timestamp: `${day} 10:00:0${i}`, span_id: `s${i}` })),
        format: 'JSONEachRow',
      });
      await store.client.insert({
        table: `${store.database}.metrics`,
        values: [1, 2, 3, 4, 5].map((i) => ({ tenant_id: 'globex', metric_name: 'm', metric_type: 'gauge', timestamp: `${day} 10:00:0${i}`, value: i })),
        format: 'JSONEachRow',
      });

      type Count = number | string;
      const usage = await rows<{ tenant_id: string; day: string; log_records: Count; log_bytes: Count; spans: Count; metric_points: Count }>(
        store,
        `SELECT tenant_id, day, sum(log_records) AS log_records, sum(log_bytes) AS log_bytes, sum(spans) AS spans, sum(metric_points) AS metric_points
         FROM ${store.database}.usage_daily GROUP BY tenant_id, day ORDER BY tenant_id`,
      );
      const today = new Date().toISOString().slice(0, 10);
      expect(
        usage.map((u) => ({
          ...u,
          log_records: Number(u.log_records),
          log_bytes: Number(u.log_bytes),
          spans: Number(u.spans),
          metric_points: Number(u.metric_points),
        })),
      ).to.deep.equal([
        {
          tenant_id: 'acme',
          day: today,
          log_records: 3,
          log_bytes: acmeLogs.reduce((n, l) => n + bytes(l.body, l.log_attributes), 0),
          spans: 4,
          metric_points: 0,
        },
        { tenant_id: 'globex', day: today, log_records: 1, log_bytes: bytes('x', {}), spans: 0, metric_points: 5 },
      ]);
    });

    it('record each tenant once, and a rename wins over later discovery', async () => {
      await store.client.command({
        query: `INSERT INTO ${store.database}.tenants SELECT {id:String}, now64(3), argMaxState({name:String}, now64(9))`,
        query_params: { id: 'acme', name: 'ACME Corp' },
      });
      await store.client.insert({ table: `${store.database}.logs`, values: [log('acme', 'after rename', {})], format: 'JSONEachRow' });
      const tenants = await rows<{ tenant_id: string; name: string }>(
        store,
        `SELECT tenant_id, argMaxMerge(name) AS name FROM ${store.database}.tenants GROUP BY tenant_id ORDER BY tenant_id`,
      );
      expect(tenants).to.deep.equal([
        { tenant_id: 'acme', name: 'ACME Corp' },
        { tenant_id: 'globex', name: '' },
      ]);
    });
  });

  describe('isolation and pruning', () => {
    let one: Store;
    let two: Store;
    before(async () => {
      [one, two] = await Promise.all([migratedStore('iso_one'), migratedStore('iso_two')]);
    });
    after(async () => {
      await Promise.all([one.close(), two.close()]);
    });

    it('two test databases in one process do not see each other', async () => {
      await one.client.insert({
        table: `${one.database}.logs`,
        values: [{ tenant_id: 'acme', timestamp: `${day} 10:00:00`, body: 'only in one' }],
        format: 'JSONEachRow',
      });
      const inOne = await rows<{ n: string }>(one, `SELECT count() AS n FROM ${one.database}.logs`);
      const inTwo = await rows<{ n: string }>(two, `SELECT count() AS n FROM ${two.database}.logs`);
      const tenantsTwo = await rows<{ n: string }>(two, `SELECT count() AS n FROM ${two.database}.tenants`);
      expect([Number(inOne[0]?.n), Number(inTwo[0]?.n), Number(tenantsTwo[0]?.n)]).to.deep.equal([1, 0, 0]);
    });

    it("a tenant-filtered query reads only that tenant's granules (EXPLAIN indexes = 1)", async () => {
      // Three tenants of 100k rows each in one part: ~13 granules apiece.
      await one.client.command({
        query: `INSERT INTO ${one.database}.spans (tenant_id, timestamp, trace_id, span_id)
                SELECT ['alpha', 'beta', 'gamma'][intDiv(number, 100000) + 1], toDateTime64('${day} 00:00:00', 9) + toIntervalMillisecond(number % 100000), hex(number), hex(number)
                FROM numbers(300000)`,
      });
      const plan = await rows<{ explain: string }>(one, `EXPLAIN indexes = 1 SELECT count() FROM ${one.database}.spans WHERE tenant_id = {t:String}`, {
        t: 'beta',
      });
      const text = plan.map((p) => p.explain).join('\n');
      const primary = /PrimaryKey[\s\S]*?Granules: (\d+)\/(\d+)/.exec(text);
      if (primary === null) throw new Error(`no primary key step in plan:\n${text}`);
      const [selected, total] = [Number(primary[1]), Number(primary[2])];
      expect(total).to.be.greaterThan(30);
      expect(selected, text).to.be.at.most(Math.ceil(total / 3) + 1);
      const counted = await rows<{ n: string }>(one, `SELECT count() AS n FROM ${one.database}.spans WHERE tenant_id = {t:String}`, { t: 'beta' });
      expect(Number(counted[0]?.n)).to.equal(100000);
    });
  });
});
