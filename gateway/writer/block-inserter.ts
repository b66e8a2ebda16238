// How one sealed write-ahead-log segment gets into ClickHouse: one INSERT
// that reads the segment's rows file in place, under the segment's token
// (docs/adr/0006-write-ahead-log.md). This file holds the mechanics only;
// it changes none of the writer's state but reports what happens as events,
// which the owner (logged-writer.ts) turns into its pacing, health and
// metrics, and it never deletes the segment: the owner does, once it ends.
// - A failure caused by the rows themselves (ClickHouse could not parse or
//   convert them) is narrowed down by splitting the block by request until
//   the failing request is alone; its rows go to a dead-letter file with the
//   reason (DESIGN §10) and the rest is stored. A split is recorded in the
//   segment's files before its first half's INSERT: a replay after a crash
//   splits the block again at once instead of inserting it whole under the
//   parent's token, which would store an already stored half a second time.
// - Every other failure (ClickHouse down, disk full, too many parts, a table
//   missing, the segment's files unreadable, anything unknown) is retried
//   with backoff until the owner gives up on stop: the rows were
//   acknowledged, and the process reports itself unready meanwhile.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { backoffDelay } from '../../src/backoff.ts';
import type { BackoffPolicy } from '../../src/backoff.ts';
import type { StoreFailureKind } from '../../src/clickhouse/clickhouse-error.ts';
import type { Clock } from '../../src/clock.ts';
import type { TableName } from '../rowbinary/row-batch.ts';
import type { RowSink, RowSource } from './row-sink.ts';
import type { WalRecord } from './wal-records.ts';
import { WriteAheadLog } from './write-ahead-log.ts';
import type { RowsFile, Segment } from './write-ahead-log.ts';

export interface InsertStats {
  readonly table: TableName;
  readonly rows: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly ok: boolean;
  /** The block's deduplication token: its segment's, with a suffix per split. */
  readonly token: string;
}

/** What happened while a segment was being inserted, in order. */
export type InsertEvent =
  /** An INSERT of `rows` rows begins. */
  | { readonly kind: 'inserting'; readonly rows: number }
  | { readonly kind: 'inserted'; readonly stats: InsertStats }
  /** ClickHouse (or the segment's disk) refuses for a reason that may pass (healthy false), or takes writes again. */
  | { readonly kind: 'storage'; readonly healthy: boolean; readonly message: string }
  /** One request's rows were kept aside: ClickHouse refuses them for a reason of their own. */
  | { readonly kind: 'dead-lettered'; readonly rows: number; readonly reason: string }
  /** Stop gave up waiting: the segment stays in the log for the next start. Always the last event. */
  | { readonly kind: 'abandoned' };

export interface InserterOptions {
  /** Where dead-lettered rows are kept. */
  readonly deadLetterDir: string;
  /** Backoff between retries of a failing INSERT. */
  readonly backoff: BackoffPolicy;
  /** Tries before a block failing for a reason of its own is split. */
  readonly triesBeforeSplit: number;
  /** Segments of one table inserted at the same time. */
  readonly parallelism: number;
}

export const defaultInserterOptions = { backoff: { baseMs: 100, maxMs: 5000 }, triesBeforeSplit: 3, parallelism: 2 } as const;

/** What an insert needs besides its segment: the port, the options, the time source, and the owner's signal to give up. */
export interface InsertContext {
  readonly sink: RowSink;
  readonly options: InserterOptions;
  readonly clock: Clock;
  readonly abandon: AbortSignal;
}

/** Failures that only the block's own rows can cause. */
const causedByRows: ReadonlySet<StoreFailureKind> = new Set(['invalid_query']);

/** Thrown inside an insert when stop() gives up waiting for ClickHouse. */
class Abandoned extends Error {}

/** One INSERT's rows, and how to get them as records to split the block or keep it aside. */
interface Block {
  readonly source: RowSource;
  readonly rows: number;
  readonly bytes: number;
  records(): Promise<readonly WalRecord[]>;
}

function recordsBlock(records: readonly WalRecord[]): Block {
  return {
    source: { chunks: records.map((r) => r.rows) },
    rows: records.reduce((n, r) => n + r.rowCount, 0),
    bytes: records.reduce((n, r) => n + r.rows.length, 0),
    records: () => Promise.resolve(records),
  };
}

function fileBlock(segment: Segment, file: RowsFile): Block {
  return { source: { file: file.path }, rows: file.rows, bytes: file.bytes, records: () => WriteAheadLog.read(segment) };
}

