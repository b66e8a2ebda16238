// Where a query's time goes in Tenantry, measured in one process over
// Tenantry's data (the embedded store is one process's, so this runs once
// Tenantry has stopped) by calling the API's pieces one after another,
// without HTTP:
//   series lookup  the sample source's selectAll (every selector of the query)
//                  up to its sample statement: the tenant's series index
//                  (cached, kept fresh in the background as the API does) and
//                  the matchers;
//   sample read    through the API's cache of recent samples: the listing
//                  of the table's parts, then the sample statement of what
//                  the cache does not hold (none when nothing is new; one
//                  per time range the selectors read) in ClickHouse, its
//                  answer handed to the process (RowBinary), then decoded
//                  and merged per series;
//   evaluation     the engine's rangeQuery over those series held in memory;
//   encoding       queryData and JSON.stringify of the envelope, as Koa does.
// Beside them, the whole path as the API runs it (rangeQuery over the
// ClickHouse source, then encoding), through this runner and through one
// with the server's store gate (one thread per embedded statement).
// The split between lookup, statement and decode comes from timing the
// runner's calls.
import { TenantScan } from '../../api/query/tenant-scan.ts';
import type { Statement } from '../../api/query/tenant-scan.ts';
import type { Principal } from '../../src/auth/api-keys.ts';
import { createPromSampleSource } from '../../api/compat/prometheus/prom-sample-store.ts';
import { parseQuery, rangeQuery, selectRanges } from '../../api/compat/prometheus/engine/engine.ts';
import type { ParsedQuery } from '../../api/compat/prometheus/engine/engine.ts';
import type { SampleSource, SelectRequest, StoredSeries } from '../../api/compat/prometheus/engine/sample-source.ts';
import { queryData } from '../../api/compat/prometheus/promql-json.ts';
import { maxQuerySamples } from '../../api/compat/prometheus/promql-query.ts';
import { SeriesIndexCache, dayOf } from '../../api/compat/prometheus/series-index.ts';
import { SampleCache } from '../../api/compat/prometheus/sample-cache.ts';
import { createQueryRunner } from '../../api/query/query-runner.ts';
import type { QueryRunner, StatementSettings } from '../../api/query/query-runner.ts';
import { createStoreGate } from '../../src/clickhouse/store-gate.ts';
import { openStore } from '../../src/clickhouse/store.ts';
import type { Store } from '../../src/clickhouse/store.ts';
import { silentLogger } from '../../src/log/logger.ts';
import { ok } from '../../src/result.ts';
import { storeGatePolicy } from '../../src/target/store-gate-policy.ts';
import type { LocalIngest, LocalIngestStats } from './local-ingest.ts';
import type { BenchQuery } from './queries.ts';
import { forTenantry } from './queries.ts';
import { fixedSettings } from '../../support/fixed-settings.ts';

/** Per query: ms of each phase, one entry per run. */
export interface PhaseTimes {
  readonly lookup: number[];
  /** Of the lookup: the index statements (the refresh of the tenant's cached index). */
  readonly indexStatement: number[];
  readonly statement: number[];
  readonly decode: number[];
  readonly evaluation: number[];
  readonly encoding: number[];
  /** The whole path as the API runs it (selects together, then evaluation and encoding). */
  readonly whole: number[];
  /** The same through a runner with the server's store gate (embedded policy: one thread per statement). */
  readonly served: number[];
  /** The selects through the cache (lookup, listing, any sample statement, decode), and the same read directly (no cache). */
  readonly cachedSelect: number[];
  readonly directSelect: number[];
  /** What the cache did over the timed runs (the lookup pass's reads). */
  cache: { hits: number; topUps: number; fills: number; refills: number; direct: number; catchUps: number };
  /** Series and samples the query read (last run). */
  series: number;
  samples: number;
}

export interface BreakdownPlan {
  readonly dataDir: string;
  readonly queries: readonly BenchQuery[];
  /** The tenant of run `r` of a query. */
  readonly tenantOf: (q: BenchQuery, r: number) => string;
  readonly runs: number;
  /** The range of every query, Unix ms. */
  readonly startMs: number;
  readonly endMs: number;
  readonly stepMs: number;
  readonly visibleFromMs: number;
  /** Bounds the whole breakdown (ms); runs left when it passes are skipped and said. */
  readonly budgetMs: number;
  /** Panels of the dashboard-like burst (one tenant's narrow queries at once); 0: none. */
  readonly burstPanels: number;
  /** Starts inserting new points into the opened store while the queries run (BENCH_PROMQL_LIVE=1). */
  readonly live?: (store: Store) => LocalIngest;
}

