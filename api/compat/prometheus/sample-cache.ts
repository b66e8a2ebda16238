// A per-tenant cache of recent samples in the API process, so that a
// dashboard refreshed does not pay ClickHouse's sample statement (10-20 ms
// for a few thousand rows, most of it fixed cost) on every panel.
//
// An entry is one tenant's answer to one read shape (the stored series ids,
// their metric names and the columns read) from a start time to the read's
// end (an hour past now when the read ends near now), and the watermark of
// the metrics table's active parts listed just before that read: their
// highest block number. A single node's MergeTree numbers each inserted part
// from one counter per table, and takes the number and makes the part
// active under one lock, so every block numbered up to the watermark was
// active at that listing and its rows were in the read; a part merged since
// holds only blocks of its number range. A later read of the same shape
// first lists the active parts again (system.parts: one small statement,
// no row of any tenant): a part whose highest block is at most the entry's
// watermark holds nothing new (a merge of held parts costs no read), and
// only the rows of the other parts are read, `_part NOT IN` the held ones
// (new inserts, and merges that took in a new block, whose held rows are
// read again: duplicates are dropped, the first read kept). So an answer
// is exactly as fresh as a direct read: nothing acknowledged and inserted
// before the query started is missed. A mutation (a part whose mutation
// version is new: ALTER ... DELETE, a TTL materialized) drops the entry, as
// it may have removed rows the entry holds.
//
// Catch-up: under ingest every entry falls behind at each INSERT into the
// metrics table, and a top-up is a statement of its own (a few ms of fixed
// cost in ClickHouse). So the first read that finds its entry behind a
// listing brings every entry behind it (any tenant's, up to a bound of rows)
// up to that listing in one statement, run in that read's turn and budget
// for the cache (TenantScan.cacheStatement: bound to exactly the tenants of
// those entries); each row comes back keyed by its tenant and series, so it
// reaches only its own tenant's entries. Reads of other entries, and the
// next refreshes of every dashboard, then need no statement until the next
// INSERT. Concurrent reads wait for the catch-up under way rather than
// start their own.
//
// Concurrent requests of a tenant share one listing when that is exact: a
// listing that started after a request began is as fresh as one the request
// would start itself, so a request joins a listing under way only if it
// started after the request began (a dashboard's panels, sent at once, pay
// one or two listings instead of one each); never one that started before.
// Order is a counter, not a clock, so that two events in one millisecond
// are still ordered.
//
// Embedded ClickHouse needs no listing while nothing was written to the
// metrics table: the process owns its store and counts every statement
// that may write, per table (src/clickhouse/write-epoch.ts). A listing taken
// while no such write was in flight stays the listing as long as the
// table's epoch has not moved, so a read then reuses it, whoever's request
// took it (it names parts, no tenant's rows): an idle dashboard's refresh
// sends no statement at all, and under ingest only the first read after
// each metrics INSERT lists again (log, span and usage INSERTs do not).
//
// Bounded: at most `maxTenantBytes` per tenant (its own least recently used
// entries go first) and `maxBytes` in all (the least recently used of any
// tenant), so one tenant can push out at most its own share of others'
// entries. Keyed by tenant first: a read sees only its scan's tenant's
// entries. Only a single node's table is cached (a cluster's parts are on
// its shards), only reads of at most a day, and an answer over the read's
// row budget is not kept.
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import type { SchemaTarget } from '../../../src/clickhouse/schema/ddl.ts';
import type { WriteEpoch } from '../../../src/clickhouse/write-epoch.ts';
import type { Result } from '../../../src/result.ts';
import { ok } from '../../../src/result.ts';
import type { ApiError } from '../../http/api-error.ts';
import type { QueryRunner } from '../../query/query-runner.ts';
import type { TenantScan } from '../../query/tenant-scan.ts';
import type { IndexedColumn, SampleAnswer, SampleRead, SeriesRows } from './sample-reader.ts';
import { columnsOf, readCatchUp, readSamples, sortRows, strictlyAscending } from './sample-reader.ts';
import { maskBits } from './series-labels.ts';