/** The segment's blocks and what is known of them: the tokens of those split before (by this process or one before a crash). */
interface Insert {
  readonly table: TableName;
  readonly segment: Segment;
  readonly splits: ReadonlySet<string>;
  readonly context: InsertContext;
}

/**
 * Inserts one sealed segment, retrying until every row of it is in
 * ClickHouse or dead-lettered, or until the owner gives up ('abandoned');
 * ends without deleting the segment.
 */
export async function* insertSegment(segment: Segment, context: InsertContext): AsyncGenerator<InsertEvent, void> {
  for (let attempt = 0; ;) {
    try {
      const file = await WriteAheadLog.rowsFile(segment);
      const block = file === undefined ? recordsBlock(await WriteAheadLog.read(segment)) : fileBlock(segment, file);
      // A segment left by a crash may hold nothing but a torn record, which was never acknowledged.
      if (block.rows > 0) yield* insertBlock({ table: segment.table, segment, splits: await WriteAheadLog.splits(segment), context }, block, segment.token);
      return;
    } catch (error) {
      if (error instanceof Abandoned) break;
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // removed by hand: nothing left to insert
      // The segment's files could not be read, or a split or dead letter not written: a local disk fault, retried
      // like a storage one. A retry inserts the same blocks under the same tokens; ClickHouse skips those it has.
      yield { kind: 'storage', healthy: false, message: `write-ahead log segment: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
      if (!(await backoff(context, attempt++))) break;
    }
  }
  yield { kind: 'abandoned' };
}

/** Inserts the block as one; splits it by request when its own rows make it fail, or when it was split before. */
async function* insertBlock(insert: Insert, block: Block, token: string): AsyncGenerator<InsertEvent, void> {
  const { table, context } = insert;
  if (insert.splits.has(token)) {
    // A half of it may be stored under its own token, which the parent's would not deduplicate.
    yield* split(insert, await block.records(), token, 'split before a restart');
    return;
  }
  const { rows, bytes } = block;
  for (let attempt = 0; ; attempt++) {
    if (context.abandon.aborted) throw new Abandoned();
    yield { kind: 'inserting', rows };
    const started = context.clock.now();
    const result = await context.sink.insert(table, block.source, token);
    yield { kind: 'inserted', stats: { table, rows, bytes, seconds: (context.clock.now() - started) / 1000, ok: result.ok, token } };
    if (result.ok) {
      yield { kind: 'storage', healthy: true, message: '' };
      return;
    }
    if (!causedByRows.has(result.error.kind)) {
      yield { kind: 'storage', healthy: false, message: result.error.message };
      if (!(await backoff(context, attempt))) throw new Abandoned();
      continue;
    }
    if (attempt + 1 < context.options.triesBeforeSplit) {
      if (!(await backoff(context, attempt))) throw new Abandoned();
      continue;
    }
    const records = await block.records();
    if (records.length > 1) await WriteAheadLog.recordSplit(insert.segment, token);
    yield* split(insert, records, token, result.error.message);
    return;
  }
}

/** Inserts the records in two halves, each under the token with a suffix; a lone request's rows are dead-lettered instead. */
async function* split(insert: Insert, records: readonly WalRecord[], token: string, reason: string): AsyncGenerator<InsertEvent, void> {
  if (records.length > 1) {
    const half = Math.ceil(records.length / 2);
    yield* insertBlock(insert, recordsBlock(records.slice(0, half)), `${token}-a`);
    yield* insertBlock(insert, recordsBlock(records.slice(half)), `${token}-b`);
    return;
  }
  const rows = records.reduce((n, r) => n + r.rowCount, 0);
  const dir = insert.context.options.deadLetterDir;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(
    join(dir, `${token}.rowbinary`),
    records.map((r) => r.rows),
    { mode: 0o600 },
  );
  await writeFile(join(dir, `${token}.json`), `${JSON.stringify({ table: insert.table, rows, reason, at: new Date().toISOString() })}\n`, { mode: 0o600 });
  yield { kind: 'dead-lettered', rows, reason };
}

/** Waits before retry `attempt` (0 = first, the shared jittered schedule of src/backoff.ts); false, at once, when the owner gives up. */
export function backoff(context: InsertContext, attempt: number): Promise<boolean> {
  const { options, clock, abandon } = context;
  const ms = backoffDelay(options.backoff, attempt + 1);
  if (abandon.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const wake = (): void => {
      timer.cancel();
      abandon.removeEventListener('abort', wake);
      resolve(!abandon.aborted);
    };
    const timer = clock.setTimeout(wake, ms);
    abandon.addEventListener('abort', wake);
  });
}