/** A dashboard's panels sent at once for one tenant, with the cache's listings shared and not. */
export interface BurstTimes {
  readonly tenant: string;
  readonly panels: number;
  /** ms from the burst's start to its last panel's answer, per round. */
  readonly shared: number[];
  readonly unshared: number[];
  /** Listings sent to the store per round. */
  readonly sharedListings: number[];
  readonly unsharedListings: number[];
}

export interface Breakdown {
  readonly times: ReadonlyMap<string, PhaseTimes>;
  /** ms of a tenant's first index load (a fresh cache), by kind of tenant. */
  readonly coldIndex: { readonly narrow: number[]; readonly wide: number[] };
  /** Runs skipped because the budget ran out. */
  readonly skipped: number;
  readonly burst: BurstTimes | undefined;
  /** What the local ingest did, when there was one. */
  readonly live: LocalIngestStats | undefined;
}

const lookbackMs = 300_000;
const database = 'tenantry';

/** An all-tenants key: the bench reads as the API would for any tenant. */
const everyTenant: Principal = { name: 'bench', scopes: new Set(['read'] as const), tenants: '*' };
const scanFor = (tenantId: string): TenantScan =>
  TenantScan.open({ now: () => BigInt(Date.now()) * 1_000_000n, settings: fixedSettings() }, { principal: everyTenant, tenantId }, 'metrics');

interface Ledger {
  firstStart: number | undefined;
  lastEnd: number;
  indexMs: number;
}

/** The runner, its calls timed into `ledger`: the sample statements (binary) and the index's (manyRows). */
function watched(runner: QueryRunner, ledger: Ledger): QueryRunner {
  const binary = runner.binary?.bind(runner);
  return {
    rows: <T>(statement: Statement) => runner.rows<T>(statement),
    manyRows: async <T>(statement: Statement, settings?: StatementSettings) => {
      const t = performance.now();
      // The sample cache's listing of parts starts the sample read; any other is the series index's.
      const parts = statement.sql.includes('system.parts');
      if (parts) ledger.firstStart ??= t;
      const r = await runner.manyRows<T>(statement, settings);
      if (parts) ledger.lastEnd = performance.now();
      else ledger.indexMs += performance.now() - t;
      return r;
    },
    command: (statement) => runner.command(statement),
    ...(binary === undefined
      ? {}
      : {
          binary: async (statement: Statement, settings?: StatementSettings) => {
            ledger.firstStart ??= performance.now();
            const r = await binary(statement, settings);
            ledger.lastEnd = performance.now();
            return r;
          },
        }),
  };
}

const emptyTimes = (): PhaseTimes => ({
  lookup: [],
  indexStatement: [],
  statement: [],
  decode: [],
  evaluation: [],
  encoding: [],
  whole: [],
  served: [],
  cachedSelect: [],
  directSelect: [],
  cache: { hits: 0, topUps: 0, fills: 0, refills: 0, direct: 0, catchUps: 0 },
  series: 0,
  samples: 0,
});

/** Read through a call: TypeScript would otherwise keep the value it narrowed to before the await. */
const firstStarted = (ledger: Ledger): number | undefined => ledger.firstStart;

const requestKey = (r: SelectRequest): string => JSON.stringify([r.matchers, r.minT, r.maxT]);

const encode = (value: Parameters<typeof queryData>[0]): string => JSON.stringify({ status: 'success', data: queryData(value) });