/** Bytes the cache holds in all by default. */
export const defaultCacheBytes = 256 * 2 ** 20;
/** Bytes one tenant's entries hold at most by default. */
export const defaultTenantCacheBytes = 32 * 2 ** 20;

/** A cache's bounds (bytes in all, bytes per tenant) and its clock. */
export interface SampleCacheOptions {
  readonly maxBytes?: number;
  readonly maxTenantBytes?: number;
  /** Unix ms now (tests move it). */
  readonly now?: () => number;
  /** Whether a request may join a listing under way that started after it began (default true; false: one listing per request). */
  readonly shareListings?: boolean;
  /** Embedded store: its write epoch; a listing is reused while it has not moved (absent: every request lists). */
  readonly writes?: Pick<WriteEpoch, 'quiet' | 'onQuiet'>;
  /** With `writes`: entries catch up as soon as a write of the metrics table ends, before a read asks (the API's; default false). */
  readonly followWrites?: boolean;
}

/** Counts of what a cache did (bench and tests read them). */
export interface SampleCacheStats {
  /** Parts listings sent to the store, requests that joined one under way instead, and requests that reused one (nothing written since). */
  readonly listings: number;
  readonly joined: number;
  readonly reused: number;
  /** Reads answered from an entry with no statement, from an entry topped up with new parts' rows, and entries filled. */
  readonly hits: number;
  readonly topUps: number;
  readonly fills: number;
  /** Entries filled again instead of topped up: the parts they do not hold had most of the table's rows. */
  readonly refills: number;
  /** Catch-up statements, the entries they brought up to date, and catch-ups begun by a write's end rather than a read. */
  readonly catchUps: number;
  readonly caughtUp: number;
  readonly background: number;
  /** Reads not cached (too long, a cluster, over budget). */
  readonly direct: number;
}

/** A listing of the active parts under way or done, and when it started (the cache's counter). */
interface Listing {
  readonly started: number;
  readonly parts: Promise<Result<PartList, ApiError>>;
}

/** Reads that end within this long of now are filled ahead of now. */
const recentMs = 5 * 60_000;
/** Reads longer than this are read directly. */
const maxSpanMs = 86_400_000;
/** An entry holds rows up to this long past the read that filled it (clocks ahead, the next refreshes). */
const aheadMs = 3_600_000;

interface Entry {
  readonly tenant: string;
  readonly database: string;
  readonly key: string;
  /** The read's stored series ids and columns (maskBits). */
  readonly ids: readonly string[];
  readonly mask: number;
  readonly fromMs: number;
  readonly toMs: number;
  /** Per requested id (the key's order). */
  readonly series: readonly (SeriesRows | undefined)[];
  /** The highest block number of the active parts listed before the rows were read: every row of every block up to it is held. */
  readonly watermark: number;
  /** The highest mutation version among those parts' names. */
  readonly mutation: number;
  readonly bytes: number;
}

/** A cache of recent sample reads, keyed by tenant (one per API). */
export class SampleCache {
  readonly #maxBytes: number;
  readonly #maxTenantBytes: number;
  readonly #now: () => number;
  /** In least recently used order; keys are tenant + NUL + shape. */
  readonly #entries = new Map<string, Entry>();
  readonly #tenantBytes = new Map<string, number>();
  /** The parts listing of each request's scan (dropped with the scan). */
  readonly #listings = new WeakMap<TenantScan, Promise<Result<PartList, ApiError>>>();
  /** When each request began (the counter): set by `begin`, else at its first read. */
  readonly #began = new WeakMap<TenantScan, number>();
  /** Per tenant, the latest listing started while it is under way. */
  readonly #inFlight = new Map<string, Listing>();
  readonly #share: boolean;
  readonly #writes: SampleCacheOptions['writes'];
  readonly #followWrites: boolean;
  /** Per database, the last read's runner, scan and schema (a catch-up after an INSERT runs with them) and its unsubscribe. */
  readonly #followers = new Map<string, { last: { runner: QueryRunner; scan: TenantScan; schema: SchemaTarget }; stop: () => void }>();
  /** Per database, the last listing taken while no write was in flight, and the write epoch then. */
  readonly #quietListings = new Map<string, { readonly epoch: number; readonly parts: PartList }>();
  /** Orders requests' beginnings and listings' starts. */
  #tick = 0;
  /** When each entry was last read (its key's), Unix ms. */
  readonly #used = new Map<string, number>();
  /** Per database, the catch-up under way. */
  readonly #catchingUp = new Map<string, Promise<boolean>>();
  readonly #counts = { listings: 0, joined: 0, reused: 0, hits: 0, topUps: 0, fills: 0, refills: 0, catchUps: 0, caughtUp: 0, background: 0, direct: 0 };
  #bytes = 0;

