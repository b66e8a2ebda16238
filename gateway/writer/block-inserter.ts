// Moves sealed write-ahead-log segments into ClickHouse, one INSERT per
// segment, oldest first, up to `parallelism` of a table at a time (an
// embedded INSERT parses on one thread: a second one overlapping it uses
// the other core; docs/adr/0006-write-ahead-log.md), each with the
// segment's deduplication token, so a segment inserted just before a crash
// is not stored twice when it is replayed. ClickHouse reads a segment's rows
// file in place; a segment is deleted only after its INSERT succeeded.
// - A failure caused by the rows themselves (ClickHouse could not parse or
//   convert them) is narrowed down by splitting the block by request until
//   the failing request is alone; its rows go to a dead-letter file with the
//   reason (DESIGN §10) and the rest is stored.
// - Every other failure (ClickHouse down, disk full, too many parts, a table
//   missing, anything unknown) is retried with backoff, forever: the rows
//   were acknowledged, and the process reports itself unready meanwhile.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoreFailureKind } from '../../src/clickhouse/clickhouse-error.ts';
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

export interface InserterEvents {
  /** An INSERT of `rows` rows begins, under the deduplication token `token`. */
  inserting(table: TableName, rows: number, token: string): void;
  inserted(stats: InsertStats): void;
  /** ClickHouse refuses writes for a reason that may pass (healthy=false), or takes them again. */
  storageHealth(healthy: boolean, message: string): void;
  deadLettered(table: TableName, rows: number, reason: string, token: string): void;
  /** An INSERT of the table ended and no sealed segment of it waits: the inserter could take another now. */
  slotFree(table: TableName): void;
}

export interface InserterOptions {
  /** Where dead-lettered rows are kept. */
  readonly deadLetterDir: string;
  /** Backoff between retries of a failing INSERT. */
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Tries before a block failing for a reason of its own is split. */
  readonly triesBeforeSplit: number;
  /** Segments of one table inserted at the same time. */
  readonly parallelism: number;
}

export const defaultInserterOptions = { minBackoffMs: 100, maxBackoffMs: 5000, triesBeforeSplit: 3, parallelism: 2 } as const;

/** Failures that only the block's own rows can cause. */
const causedByRows: ReadonlySet<StoreFailureKind> = new Set(['invalid_query']);

/** Thrown inside an insert loop when stop() gives up waiting for ClickHouse: the segment stays for the next start. */
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

/** A table's sealed segments: those waiting for their turn, and how many are being inserted. */
interface TableQueue {
  readonly waiting: Segment[];
  running: number;
}

export class BlockInserter {
  readonly #sink: RowSink;
  readonly #wal: WriteAheadLog;
  readonly #events: InserterEvents;
  readonly #options: InserterOptions;
  readonly #queues = new Map<TableName, TableQueue>();
  readonly #moves = new Set<Promise<void>>();
  #abandon = false;
  readonly #wakers = new Set<() => void>();

  constructor(sink: RowSink, wal: WriteAheadLog, events: InserterEvents, options: InserterOptions) {
    if (!(options.parallelism >= 1)) throw new Error(`bug: inserter parallelism ${String(options.parallelism)}`);
    this.#sink = sink;
    this.#wal = wal;
    this.#events = events;
    this.#options = options;
  }

  /** Queues a sealed segment behind the table's earlier ones. */
  enqueue(segment: Segment): void {
    let queue = this.#queues.get(segment.table);
    if (queue === undefined) {
      queue = { waiting: [], running: 0 };
      this.#queues.set(segment.table, queue);
    }
    queue.waiting.push(segment);
    this.#fill(segment.table, queue);
  }