async function runOnce(
  plan: BreakdownPlan,
  store: Store,
  runners: { plain: QueryRunner; served: QueryRunner },
  index: SeriesIndexCache,
  samples: SampleCache,
  parsed: ParsedQuery,
  tenantId: string,
  into: PhaseTimes,
): Promise<void> {
  const ledger: Ledger = { firstStart: undefined, lastEnd: 0, indexMs: 0 };
  const runner = runners.plain;
  const options = {
    runner: watched(runner, ledger),
    schema: store,
    scan: scanFor(tenantId),
    visibleFromMs: plan.visibleFromMs,
    maxSamples: maxQuerySamples,
    index,
    samples,
  };
  const source = createPromSampleSource(options);
  const signal = new AbortController().signal;
  const fetched = new Map<string, readonly StoredSeries[]>();
  // Every selector at once, as the engine asks the source (one statement per time range).
  const requests = [...new Map(selectRanges(parsed, plan.startMs, plan.endMs, lookbackMs).map((r) => [requestKey(r.request), r.request])).values()];
  // (Each pass opens its own scan, as each request does: the sample cache lists the table's parts once per scan.)
  const before = samples.stats();
  const t0 = performance.now();
  const selected = await source.selectAll?.(requests, signal);
  const t1 = performance.now();
  // What the cache did for the lookup pass's reads (one per time range).
  const after = samples.stats();
  into.cache.hits += after.hits - before.hits;
  into.cache.topUps += after.topUps - before.topUps;
  into.cache.fills += after.fills - before.fills;
  into.cache.refills += after.refills - before.refills;
  into.cache.direct += after.direct - before.direct;
  into.cache.catchUps += after.catchUps - before.catchUps;
  if (selected === undefined) throw new Error('the sample source reads no selectors together');
  if (!selected.ok) throw new Error(`select for ${parsed.text} on ${tenantId}: ${selected.error.message}`);
  requests.forEach((r, i) => {
    fetched.set(requestKey(r), selected.value[i] ?? []);
  });
  // The same selects read directly: what the cache's answer (a top-up under ingest) is measured against.
  const d0 = performance.now();
  const direct = await createPromSampleSource({ ...options, runner, scan: scanFor(tenantId), samples: undefined }).selectAll?.(requests, signal);
  into.directSelect.push(performance.now() - d0);
  if (direct === undefined || !direct.ok) throw new Error(`direct select for ${parsed.text} on ${tenantId}`);
  into.cachedSelect.push(t1 - t0);
  const started = firstStarted(ledger);
  const lookup = (started ?? t1) - t0;
  const statement = started === undefined ? 0 : ledger.lastEnd - started;
  const decode = started === undefined ? 0 : t1 - ledger.lastEnd;
  const indexMs = ledger.indexMs;
  const replay: SampleSource = {
    select: (request) => {
      const held = fetched.get(requestKey(request));
      if (held === undefined) throw new Error(`the engine asked for a select selectRanges did not name: ${requestKey(request)}`);
      return Promise.resolve(ok(held));
    },
  };
  const queryOptions = { lookbackMs, maxSamples: maxQuerySamples };
  let t = performance.now();
  const answer = await rangeQuery(replay, parsed, plan.startMs, plan.endMs, plan.stepMs, queryOptions);
  const evaluation = performance.now() - t;
  if (!answer.ok) throw new Error(`evaluation of ${parsed.text}: ${answer.error.message}`);
  t = performance.now();
  encode(answer.value.value);
  const encoding = performance.now() - t;
  t = performance.now();
  const whole = await rangeQuery(
    createPromSampleSource({ ...options, runner, scan: scanFor(tenantId) }),
    parsed,
    plan.startMs,
    plan.endMs,
    plan.stepMs,
    queryOptions,
  );
  if (!whole.ok) throw new Error(`${parsed.text}: ${whole.error.message}`);
  encode(whole.value.value);
  into.whole.push(performance.now() - t);
  t = performance.now();
  const served = await rangeQuery(
    createPromSampleSource({ ...options, runner: runners.served, scan: scanFor(tenantId) }),
    parsed,
    plan.startMs,
    plan.endMs,
    plan.stepMs,
    queryOptions,
  );
  if (!served.ok) throw new Error(`${parsed.text} (served runner): ${served.error.message}`);
  encode(served.value.value);
  into.served.push(performance.now() - t);
  into.lookup.push(lookup);
  into.indexStatement.push(indexMs);
  into.statement.push(statement);
  into.decode.push(decode);
  into.evaluation.push(evaluation);
  into.encoding.push(encoding);
  const all = [...fetched.values()].flat();
  into.series = all.length;
  into.samples = all.reduce((n, s) => n + s.times.length, 0);
}

/**
 * A dashboard refreshed: `plan.burstPanels` of the narrow queries (cycled) for one tenant at once, each its own
 * request (scan) through the served runner, rounds alternating between a cache that lets requests join a listing
 * under way and one that lists once per request; both warm first, so every read is answered from an entry.
 */