  constructor(o: SampleCacheOptions = {}) {
    this.#maxBytes = o.maxBytes ?? defaultCacheBytes;
    this.#maxTenantBytes = Math.min(o.maxTenantBytes ?? defaultTenantCacheBytes, this.#maxBytes);
    this.#now = o.now ?? Date.now;
    this.#share = o.shareListings ?? true;
    this.#writes = o.writes;
    this.#followWrites = o.followWrites ?? false;
  }

  /** Notes that a request reading through `scan` begins now: a listing started after this may answer its reads. */
  begin(scan: TenantScan): void {
    if (!this.#began.has(scan)) this.#began.set(scan, ++this.#tick);
  }

  /** What the cache did so far: listings sent and joined, reads answered from an entry, topped up, filled, or read directly. */
  stats(): SampleCacheStats {
    return { ...this.#counts };
  }

  /** Bytes held in all, and by one tenant. */
  bytes(tenant?: string): number {
    return tenant === undefined ? this.#bytes : (this.#tenantBytes.get(tenant) ?? 0);
  }

  /** The rows `r` asks for: from the tenant's entry topped up with what is new, or read directly when it cannot be cached. */
  async read(runner: QueryRunner, r: SampleRead): Promise<Result<SampleAnswer, ApiError>> {
    const now = this.#now();
    if (r.schema.cluster !== undefined || r.toMs - r.fromMs > maxSpanMs || r.ids.length === 0) return this.#direct(runner, r);
    const tenant = r.scan.tenantId;
    const key = `${tenant}\u0000${r.mask}\u0000${r.metricNames.join('\u0001')}\u0000${r.ids.join(',')}`;
    // One listing per request: listed before its first read, it is listed before every later one.
    let listing = this.#listings.get(r.scan);
    if (listing === undefined) {
      listing = this.#listingFor(runner, r.scan, r.schema);
      this.#listings.set(r.scan, listing);
    }
    const parts = await listing;
    if (!parts.ok) return parts;
    const list = parts.value;
    const mutation = highestMutation(list.names);
    // Behind the listing: bring every entry behind it up to date at once (this one among them), then look again; a
    // catch-up already under way may have been for an older listing, so once more after it.
    for (let round = 0; round < 2; round++) {
      const found = this.#entries.get(key);
      if (found === undefined || found.watermark >= list.watermark || mutation > found.mutation) break;
      await this.#catchUp(runner, r.scan, r.schema, list);
    }
    const held = this.#entries.get(key);
    const usable =
      held !== undefined &&
      held.fromMs <= r.fromMs &&
      r.toMs <= held.toMs &&
      // Not when most of it is older than the read wants (a range moved on): filled again from the read's start.
      r.fromMs - held.fromMs <= Math.max(r.toMs - r.fromMs, 600_000) &&
      mutation <= held.mutation;
    let entry: Entry;
    if (usable) {
      // Rows in parts the entry does not hold: new inserts, and merges that took in a new block (whose held rows are read again).
      const newRows = rowsAbove(list, held.watermark);
      const allRows = rowsAbove(list, -1);
      const missing = held.watermark < list.watermark;
      // A merge into a large part (or most of the table new): a top-up would read about what a fill reads and then
      // drop the duplicates, so the entry is filled again instead.
      if (missing && 2 * newRows > allRows) {
        this.#counts.refills += 1;
        this.#drop(key);
        return this.read(runner, r);
      }
      if (missing) {
        const more = await readSamples(runner, { ...r, fromMs: held.fromMs, toMs: held.toMs, excludeParts: heldParts(list, held.watermark) });
        if (!more.ok) return more;
        if (more.value.overBudget) {
          this.#drop(key);
          return this.#direct(runner, r);
        }
        this.#counts.topUps += 1;
        entry = this.#entry(r, key, held.fromMs, held.toMs, topUp(held.series, more.value.series), list.watermark, mutation);
      } else {
        this.#counts.hits += 1;
        entry = held;
      }
    } else {
      // A recent read is filled to an hour ahead (the next refreshes of a dashboard fall within it), a past one to its end.
      const toMs = r.toMs >= now - recentMs ? Math.max(r.toMs, now + aheadMs) : r.toMs;
      const read = await readSamples(runner, { ...r, toMs });
      if (!read.ok) return read;
      // More rows than the budget (the hour ahead included): the direct read decides what the query gets.
      if (read.value.overBudget) {
        this.#drop(key);
        return this.#direct(runner, r);
      }
      this.#counts.fills += 1;
      entry = this.#entry(r, key, r.fromMs, toMs, read.value.series, list.watermark, mutation);
    }
    this.#put(entry);
    this.#used.set(key, now);
    this.#follow(runner, r.scan, r.schema);
    return ok(answerOf(entry.series, r.fromMs, r.toMs, r.maxRows));
  }

  #direct(runner: QueryRunner, r: SampleRead): Promise<Result<SampleAnswer, ApiError>> {
    this.#counts.direct += 1;
    return readSamples(runner, r);
  }

  /** A listing that started after the request began (one under way for its tenant, joined), or its own. */
  async #listingFor(runner: QueryRunner, scan: TenantScan, schema: SchemaTarget): Promise<Result<PartList, ApiError>> {
    this.begin(scan);
    // Only the metrics table's writes matter: its listing names its parts alone.
    const epoch = this.#writes?.quiet(queryTable(schema, 'metrics'));
    const quiet = this.#quietListings.get(schema.database);
    if (epoch !== undefined && quiet?.epoch === epoch) {
      this.#counts.reused += 1;
      return ok(quiet.parts);
    }
    const began = this.#began.get(scan) ?? 0;
    const slot = `${scan.tenantId}\u0000${schema.database}`;
    const under = this.#inFlight.get(slot);
    if (this.#share && under !== undefined && under.started > began) {
      this.#counts.joined += 1;
      const joined = await under.parts;
      // The listing's own request may have been cancelled (its statement killed): then list in this request's turn.
      if (joined.ok) return joined;
    }
    const own: Listing = { started: ++this.#tick, parts: activeParts(runner, scan, schema) };
    this.#counts.listings += 1;
    this.#inFlight.set(slot, own);
    try {
      const listed = await own.parts;
      // Taken while no write was in flight (the epoch read before it was sent): it holds until the epoch moves.
      if (listed.ok && epoch !== undefined) this.#quietListings.set(schema.database, { epoch, parts: listed.value });
      return listed;
    } finally {
      if (this.#inFlight.get(slot) === own) this.#inFlight.delete(slot);
    }
  }

  #entry(r: SampleRead, key: string, fromMs: number, toMs: number, series: readonly (SeriesRows | undefined)[], watermark: number, mutation: number): Entry {
    const bytes = bytesOfAll(series);
    return { tenant: r.scan.tenantId, database: r.schema.database, key, ids: r.ids, mask: r.mask, fromMs, toMs, series, watermark, mutation, bytes };
  }

  /**
   * Embedded store: after each write of the metrics table ends, catches up the entries read within the idle bound
   * at once, with the last read's runner and scan (its tenant's turn and budget, as the series index's background
   * refresh), so that the next reads find them current. Without readers it does nothing.
   */
  #follow(runner: QueryRunner, scan: TenantScan, schema: SchemaTarget): void {
    const held = this.#followers.get(schema.database);
    if (held !== undefined) {
      held.last = { runner, scan, schema };
      return;
    }
    const onQuiet = this.#writes?.onQuiet.bind(this.#writes);
    if (onQuiet === undefined || !this.#followWrites) return;
    const follower = {
      last: { runner, scan, schema },
      stop: onQuiet(queryTable(schema, 'metrics'), () => {
        // Background work never takes the process down: a catch-up that fails leaves each read to top up its own entry.
        this.#afterWrite(follower.last).catch(() => undefined);
      }),
    };
    this.#followers.set(schema.database, follower);
  }

  async #afterWrite(last: { runner: QueryRunner; scan: TenantScan; schema: SchemaTarget }): Promise<void> {
    const now = this.#now();
    const database = last.schema.database;
    const active = [...this.#entries.values()].some((e) => e.database === database && now - (this.#used.get(e.key) ?? -Infinity) <= catchUpIdleMs);
    if (!active || this.#catchingUp.has(database) || last.scan.budget.abort?.aborted === true) return;
    const listed = await this.#listingFor(last.runner, last.scan, last.schema);
    if (listed.ok && (await this.#catchUp(last.runner, last.scan, last.schema, listed.value))) this.#counts.background += 1;
  }

  /** Stops catching up after writes (the API's end; tests that follow writes). */
  close(): void {
    for (const f of this.#followers.values()) f.stop();
    this.#followers.clear();
  }

  /** Brings the entries behind `list` up to it in one statement, or waits for the catch-up under way; a failure leaves them as they were. */
  async #catchUp(runner: QueryRunner, scan: TenantScan, schema: SchemaTarget, list: PartList): Promise<boolean> {
    const under = this.#catchingUp.get(schema.database);
    if (under !== undefined) {
      await under;
      return false;
    }
    const run = this.#catchUpNow(runner, scan, schema, list).finally(() => {
      this.#catchingUp.delete(schema.database);
    });
    this.#catchingUp.set(schema.database, run);
    return run;
  }

  /** Whether a catch-up statement brought entries up to `list`. */
  async #catchUpNow(runner: QueryRunner, scan: TenantScan, schema: SchemaTarget, list: PartList): Promise<boolean> {
    const now = this.#now();
    const mutation = highestMutation(list.names);
    // The entries behind, the most recent watermark first; taken while the rows they miss stay within the bound.
    const behind = [...this.#entries.values()]
      .filter(
        (e) =>
          e.database === schema.database &&
          e.watermark < list.watermark &&
          mutation <= e.mutation &&
          // Not read for a while (a dashboard closed): left to top up by itself if it is read again.
          now - (this.#used.get(e.key) ?? -Infinity) <= catchUpIdleMs,
      )
      .sort((a, b) => b.watermark - a.watermark);
    const taken: Entry[] = [];
    // Per tenant, the positions of its series by id.
    const keys = new Map<string, Map<string, number>>();
    let size = 0;
    for (const e of behind) {
      if (rowsAbove(list, e.watermark) > catchUpMaxRows || size + e.ids.length > catchUpMaxSeries) break;
      let own = keys.get(e.tenant);
      if (own === undefined) {
        own = new Map();
        keys.set(e.tenant, own);
      }
      for (const id of e.ids) if (!own.has(id)) own.set(id, size++);
      taken.push(e);
    }
    const oldest = taken[taken.length - 1];
    if (oldest === undefined) return false;
    const tenants = [...keys.keys()];
    const read = await readCatchUp(runner, {
      schema,
      statement: scan.cacheStatement(tenants),
      tenants,
      keys: [...keys.values()],
      size,
      mask: taken.reduce((m, e) => m | e.mask, 0),
      fromMs: Math.min(...taken.map((e) => e.fromMs)),
      toMs: Math.max(...taken.map((e) => e.toMs)),
      excludeParts: heldParts(list, oldest.watermark),
      maxRows: catchUpMaxRows,
    });
    // Not caught up (a failure, or more rows than the bound): each read tops up its own entry.
    if (!read.ok || read.value.overBudget) return false;
    this.#counts.catchUps += 1;
    for (const e of taken) {
      // Replaced meanwhile (filled or topped up by a read of its own): that read's rows are the fresher.
      if (this.#entries.get(e.key) !== e) continue;
      const own = keys.get(e.tenant);
      const more = e.ids.map((id) => {
        const rows = read.value.series[own?.get(id) ?? -1];
        return rows === undefined ? undefined : onlyColumns(sliced(rows, e.fromMs, e.toMs), e.mask);
      });
      this.#counts.caughtUp += 1;
      const series = topUp(e.series, more);
      this.#replace({ ...e, series, bytes: bytesOfAll(series), watermark: list.watermark });
    }
    return true;
  }

  /** An entry grown in place (its turn in the LRU order kept); the bounds are then enforced again, the tenant's own first. */
  #replace(e: Entry): void {
    const old = this.#entries.get(e.key);
    if (old === undefined) return;
    this.#entries.set(e.key, e);
    this.#bytes += e.bytes - old.bytes;
    this.#tenantBytes.set(e.tenant, (this.#tenantBytes.get(e.tenant) ?? 0) + e.bytes - old.bytes);
    if (e.bytes > this.#maxTenantBytes) this.#drop(e.key);
    else this.#fit(e.key, e.tenant);
  }

  /** Stores or refreshes an entry as the most recently used, evicting the tenant's own first, then anyone's. */
  #put(e: Entry): void {
    this.#drop(e.key);
    if (e.bytes > this.#maxTenantBytes) return;
    this.#entries.set(e.key, e);
    this.#bytes += e.bytes;
    this.#tenantBytes.set(e.tenant, (this.#tenantBytes.get(e.tenant) ?? 0) + e.bytes);
    this.#fit(e.key, e.tenant);
  }

  /** Evicts least recently used entries, never `keep`: the tenant's own while it is over its share, then anyone's while the cache is over. */
  #fit(keep: string, tenant: string): void {
    for (const [key, old] of this.#entries) {
      if ((this.#tenantBytes.get(tenant) ?? 0) <= this.#maxTenantBytes) break;
      if (old.tenant === tenant && key !== keep) this.#drop(key);
    }
    for (const key of this.#entries.keys()) {
      if (this.#bytes <= this.#maxBytes) break;
      if (key !== keep) this.#drop(key);
    }
  }

  #drop(key: string): void {
    const old = this.#entries.get(key);
    if (old === undefined) return;
    this.#entries.delete(key);
    this.#used.delete(key);
    this.#bytes -= old.bytes;
    const left = (this.#tenantBytes.get(old.tenant) ?? 0) - old.bytes;
    if (left <= 0) this.#tenantBytes.delete(old.tenant);
    else this.#tenantBytes.set(old.tenant, left);
  }
}

/** The names of the metrics table's active parts, listed in the query's own turn (no tenant's rows are read). */
async function activeParts(runner: QueryRunner, scan: TenantScan, schema: SchemaTarget): Promise<Result<PartList, ApiError>> {
  const st = scan.statement();
  const sql = `SELECT name, toFloat64(rows) AS rows, toFloat64(max_block_number) AS block FROM system.parts WHERE database = ${st.bind(schema.database, 'String')} AND table = 'metrics' AND active`;
  const rows = await runner.manyRows<{ name: string; rows: number | string; block: number | string }>(st.finish(sql));
  if (!rows.ok) return rows;
  const blocks = rows.value.map((p) => Number(p.block));
  return ok({ names: rows.value.map((p) => p.name), rows: rows.value.map((p) => Number(p.rows)), blocks, watermark: Math.max(-1, ...blocks) });
}

/** The active parts' names, their row counts (every tenant's) and highest block numbers, in one order; the highest of those. */
interface PartList {
  readonly names: readonly string[];
  readonly rows: readonly number[];
  readonly blocks: readonly number[];
  readonly watermark: number;
}

/** Rows of a catch-up at most: the newest inserts' rows of the tenants read, far fewer under steady ingest. */
const catchUpMaxRows = 100_000;
/** Entries not read for this long are not caught up (a dashboard refreshes every few seconds to a minute). */
const catchUpIdleMs = 5 * 60_000;
/** Stored series one catch-up reads at most. */
const catchUpMaxSeries = 100_000;

/** Rows, every tenant's, in the listed parts that hold a block above `watermark`. */
function rowsAbove(list: PartList, watermark: number): number {
  let n = 0;
  list.rows.forEach((rows, i) => {
    if ((list.blocks[i] ?? Infinity) > watermark) n += rows;
  });
  return n;
}

/** The listed parts whose every block is at most `watermark`: an entry of that watermark holds their rows. */
function heldParts(list: PartList, watermark: number): string[] {
  return list.names.filter((_, i) => (list.blocks[i] ?? Infinity) <= watermark);
}

/** The highest mutation version in part names (partition_min_max_level[_mutation]); 0 when none was mutated. */
export function highestMutation(parts: readonly string[]): number {
  let most = 0;
  for (const p of parts) {
    const fields = p.split('_');
    if (fields.length >= 5) most = Math.max(most, Number(fields[4]) || 0);
  }
  return most;
}

/** Only the columns of `mask` (a catch-up reads those of every entry it serves). */
function onlyColumns(s: SeriesRows | undefined, mask: number): SeriesRows | undefined {
  if (s === undefined) return undefined;
  const m = columnsOf(mask);
  return {
    times: s.times,
    ...(m & maskBits.value ? { value: s.value } : {}),
    ...(m & maskBits.sum ? { sum: s.sum } : {}),
    ...(m & maskBits.count ? { count: s.count } : {}),
    ...(m & maskBits.indexed && s.indexed !== undefined ? { indexed: s.indexed } : {}),
    ...(m & maskBits.native && s.exponential !== undefined ? { exponential: s.exponential } : {}),
  };
}

/** Each held series with the rows read since appended: sorted by time, one row per timestamp (the held one kept). */
function topUp(held: readonly (SeriesRows | undefined)[], more: readonly (SeriesRows | undefined)[]): (SeriesRows | undefined)[] {
  return held.map((h, i) => {
    const m = more[i];
    if (m === undefined) return h;
    if (h === undefined) return m;
    const fresh = newRowsOnly(h, m);
    if (fresh === undefined) return h;
    const joined = concatRows(h, fresh);
    return strictlyAscending(joined.times) ? joined : sortRows(joined);
  });
}

/**
 * The rows of `m` to append to `h`: when every row of `m` up to `h`'s last time is one `h` holds (the usual case
 * under ingest: a merged part's rows read again, then rows newer than any held), only the newer ones, found in
 * O(m log h) instead of sorting both; otherwise all of `m` (the caller sorts). Undefined when nothing is new.
 */
function newRowsOnly(h: SeriesRows, m: SeriesRows): SeriesRows | undefined {
  if (!strictlyAscending(m.times)) return m;
  const last = h.times[h.times.length - 1] ?? -Infinity;
  // The first row of `m` after `last`.
  let cut = lowerBound(m.times, last);
  if (m.times[cut] === last) cut += 1;
  for (let x = 0; x < cut; x++) {
    const t = m.times[x] ?? 0;
    if (h.times[lowerBound(h.times, t)] !== t) return m;
  }
  if (cut === m.times.length) return undefined;
  return cut === 0 ? m : sliced(m, m.times[cut] ?? 0, Infinity);
}

function concatFloats(a: Float64Array | undefined, b: Float64Array | undefined): Float64Array | undefined {
  if (a === undefined || b === undefined) return undefined;
  const out = new Float64Array(a.length + b.length);
  // Same-type set copies bits: a staleness marker's payload survives.
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** One indexed column after another, offsets rebased to start at 0. */
function concatIndexed(a: IndexedColumn, an: number, b: IndexedColumn, bn: number): IndexedColumn {
  const a0 = a.starts[0] ?? 0;
  const aEnd = a.starts[an] ?? 0;
  const b0 = b.starts[0] ?? 0;
  const bEnd = b.starts[bn] ?? 0;
  const values = new Float64Array(aEnd - a0 + (bEnd - b0));
  values.set(a.values.subarray(a0, aEnd));
  values.set(b.values.subarray(b0, bEnd), aEnd - a0);
  const starts = new Uint32Array(an + bn + 1);
  for (let x = 0; x <= an; x++) starts[x] = (a.starts[x] ?? 0) - a0;
  for (let x = 1; x <= bn; x++) starts[an + x] = aEnd - a0 + (b.starts[x] ?? 0) - b0;
  return { values, starts };
}

/** Rows of `a` then rows of `b` (same columns). */
function concatRows(a: SeriesRows, b: SeriesRows): SeriesRows {
  const an = a.times.length;
  const bn = b.times.length;
  const times = concatFloats(a.times, b.times) ?? new Float64Array(0);
  return {
    times,
    value: concatFloats(a.value, b.value),
    sum: concatFloats(a.sum, b.sum),
    count: concatFloats(a.count, b.count),
    ...(a.indexed !== undefined && b.indexed !== undefined ? { indexed: concatIndexed(a.indexed, an, b.indexed, bn) } : {}),
    ...(a.exponential !== undefined && b.exponential !== undefined ? { exponential: [...a.exponential, ...b.exponential] } : {}),
  };
}

/** First index whose time is at least `t` (times ascending). */
function lowerBound(times: Float64Array, t: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((times[mid] ?? 0) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The rows of [fromMs, toMs]: views of the held arrays, never copies. */
function sliced(s: SeriesRows, fromMs: number, toMs: number): SeriesRows | undefined {
  const lo = lowerBound(s.times, fromMs);
  const hi = lowerBound(s.times, toMs + 1);
  if (hi <= lo) return undefined;
  if (lo === 0 && hi === s.times.length) return s;
  return {
    times: s.times.subarray(lo, hi),
    value: s.value?.subarray(lo, hi),
    sum: s.sum?.subarray(lo, hi),
    count: s.count?.subarray(lo, hi),
    // Offsets into values stay absolute: only the row bounds move.
    ...(s.indexed !== undefined ? { indexed: { values: s.indexed.values, starts: s.indexed.starts.subarray(lo, hi + 1) } } : {}),
    ...(s.exponential !== undefined ? { exponential: s.exponential.slice(lo, hi) } : {}),
  };
}

/** What the read asked for, out of an entry. */
function answerOf(series: readonly (SeriesRows | undefined)[], fromMs: number, toMs: number, maxRows: number): SampleAnswer {
  let rows = 0;
  const out = series.map((s) => {
    const part = s === undefined ? undefined : sliced(s, fromMs, toMs);
    rows += part?.times.length ?? 0;
    return part;
  });
  return { series: out, rows, overBudget: rows > maxRows };
}

/** Bytes the rows of all `series` hold. */
function bytesOfAll(series: readonly (SeriesRows | undefined)[]): number {
  return series.reduce((n, s) => n + (s === undefined ? 0 : bytesOf(s)), 0);
}

/** Bytes a series' rows hold (an exponential row counted at its buckets and a fixed overhead). */
function bytesOf(s: SeriesRows): number {
  let n = s.times.byteLength + (s.value?.byteLength ?? 0) + (s.sum?.byteLength ?? 0) + (s.count?.byteLength ?? 0);
  if (s.indexed !== undefined) n += s.indexed.values.byteLength + s.indexed.starts.byteLength;
  for (const e of s.exponential ?? []) n += 96 + 8 * (e.positiveCounts.length + e.negativeCounts.length);
  return n;
}
