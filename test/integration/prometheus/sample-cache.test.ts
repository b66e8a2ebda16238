// The API's cache of recent samples (sample-cache.ts) over embedded
// ClickHouse: a repeated read costs only the parts listing, rows inserted
// since are read (only them) and answered at once, merges and mutations do
// not duplicate or resurrect rows, tenants never see each other's entries,
// and the bytes held stay within the per-tenant and total bounds.
import { expect } from 'chai';
import { createPromSampleSource } from '../../../api/compat/prometheus/prom-sample-store.ts';
import type { LabelMatcher, StoredSeries } from '../../../api/compat/prometheus/engine/sample-source.ts';
import { SampleCache, highestMutation } from '../../../api/compat/prometheus/sample-cache.ts';
import { SeriesIndexCache } from '../../../api/compat/prometheus/series-index.ts';
import { createQueryRunner } from '../../../api/query/query-runner.ts';
import type { QueryRunner } from '../../../api/query/query-runner.ts';
import type { Statement } from '../../../api/query/tenant-scan.ts';
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { remoteWriteScope } from '../../../src/prometheus/remote-write-scope.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { scanOf } from '../../support/tenant-scans.ts';
import { insertRows, logRow, metricRow } from '../api/support/telemetry-rows.ts';

const T0 = Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000;
const ns = (ms: number): bigint => BigInt(ms) * 1_000_000n;
const at = (s: number): number => T0 + s * 1000;
const never = new AbortController().signal;
const named = (name: string): LabelMatcher[] => [{ name: '__name__', op: '=', value: name }];

/** A remote-written gauge row of `tenant`'s series `name{k=v}`. */
const row = (tenant: string, name: string, s: number, value: number, v = 'a'): Record<string, unknown> => ({
  ...metricRow({ tenant, name, ns: ns(at(s)), value, resource: { 'service.name': 'node' }, attrs: { k: v } }),
  scope_name: remoteWriteScope.name,
});

/** The sample statements a runner was given (binary), and every statement's text. */
interface Seen {
  samples: string[];
  all: string[];
}

function watched(runner: QueryRunner, seen: Seen): QueryRunner {
  const binary = runner.binary?.bind(runner);
  return {
    rows: <T>(s: Statement) => {
      seen.all.push(s.sql);
      return runner.rows<T>(s);
    },
    manyRows: <T>(s: Statement) => {
      seen.all.push(s.sql);
      return runner.manyRows<T>(s);
    },
    command: (s) => {
      seen.all.push(s.sql);
      return runner.command(s);
    },
    ...(binary === undefined
      ? {}
      : {
          binary: (s: Statement) => {
            seen.samples.push(s.sql);
            seen.all.push(s.sql);
            return binary(s);
          },
        }),
  };
}

const points = (series: readonly StoredSeries[]): [string, number[], number[]][] =>
  series.map((s) => [s.labels.map(([k, v]) => `${k}=${v}`).join(','), [...s.times].map((t) => (t - T0) / 1000), [...s.values]]);