async function burstOf(
  plan: BreakdownPlan,
  store: Store,
  runner: QueryRunner,
  index: SeriesIndexCache,
  queries: readonly BenchQuery[],
  tenant: string,
  deadline: number,
): Promise<BurstTimes> {
  const panels = Array.from({ length: plan.burstPanels }, (_, i) => {
    const q = queries[i % queries.length];
    const parsed = parseQuery(forTenantry(q ?? { name: '', promql: 'vector(1)' }));
    if (!parsed.ok) throw new Error(parsed.error.message);
    return parsed.value;
  });
  const caches = { shared: new SampleCache(), unshared: new SampleCache({ shareListings: false }) };
  const out: BurstTimes = { tenant, panels: panels.length, shared: [], unshared: [], sharedListings: [], unsharedListings: [] };
  const once = async (cache: SampleCache): Promise<number> => {
    await Promise.all(
      panels.map(async (p) => {
        const source = createPromSampleSource({
          runner,
          schema: store,
          scan: scanFor(tenant),
          visibleFromMs: plan.visibleFromMs,
          maxSamples: maxQuerySamples,
          index,
          samples: cache,
        });
        const a = await rangeQuery(source, p, plan.startMs, plan.endMs, plan.stepMs, { lookbackMs, maxSamples: maxQuerySamples });
        if (!a.ok) throw new Error(`${p.text}: ${a.error.message}`);
        encode(a.value.value);
      }),
    );
    return cache.stats().listings;
  };
  await once(caches.shared);
  await once(caches.unshared);
  for (let r = 0; r < plan.runs && Date.now() < deadline; r++) {
    for (const shared of r % 2 === 0 ? [true, false] : [false, true]) {
      const cache = shared ? caches.shared : caches.unshared;
      const before = cache.stats().listings;
      const t = performance.now();
      const after = await once(cache);
      (shared ? out.shared : out.unshared).push(performance.now() - t);
      (shared ? out.sharedListings : out.unsharedListings).push(after - before);
    }
  }
  return out;
}

/** Opens Tenantry's data in this process and times every query's phases. */
export async function breakdown(plan: BreakdownPlan): Promise<Breakdown> {
  const opened = await openStore({ kind: 'embedded', dataDir: plan.dataDir, database });
  if (!opened.ok) throw new Error(opened.error);
  const store = opened.value;
  try {
    const runner = createQueryRunner(store, 60_000, silentLogger);
    // As the server composes it (src/target/server-process.ts), with no ingest going on.
    const runners = {
      plain: runner,
      served: createQueryRunner(store, 60_000, silentLogger, createStoreGate(storeGatePolicy('embedded', undefined, undefined))),
    };
    const deadline = Date.now() + plan.budgetMs;
    // A tenant's first index load, on a fresh cache each (the API pays it once per tenant and full-reload period).
    const coldIndex = { narrow: [] as number[], wide: [] as number[] };
    for (const wide of [false, true]) {
      const tenants = [
        ...new Set(plan.queries.filter((q) => (q.wide === true) === wide).flatMap((q) => Array.from({ length: plan.runs }, (_, r) => plan.tenantOf(q, r)))),
      ];
      for (const tenant of tenants.slice(0, 5)) {
        if (Date.now() >= deadline) break;
        const t = performance.now();
        // No background refresh: this cache is dropped at once.
        const loaded = await new SeriesIndexCache({ activeMs: 0 }).get(runner, store, scanFor(tenant), dayOf(plan.visibleFromMs));
        if (!loaded.ok) throw new Error(loaded.error.message);
        (wide ? coldIndex.wide : coldIndex.narrow).push(performance.now() - t);
      }
    }
    // As the API holds them: one per process, keyed by tenant, told of the embedded store's writes.
    const writes = store.writes === undefined ? {} : { writes: store.writes };
    const index = new SeriesIndexCache(writes);
    const samples = new SampleCache({ ...writes, followWrites: true });
    const ingest = plan.live?.(store);
    const times = new Map<string, PhaseTimes>();
    let skipped = 0;
    for (const q of plan.queries) {
      const parsed = parseQuery(forTenantry(q));
      if (!parsed.ok) throw new Error(`${q.name}: ${parsed.error.message}`);
      const into = emptyTimes();
      // One untimed run per tenant first: the index cached, as in the timed HTTP runs.
      const tenants = [...new Set(Array.from({ length: plan.runs }, (_, r) => plan.tenantOf(q, r)))];
      for (const tenant of tenants) if (Date.now() < deadline) await runOnce(plan, store, runners, index, samples, parsed.value, tenant, emptyTimes());
      for (let r = 0; r < plan.runs; r++) {
        if (Date.now() >= deadline) {
          skipped += 1;
          continue;
        }
        await runOnce(plan, store, runners, index, samples, parsed.value, plan.tenantOf(q, r), into);
      }
      times.set(q.name, into);
    }
    const narrow = plan.queries.filter((q) => q.wide !== true);
    const first = narrow[0];
    const burst =
      plan.burstPanels > 0 && first !== undefined && Date.now() < deadline
        ? await burstOf(plan, store, runners.served, index, narrow, plan.tenantOf(first, 0), deadline)
        : undefined;
    const live = await ingest?.stop();
    samples.close();
    return { times, coldIndex, skipped, burst, live };
  } finally {
    await store.close();
  }
}