  /** Whether a segment sealed now would wait for its INSERT: every INSERT of the table is taken, or a segment waits already. */
  full(table: TableName): boolean {
    const queue = this.#queues.get(table);
    return queue !== undefined && (queue.waiting.length > 0 || queue.running >= this.#options.parallelism);
  }

  /** Resolves once every queued segment is in ClickHouse. */
  async whenIdle(): Promise<void> {
    while (this.#moves.size > 0) await Promise.all(this.#moves);
  }

  /** Waits up to `timeoutMs` for the backlog; what is left stays in the log for the next start. */
  async stop(timeoutMs: number): Promise<void> {
    const timer = setTimeout(() => {
      this.#abandon = true;
      for (const wake of this.#wakers) wake();
    }, timeoutMs);
    try {
      await this.whenIdle();
    } finally {
      clearTimeout(timer);
    }
  }

  /** Starts the oldest waiting segments while fewer than `parallelism` of the table are being inserted. */
  #fill(table: TableName, queue: TableQueue): void {
    while (!this.#abandon && queue.running < this.#options.parallelism) {
      const segment = queue.waiting.shift();
      if (segment === undefined) return;
      queue.running++;
      const move: Promise<void> = this.#move(table, segment).catch((error: unknown) => {
        if (!(error instanceof Abandoned)) throw error;
      }).finally(() => {
        this.#moves.delete(move);
        queue.running--;
        this.#fill(table, queue);
        if (queue.waiting.length === 0 && queue.running < this.#options.parallelism) this.#events.slotFree(table);
      });
      this.#moves.add(move);
    }
  }

  /** Inserts one segment, retrying until it is in ClickHouse, then deletes it. */
  async #move(table: TableName, segment: Segment): Promise<void> {
    for (let attempt = 0; ; ) {
      try {
        const file = await WriteAheadLog.rowsFile(segment);
        const block = file === undefined ? recordsBlock(await WriteAheadLog.read(segment)) : fileBlock(segment, file);
        // A segment left by a crash may hold nothing but a torn record, which was never acknowledged.
        if (block.rows > 0) await this.#insert(table, block, segment.token, { segment, splits: await WriteAheadLog.splits(segment) });
        await this.#wal.release(segment);
        return;
      } catch (error) {
        if (error instanceof Abandoned) throw error;
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // removed by hand: nothing left to insert
        // The segment's file could not be read or deleted: a local disk fault, retried like a storage one.
        this.#events.storageHealth(false, `write-ahead log segment: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
        await this.#backoff(attempt++);
        if (this.#abandon) throw new Abandoned();
      }
    }
  }

  /**
   * Inserts the block as one; splits it by request when its own rows make it
   * fail. A block split before (`split.splits`, by this process or one before
   * a crash) is split again at once: one of its halves may be stored already
   * under its own token, which the parent's token would not deduplicate.
   */
  async #insert(table: TableName, block: Block, token: string, split: { segment: Segment; splits: ReadonlySet<string> }): Promise<void> {
    const { rows, bytes } = block;
    if (split.splits.has(token)) {
      await this.#split(table, await block.records(), token, split, 'split before a restart');
      return;
    }
    for (let attempt = 0; ; attempt++) {
      if (this.#abandon) throw new Abandoned();
      this.#events.inserting(table, rows, token);
      const started = process.hrtime.bigint();
      const result = await this.#sink.insert(table, block.source, token);
      this.#events.inserted({ table, rows, bytes, seconds: Number(process.hrtime.bigint() - started) / 1e9, ok: result.ok, token });
      if (result.ok) {
        this.#events.storageHealth(true, '');
        return;
      }
      if (!causedByRows.has(result.kind)) {
        this.#events.storageHealth(false, result.message);
        await this.#backoff(attempt);
        continue;
      }
      if (attempt + 1 < this.#options.triesBeforeSplit) {
        await this.#backoff(attempt);
        continue;
      }
      const records = await block.records();
      if (records.length > 1) await WriteAheadLog.recordSplit(split.segment, token);
      await this.#split(table, records, token, split, result.message);
      return;
    }
  }

  /** Inserts the records in two halves, each under the token with a suffix; a lone request's rows are dead-lettered instead. */
  async #split(table: TableName, records: readonly WalRecord[], token: string, split: { segment: Segment; splits: ReadonlySet<string> }, reason: string): Promise<void> {
    if (records.length <= 1) {
      await this.#deadLetter(table, records, token, reason);
      return;
    }
    const half = Math.ceil(records.length / 2);
    await this.#insert(table, recordsBlock(records.slice(0, half)), `${token}-a`, split);
    await this.#insert(table, recordsBlock(records.slice(half)), `${token}-b`, split);
  }

  async #deadLetter(table: TableName, records: readonly WalRecord[], token: string, reason: string): Promise<void> {
    const rows = records.reduce((n, r) => n + r.rowCount, 0);
    await mkdir(this.#options.deadLetterDir, { recursive: true, mode: 0o700 });
    await writeFile(join(this.#options.deadLetterDir, `${token}.rowbinary`), records.map((r) => r.rows), { mode: 0o600 });
    await writeFile(join(this.#options.deadLetterDir, `${token}.json`), `${JSON.stringify({ table, rows, reason, at: new Date().toISOString() })}\n`, { mode: 0o600 });
    this.#events.deadLettered(table, rows, reason, token);
  }

  #backoff(attempt: number): Promise<void> {
    const ms = Math.min(this.#options.maxBackoffMs, this.#options.minBackoffMs * 2 ** Math.min(attempt, 16));
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.#wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.#wakers.add(wake);
    });
  }
}