describe('prometheus: the cache of recent samples', function () {
  this.timeout(60_000);
  let store: Store;
  let runner: QueryRunner;
  let index: SeriesIndexCache;

  before(async () => {
    store = await migratedStore('sample_cache');
    runner = createQueryRunner(store, 10_000, silentLogger);
    index = new SeriesIndexCache({ refreshMs: 0 });
  });
  after(async () => {
    await store.close();
  });

  /** Selects `name` for `tenant` over the last hour through `cache`, the statements seen. */
  async function select(cache: SampleCache, tenant: string, name: string, seen: Seen = { samples: [], all: [] }, visibleFromMs = 0): Promise<StoredSeries[]> {
    const source = createPromSampleSource({
      runner: watched(runner, seen),
      schema: store,
      scan: scanOf(tenant, 'metrics', BigInt(Date.now()) * 1_000_000n),
      visibleFromMs,
      maxSamples: 1_000_000,
      index,
      samples: cache,
    });
    const r = await source.select({ matchers: named(name), minT: T0 - 1, maxT: Date.now() }, never);
    if (!r.ok) throw new Error(`${r.error.type}: ${r.error.message}`);
    return [...r.value];
  }

  it('answers a repeated read from the entry, with only the parts listed, and reads only new parts after an insert', async () => {
    await insertRows(
      store,
      'metrics',
      [0, 15, 30].map((s) => row('acme', 'fresh_gauge', s, s)),
    );
    const cache = new SampleCache();
    const first = await select(cache, 'acme', 'fresh_gauge');
    expect(points(first)).to.deep.equal([['__name__=fresh_gauge,job=node,k=a', [0, 15, 30], [0, 15, 30]]]);
    const seen: Seen = { samples: [], all: [] };
    expect(points(await select(cache, 'acme', 'fresh_gauge', seen))).to.deep.equal(points(first));
    expect(seen.samples, 'no sample statement on a hit').to.deep.equal([]);
    expect(seen.all.some((s) => s.includes('system.parts'))).to.equal(true);

    // Inserted after the entry was filled: the next read has it, reading only the parts the entry does not hold.
    await insertRows(
      store,
      'metrics',
      [45, 60].map((s) => row('acme', 'fresh_gauge', s, s)),
    );
    const after: Seen = { samples: [], all: [] };
    expect(points(await select(cache, 'acme', 'fresh_gauge', after))).to.deep.equal([
      ['__name__=fresh_gauge,job=node,k=a', [0, 15, 30, 45, 60], [0, 15, 30, 45, 60]],
    ]);
    expect(after.samples).to.have.length(1);
    expect(after.samples[0]).to.include('_part NOT IN');
  });

  it('sends no statement at all while nothing was written (the embedded write epoch), and sees the next insert and mutation', async () => {
    await insertRows(store, 'metrics', [0, 15, 30].map((s) => row('acme', 'quiet_gauge', s, s)).concat([row('globex', 'quiet_gauge', 0, 7)]));
    const cache = new SampleCache({ writes: store.writes });
    const want = [['__name__=quiet_gauge,job=node,k=a', [0, 15, 30], [0, 15, 30]]];
    expect(points(await select(cache, 'acme', 'quiet_gauge'))).to.deep.equal(want);
    const quiet: Seen = { samples: [], all: [] };
    expect(points(await select(cache, 'acme', 'quiet_gauge', quiet))).to.deep.equal(want);
    expect(quiet.all.filter((q) => q.includes('system.parts')).length + quiet.samples.length, 'neither a listing nor a sample statement').to.equal(0);
    // Another tenant's first read fills its own entry: the listing is reused, its rows are read.
    const other: Seen = { samples: [], all: [] };
    expect(points(await select(cache, 'globex', 'quiet_gauge', other))).to.deep.equal([['__name__=quiet_gauge,job=node,k=a', [0], [7]]]);
    expect(other.samples, "its own entry's rows").to.have.length(1);
    expect(
      other.all.some((q) => q.includes('system.parts')),
      'the listing names parts, no rows: reused across tenants',
    ).to.equal(false);
    expect(cache.stats().reused).to.equal(2);

    // A write to another table (the gateway's logs, spans, usage rows) leaves the metrics table's epoch: still no statement.
    await insertRows(store, 'logs', [logRow({ tenant: 'acme', ns: ns(at(0)), logId: 'quiet-1', body: 'not a sample' })]);
    const afterLogs: Seen = { samples: [], all: [] };
    expect(points(await select(cache, 'acme', 'quiet_gauge', afterLogs))).to.deep.equal(want);
    expect(afterLogs.all.filter((q) => q.includes('system.parts')).length + afterLogs.samples.length, "a logs INSERT is not the metrics table's").to.equal(0);

    // An insert moves the epoch: the next read lists the parts again and reads the new one.
    await insertRows(
      store,
      'metrics',
      [45].map((s) => row('acme', 'quiet_gauge', s, s)),
    );
    const after: Seen = { samples: [], all: [] };
    expect(points(await select(cache, 'acme', 'quiet_gauge', after))).to.deep.equal([['__name__=quiet_gauge,job=node,k=a', [0, 15, 30, 45], [0, 15, 30, 45]]]);
    expect(after.all.some((q) => q.includes('system.parts'))).to.equal(true);

    // So does a mutation: rows it deleted are not answered from the entry.
    await store.client.command({
      query: `ALTER TABLE ${queryTable(store, 'metrics')} DELETE WHERE metric_name = 'quiet_gauge' AND timestamp > fromUnixTimestamp64Milli(${at(20)})`,
      clickhouse_settings: { mutations_sync: '2' },
    });
    expect(points(await select(cache, 'acme', 'quiet_gauge'))).to.deep.equal([['__name__=quiet_gauge,job=node,k=a', [0, 15], [0, 15]]]);
  });

  it('lists the parts once for all the reads of one request', async () => {
    await insertRows(
      store,
      'metrics',
      [0, 15, 30, 45].map((s) => row('acme', 'twice_gauge', s, s)),
    );
    const seen: Seen = { samples: [], all: [] };
    const source = createPromSampleSource({
      runner: watched(runner, seen),
      schema: store,
      scan: scanOf('acme', 'metrics', BigInt(Date.now()) * 1_000_000n),
      visibleFromMs: 0,
      maxSamples: 1_000_000,
      index,
      samples: new SampleCache(),
    });
    // Two time ranges (as `x / x offset 1m` asks): one listing, and the second range is inside the entry the first filled.
    const r = await source.selectAll?.(
      [
        { matchers: named('twice_gauge'), minT: T0 - 1, maxT: Date.now() },
        { matchers: named('twice_gauge'), minT: T0 + 20_000, maxT: Date.now() - 60_000 },
      ],
      never,
    );
    if (r === undefined || !r.ok) throw new Error('selectAll failed');
    expect(r.value.map((series) => series[0]?.times.length)).to.deep.equal([4, 2]);
    expect(seen.samples).to.have.length(1);
    expect(seen.all.filter((s) => s.includes('system.parts'))).to.have.length(1);
  });

  it('lets a request join a listing under way only when the listing started after the request began', async () => {
    await insertRows(
      store,
      'metrics',
      [0, 15].map((s) => row('acme', 'joined_gauge', s, s)),
    );
    const cache = new SampleCache();
    expect(points(await select(cache, 'acme', 'joined_gauge'))[0]?.[1]).to.deep.equal([0, 15]);
    // The first listing after this runs in the store at once, its answer held until released.
    let release = (): void => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const state = { firstListed: false, holding: true };
    const holdingRunner: QueryRunner = {
      ...watched(runner, { samples: [], all: [] }),
      manyRows: async <T>(s: Statement) => {
        const answer = await runner.manyRows<T>(s);
        if (s.sql.includes('system.parts') && state.holding) {
          state.holding = false;
          state.firstListed = true;
          await held;
        }
        return answer;
      },
    };
    const sourceOf = (through: QueryRunner): ReturnType<typeof createPromSampleSource> =>
      createPromSampleSource({
        runner: through,
        schema: store,
        scan: scanOf('acme', 'metrics', BigInt(Date.now()) * 1_000_000n),
        visibleFromMs: 0,
        maxSamples: 1_000_000,
        index,
        samples: cache,
      });
    const ask = async (source: ReturnType<typeof createPromSampleSource>): Promise<StoredSeries[]> => {
      const r = await source.select({ matchers: named('joined_gauge'), minT: T0 - 1, maxT: Date.now() + 60_000 }, never);
      if (!r.ok) throw new Error(r.error.message);
      return [...r.value];
    };
    const before = cache.stats();
    // B begins, then A's listing starts (and has run in the store), then a row is inserted, then C begins.
    const sourceB = sourceOf(runner);
    const pA = ask(sourceOf(holdingRunner));
    const deadline = Date.now() + 20_000;
    while (!state.firstListed) {
      if (Date.now() > deadline) throw new Error("A's listing never ran");
      await new Promise((r) => setTimeout(r, 5));
    }
    await insertRows(
      store,
      'metrics',
      [30].map((s) => row('acme', 'joined_gauge', s, s)),
    );
    const pB = ask(sourceB);
    while (cache.stats().joined === before.joined) {
      if (Date.now() > deadline) throw new Error('B never joined the listing under way');
      await new Promise((r) => setTimeout(r, 5));
    }
    const sourceC = sourceOf(runner);
    // C must list for itself (A's listing misses the new part): it answers while A's listing is still held.
    const pC = ask(sourceC);
    const timedOut = new Promise<'timeout'>((r) => {
      setTimeout(() => {
        r('timeout');
      }, 10_000);
    });
    const c = await Promise.race([pC, timedOut]);
    release();
    expect(c, "C waited for A's listing").to.not.equal('timeout');
    expect(points(c === 'timeout' ? await pC : c)[0]?.[1], "C's answer").to.deep.equal([0, 15, 30]);
    await Promise.all([pA, pB]);
    const after = cache.stats();
    expect(after.listings - before.listings, "A's listing and C's").to.equal(2);
    expect(after.joined - before.joined, 'B joined').to.equal(1);
  });

  it("answers from an entry only what the tenant's retention still shows", async () => {
    await insertRows(
      store,
      'metrics',
      [0, 15, 30, 45].map((s) => row('acme', 'retained_gauge', s, s)),
    );
    const cache = new SampleCache();
    expect(points(await select(cache, 'acme', 'retained_gauge'))).to.deep.equal([['__name__=retained_gauge,job=node,k=a', [0, 15, 30, 45], [0, 15, 30, 45]]]);
    // Retention moved on (the scan's visible start): the entry still holds the older rows, the answer does not.
    const seen: Seen = { samples: [], all: [] };
    expect(points(await select(cache, 'acme', 'retained_gauge', seen, at(20)))).to.deep.equal([['__name__=retained_gauge,job=node,k=a', [30, 45], [30, 45]]]);
    expect(seen.samples).to.deep.equal([]);
  });

  it('tops up bucket and native histogram rows as a direct read answers them', async () => {
    const resource = { 'service.name': 'node' };
    const classic = (s: number, i: number): Record<string, unknown> =>
      metricRow({
        tenant: 'acme',
        name: 'hist_classic',
        type: 'histogram',
        temporality: 'cumulative',
        ns: ns(at(s)),
        resource,
        count: 10 * i,
        sum: 2.5 * i,
        bounds: [0.1, 1],
        buckets: [2 * i, 3 * i, 5 * i],
      });
    const native = (s: number, i: number): Record<string, unknown> =>
      metricRow({
        tenant: 'acme',
        name: 'hist_native',
        type: 'exponential_histogram',
        temporality: 'cumulative',
        ns: ns(at(s)),
        resource,
        count: 12 * i,
        sum: 1.5 * i,
        expScale: 2,
        expZero: i,
        expPosOffset: 1,
        expPos: [i, 2 * i, 3 * i],
        expNegOffset: -1,
        expNeg: [i],
      });
    await insertRows(store, 'metrics', [classic(0, 1), classic(15, 2), native(0, 1), native(15, 2)]);
    const regex: LabelMatcher[] = [{ name: '__name__', op: '=~', value: 'hist_.*' }];
    const cache = new SampleCache();
    const read = async (through: SampleCache | undefined): Promise<string> => {
      const source = createPromSampleSource({
        runner,
        schema: store,
        scan: scanOf('acme', 'metrics', BigInt(Date.now()) * 1_000_000n),
        visibleFromMs: 0,
        maxSamples: 1_000_000,
        index,
        ...(through === undefined ? {} : { samples: through }),
      });
      const r = await source.select({ matchers: regex, minT: T0 - 1, maxT: Date.now() }, never);
      if (!r.ok) throw new Error(r.error.message);
      return JSON.stringify(r.value.map((x) => ({ labels: x.labels, times: [...x.times], values: [...x.values], histograms: x.histograms })));
    };
    const before = await read(cache);
    expect(before).to.equal(await read(undefined));
    await insertRows(store, 'metrics', [classic(30, 3), classic(45, 4), native(30, 3), native(45, 4)]);
    const after = await read(cache);
    expect(after).to.equal(await read(undefined));
    expect(after).to.not.equal(before);
    // Bucket series (3 le values), _sum, _count and the native series, each with 4 points.
    const parsed = JSON.parse(after) as { times: number[] }[];
    expect(parsed.length).to.be.greaterThan(1);
    expect(parsed.map((x) => x.times.length)).to.deep.equal(parsed.map(() => 4));
  });

  it('neither duplicates rows when parts merge nor keeps rows a mutation deleted', async () => {
    await insertRows(
      store,
      'metrics',
      [0, 15].map((s) => row('acme', 'merged_gauge', s, s)),
    );
    await insertRows(
      store,
      'metrics',
      [30].map((s) => row('acme', 'merged_gauge', s, s)),
    );
    const cache = new SampleCache();
    const want = [['__name__=merged_gauge,job=node,k=a', [0, 15, 30], [0, 15, 30]]];
    expect(points(await select(cache, 'acme', 'merged_gauge'))).to.deep.equal(want);
    await store.client.command({ query: `OPTIMIZE TABLE ${queryTable(store, 'metrics')} FINAL` });
    expect(points(await select(cache, 'acme', 'merged_gauge'))).to.deep.equal(want);

    await store.client.command({
      query: `ALTER TABLE ${queryTable(store, 'metrics')} DELETE WHERE metric_name = 'merged_gauge' AND timestamp > fromUnixTimestamp64Milli(${at(20)})`,
      clickhouse_settings: { mutations_sync: '2' },
    });
    expect(points(await select(cache, 'acme', 'merged_gauge'))).to.deep.equal([['__name__=merged_gauge,job=node,k=a', [0, 15], [0, 15]]]);
  });

  it("never answers one tenant from another's entry, though their series ids are equal", async () => {
    // Same name and labels: the same stored series id in both tenants.
    await insertRows(store, 'metrics', [
      ...[0, 15].map((s) => row('tenant-a', 'shared_gauge', s, 1)),
      ...[0, 15].map((s) => row('tenant-b', 'shared_gauge', s, 2)),
    ]);
    const cache = new SampleCache();
    expect(points(await select(cache, 'tenant-a', 'shared_gauge'))).to.deep.equal([['__name__=shared_gauge,job=node,k=a', [0, 15], [1, 1]]]);
    expect(cache.bytes('tenant-a')).to.be.greaterThan(0);
    const seen: Seen = { samples: [], all: [] };
    expect(points(await select(cache, 'tenant-b', 'shared_gauge', seen))).to.deep.equal([['__name__=shared_gauge,job=node,k=a', [0, 15], [2, 2]]]);
    expect(seen.samples, "tenant-b's own statement, not tenant-a's entry").to.have.length(1);
    expect(points(await select(cache, 'tenant-c', 'shared_gauge'))).to.deep.equal([]);
    expect(cache.bytes('tenant-c')).to.equal(0);
  });

  it('holds at most its per-tenant and total bytes: a tenant pushes out its own entries, not all of the others', async () => {
    // 40 points of 16 bytes (time and value) per series: 640 bytes per entry.
    const names = ['bound_a', 'bound_b', 'bound_c', 'bound_d'];
    await insertRows(store, 'metrics', [
      ...names.flatMap((n) => Array.from({ length: 40 }, (_, i) => row('heavy', n, i * 15, i))),
      ...Array.from({ length: 40 }, (_, i) => row('light', 'bound_a', i * 15, i)),
    ]);
    const cache = new SampleCache({ maxTenantBytes: 1500, maxBytes: 2200 });
    await select(cache, 'light', 'bound_a');
    const light = cache.bytes('light');
    expect(light).to.equal(640);
    for (const n of names) {
      const got = await select(cache, 'heavy', n);
      expect(got[0]?.times.length).to.equal(40);
      expect(cache.bytes('heavy')).to.be.at.most(1500);
      expect(cache.bytes()).to.be.at.most(2200);
    }
    // heavy holds two entries (1280 bytes) at most: light's entry is still there, answered without a sample statement.
    expect(cache.bytes('heavy')).to.equal(1280);
    const seen: Seen = { samples: [], all: [] };
    expect((await select(cache, 'light', 'bound_a', seen))[0]?.times.length).to.equal(40);
    expect(seen.samples).to.deep.equal([]);
    // An answer larger than a tenant's share is not kept at all.
    const tiny = new SampleCache({ maxTenantBytes: 600 });
    expect((await select(tiny, 'light', 'bound_a'))[0]?.times.length).to.equal(40);
    expect(tiny.bytes()).to.equal(0);
  });

  describe('a top-up after a merge of held and new parts', () => {
    before(async () => {
      // Ballast in another day's partition, held by every entry and untouched by the merges below, so that a merged
      // part holds fewer than half of the table's rows: entries are topped up, not filled again.
      const twoDaysAgo = Date.now() - 2 * 86_400_000;
      await insertRows(
        store,
        'metrics',
        Array.from({ length: 3000 }, (_, i) => ({
          ...metricRow({ tenant: 'ballast', name: 'ballast_gauge', ns: ns(twoDaysAgo + i * 1000), value: i, resource: { 'service.name': 'node' } }),
          scope_name: remoteWriteScope.name,
        })),
      );
    });

    /**
     * Fills an entry of `name` from two parts (`held`), inserts `fresh`, merges the partitions holding `name`'s rows
     * (one part none of whose names the entry holds) and reads again: the answer, topped up once, never filled again.
     */
    async function toppedUpAfterMerge(name: string, held: readonly (readonly number[])[], fresh: readonly number[]): Promise<[string, number[], number[]][]> {
      for (const part of held) {
        await insertRows(
          store,
          'metrics',
          part.map((s) => row('acme', name, s, s)),
        );
      }
      const cache = new SampleCache();
      expect(points(await select(cache, 'acme', name))[0]?.[1]).to.deep.equal(held.flat());
      await insertRows(
        store,
        'metrics',
        fresh.map((s) => row('acme', name, s, s)),
      );
      const ids = await store.client.query({
        query: `SELECT DISTINCT _partition_id AS id FROM ${queryTable(store, 'metrics')} WHERE metric_name = {name:String}`,
        query_params: { name },
        format: 'JSONEachRow',
      });
      for (const { id } of await ids.json<{ id: string }>()) {
        await store.client.command({ query: `OPTIMIZE TABLE ${queryTable(store, 'metrics')} PARTITION ID {id:String} FINAL`, query_params: { id } });
      }
      const before = cache.stats();
      const seen: Seen = { samples: [], all: [] };
      const got = points(await select(cache, 'acme', name, seen));
      const after = cache.stats();
      // Its own entry behind the listing: brought up to date by the cache's catch-up, one statement.
      expect(after.topUps - before.topUps + after.catchUps - before.catchUps, 'one top-up').to.equal(1);
      expect(after.refills - before.refills, 'not filled again').to.equal(0);
      expect(seen.samples).to.have.length(1);
      expect(seen.samples[0]).to.include('_part NOT IN');
      // The entry keeps what the top-up made (a hit answers the same), and a fresh cache's read is the direct answer.
      const hit: Seen = { samples: [], all: [] };
      expect(points(await select(cache, 'acme', name, hit)), 'the entry after the top-up').to.deep.equal(got);
      expect(hit.samples).to.deep.equal([]);
      expect(points(await select(new SampleCache(), 'acme', name)), 'a fresh read').to.deep.equal(got);
      return got;
    }

    it('appends only the rows newer than the entry holds: none dropped, none twice', async () => {
      // The merged part's rows: 0, 15, 30 held, 45 and 60 newer than any held.
      expect(await toppedUpAfterMerge('appended_gauge', [[0, 15], [30]], [45, 60])).to.deep.equal([
        ['__name__=appended_gauge,job=node,k=a', [0, 15, 30, 45, 60], [0, 15, 30, 45, 60]],
      ]);
    });

    it("keeps a late row older than the entry's last that the entry does not hold", async () => {
      // 20 arrived late (older than the held 30): appending only what is newer than 30 would drop it.
      expect(await toppedUpAfterMerge('late_gauge', [[0, 15], [30]], [20, 45])).to.deep.equal([
        ['__name__=late_gauge,job=node,k=a', [0, 15, 20, 30, 45], [0, 15, 20, 30, 45]],
      ]);
    });
  });

  describe('catch-up: every entry behind a listing brought up to date in one statement', () => {
    /** `tenant`'s gauge `name` at seconds `seconds`, valued `scale` × the second (tenants share series ids: same labels). */
    const rows = (tenant: string, name: string, seconds: readonly number[], scale: number): Record<string, unknown>[] =>
      seconds.map((s) => row(tenant, name, s, s * scale));

    it("reads the new rows of every tenant's entries at once, each tenant's only into its own entries", async () => {
      // Two tenants with the same series (one stored series id) but different values, two metrics each.
      await insertRows(store, 'metrics', [...rows('acme', 'cu_a', [0, 15], 1), ...rows('globex', 'cu_a', [0, 15], 100), ...rows('acme', 'cu_b', [0], 1)]);
      const cache = new SampleCache({ writes: store.writes });
      await select(cache, 'acme', 'cu_a');
      await select(cache, 'globex', 'cu_a');
      await select(cache, 'acme', 'cu_b');
      await insertRows(store, 'metrics', [...rows('acme', 'cu_a', [30], 1), ...rows('globex', 'cu_a', [30, 45], 100), ...rows('acme', 'cu_b', [30], 1)]);
      const before = cache.stats();
      const first: Seen = { samples: [], all: [] };
      expect(points(await select(cache, 'acme', 'cu_a', first))).to.deep.equal([['__name__=cu_a,job=node,k=a', [0, 15, 30], [0, 15, 30]]]);
      expect(first.samples, 'one statement').to.have.length(1);
      expect(first.samples[0]).to.include('indexOf(');
      // The others were caught up by that statement: no sample statement, each tenant's own values.
      const rest: Seen = { samples: [], all: [] };
      expect(points(await select(cache, 'globex', 'cu_a', rest))).to.deep.equal([['__name__=cu_a,job=node,k=a', [0, 15, 30, 45], [0, 1500, 3000, 4500]]]);
      expect(points(await select(cache, 'acme', 'cu_b', rest))).to.deep.equal([['__name__=cu_b,job=node,k=a', [0, 30], [0, 30]]]);
      expect(rest.samples, 'no sample statement for the entries caught up').to.deep.equal([]);
      const after = cache.stats();
      expect(after.catchUps - before.catchUps).to.equal(1);
      expect(after.caughtUp - before.caughtUp).to.equal(3);
      expect(after.topUps - before.topUps).to.equal(0);
      // Equal to fresh caches' reads.
      for (const [tenant, name] of [
        ['acme', 'cu_a'],
        ['globex', 'cu_a'],
        ['acme', 'cu_b'],
      ] as const) {
        expect(points(await select(cache, tenant, name)), `${tenant} ${name}`).to.deep.equal(points(await select(new SampleCache(), tenant, name)));
      }
    });

    it("catches up as soon as a metrics INSERT ends, before a read asks (the API's cache follows the store's writes)", async () => {
      await insertRows(store, 'metrics', rows('acme', 'cu_bg', [0], 1));
      const cache = new SampleCache({ writes: store.writes, followWrites: true });
      try {
        await select(cache, 'acme', 'cu_bg');
        const before = cache.stats();
        await insertRows(store, 'metrics', rows('acme', 'cu_bg', [15], 1));
        // No event reaches the test when the cache has caught up: poll its counter, with a deadline.
        const deadline = Date.now() + 10_000;
        while (cache.stats().background === before.background) {
          if (Date.now() > deadline) throw new Error('no catch-up within 10 s of the INSERT');
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        const seen: Seen = { samples: [], all: [] };
        expect(points(await select(cache, 'acme', 'cu_bg', seen))).to.deep.equal([['__name__=cu_bg,job=node,k=a', [0, 15], [0, 15]]]);
        expect(seen.samples, 'the read found its entry current').to.deep.equal([]);
        // A log INSERT leaves the metrics table alone: no catch-up follows it.
        const quiet = cache.stats();
        await insertRows(store, 'logs', [logRow({ tenant: 'acme', ns: ns(at(0)), logId: 'bg-1', body: 'not a metric' })]);
        await select(cache, 'acme', 'cu_bg');
        expect(cache.stats().listings - quiet.listings + cache.stats().catchUps - quiet.catchUps).to.equal(0);
      } finally {
        cache.close();
      }
    });

    it('leaves out entries not read for five minutes: they top up by themselves when read again', async () => {
      await insertRows(store, 'metrics', [...rows('acme', 'cu_idle', [0], 1), ...rows('acme', 'cu_busy', [0], 1)]);
      let clock = Date.now();
      const cache = new SampleCache({ writes: store.writes, now: () => clock });
      await select(cache, 'acme', 'cu_idle');
      clock += 4 * 60_000;
      await select(cache, 'acme', 'cu_busy');
      clock += 2 * 60_000;
      await insertRows(store, 'metrics', [...rows('acme', 'cu_idle', [15], 1), ...rows('acme', 'cu_busy', [15], 1)]);
      const before = cache.stats();
      expect(points(await select(cache, 'acme', 'cu_busy'))).to.deep.equal([['__name__=cu_busy,job=node,k=a', [0, 15], [0, 15]]]);
      expect(cache.stats().caughtUp - before.caughtUp, 'only the entry read within five minutes').to.equal(1);
      const idle: Seen = { samples: [], all: [] };
      expect(points(await select(cache, 'acme', 'cu_idle', idle))).to.deep.equal([['__name__=cu_idle,job=node,k=a', [0, 15], [0, 15]]]);
      expect(idle.samples, 'its own top-up').to.have.length(1);
    });

    it('reads nothing for a merge of parts the entry holds, and stays exact when a merge takes in a new block', async () => {
      await insertRows(store, 'metrics', rows('acme', 'cu_merge', [0], 1));
      await insertRows(store, 'metrics', rows('acme', 'cu_merge', [15], 1));
      const cache = new SampleCache({ writes: store.writes });
      await select(cache, 'acme', 'cu_merge');
      // Every part merged, no new row: the merged parts' highest blocks are within the entry's watermark.
      await store.client.command({ query: `OPTIMIZE TABLE ${queryTable(store, 'metrics')} FINAL` });
      const merged: Seen = { samples: [], all: [] };
      expect(points(await select(cache, 'acme', 'cu_merge', merged))).to.deep.equal([['__name__=cu_merge,job=node,k=a', [0, 15], [0, 15]]]);
      expect(merged.samples, 'no sample statement after a merge of held parts').to.deep.equal([]);
      // A new block, merged at once with the held ones: read again, duplicates dropped.
      await insertRows(store, 'metrics', rows('acme', 'cu_merge', [10, 30], 1));
      await store.client.command({ query: `OPTIMIZE TABLE ${queryTable(store, 'metrics')} FINAL` });
      const grown: Seen = { samples: [], all: [] };
      const got = points(await select(cache, 'acme', 'cu_merge', grown));
      expect(got).to.deep.equal([['__name__=cu_merge,job=node,k=a', [0, 10, 15, 30], [0, 10, 15, 30]]]);
      expect(grown.samples).to.have.length(1);
      expect(got).to.deep.equal(points(await select(new SampleCache(), 'acme', 'cu_merge')));
    });
  });

  it('reads the mutation version from part names', () => {
    expect(highestMutation(['90-20261129_1_4_1', '90-20261129_5_5_0'])).to.equal(0);
    expect(highestMutation(['90-20261129_1_4_1_7', '90-20261129_5_5_0'])).to.equal(7);
  });
});
