// Group commit: rows of concurrent requests are gathered per table and
// written with one INSERT per flush. A flush starts when the batch reaches
// maxBatchRows or maxBatchBytes, or when its oldest rows are maxBatchDelayMs
// old; at most one INSERT per table is in flight, so under load batches grow
// instead of inserts piling up. Each submitter waits for the flush that holds
// its rows. When no INSERT of the table is running and the batch already
// holds a sizeable number of rows (maxBatchRows / 50), it is written at once
// rather than after the delay: waiting would only add latency, as the batch
// is big enough not to make ClickHouse merge many tiny parts. Queued bytes (pending and in flight) are bounded: past the bound
// submissions are refused at once (the caller answers 429).
import type { WriterConfig } from '../../src/config/config.ts';
import type { TableName } from '../ingest/row-batch.ts';
import type { RowSink, SinkResult } from './row-sink.ts';

export type SubmitResult = SinkResult | { readonly ok: false; readonly kind: 'overloaded'; readonly message: string } | { readonly ok: false; readonly kind: 'stopped'; readonly message: string };

export interface FlushStats {
  readonly table: TableName;
  readonly rows: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly ok: boolean;
}

export interface WriterObserver {
  queueBytes(bytes: number): void;
  flushed(stats: FlushStats): void;
}

interface Batch {
  chunks: Buffer[];
  rows: number;
  bytes: number;
  waiters: ((result: SinkResult) => void)[];
  /** When the first rows arrived, for the age bound. */
  startedAt: number;
}

const emptyBatch = (): Batch => ({ chunks: [], rows: 0, bytes: 0, waiters: [], startedAt: 0 });

/**
 * INSERTs of one table running at once. Measured on embedded ClickHouse, a
 * second concurrent INSERT did not raise throughput, while one at a time
 * lets the next batch grow (fewer, larger parts).
 */
export const maxInsertsInFlight = 1;

class TableQueue {
  pending: Batch = emptyBatch();
  readonly inFlight = new Set<Promise<void>>();
  timer: NodeJS.Timeout | undefined;
}

export class GroupCommitWriter {
  readonly #sink: RowSink;
  readonly #config: WriterConfig;
  readonly #observer: WriterObserver;
  readonly #tables = new Map<TableName, TableQueue>();
  #queuedBytes = 0;
  #draining = false;
  #stopped = false;

  constructor(sink: RowSink, config: WriterConfig, observer: WriterObserver) {
    this.#sink = sink;
    this.#config = config;
    this.#observer = observer;
  }

  /** Bytes accepted but not yet written. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Queues rows (RowBinary, whole rows) and resolves once they are written, or at once when refused. */
  submit(table: TableName, rows: Buffer, rowCount: number): Promise<SubmitResult> {
    if (this.#stopped) return Promise.resolve({ ok: false, kind: 'stopped', message: 'the gateway is shutting down' });
    if (rowCount === 0) return Promise.resolve({ ok: true });
    const bytes = rows.length;
    if (this.#queuedBytes > 0 && this.#queuedBytes + bytes > this.#config.maxQueueBytes) {
      return Promise.resolve({ ok: false, kind: 'overloaded', message: `write queue is full (${this.#queuedBytes} of ${this.#config.maxQueueBytes} bytes)` });
    }
    this.#queuedBytes += bytes;
    this.#observer.queueBytes(this.#queuedBytes);
    const queue = this.#queue(table);
    const batch = queue.pending;
    if (batch.rows === 0) batch.startedAt = Date.now();
    batch.chunks.push(rows);
    batch.rows += rowCount;
    batch.bytes += bytes;
    const done = new Promise<SinkResult>((resolve) => { batch.waiters.push(resolve); });
    this.#schedule(table, queue);
    return done;
  }

  /** Stops waiting for batches to fill: pending and future rows are written at once (shutdown, while requests finish). */
  drain(): void {
    this.#draining = true;
    for (const [table, queue] of this.#tables) this.#schedule(table, queue);
  }

  /** Refuses new rows, writes everything pending, and resolves when the last flush has finished. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (;;) {
      const busy = [...this.#tables.entries()].filter(([, q]) => q.inFlight.size > 0 || q.pending.rows > 0);
      if (busy.length === 0) return;
      for (const [table, queue] of busy) if (queue.pending.rows > 0 && queue.inFlight.size < maxInsertsInFlight) this.#flush(table, queue);
      await Promise.race(busy.flatMap(([, q]) => [...q.inFlight]));
    }
  }

  #queue(table: TableName): TableQueue {
    let queue = this.#tables.get(table);
    if (queue === undefined) {
      queue = new TableQueue();
      this.#tables.set(table, queue);
    }
    return queue;
  }

  #full(batch: Batch): boolean {
    return batch.rows >= this.#config.maxBatchRows || batch.bytes >= this.#config.maxBatchBytes;
  }

  /** Big enough to write without waiting when nothing else is being written. */
  #sizeable(batch: Batch): boolean {
    return batch.rows >= Math.max(1, Math.floor(this.#config.maxBatchRows / 50));
  }

  #schedule(table: TableName, queue: TableQueue): void {
    const batch = queue.pending;
    if (batch.rows === 0 || queue.inFlight.size >= maxInsertsInFlight) return; // a running flush reschedules when it ends
    const age = Date.now() - batch.startedAt;
    if (this.#full(batch) || this.#sizeable(batch) || age >= this.#config.maxBatchDelayMs || this.#draining || this.#stopped) {
      this.#flush(table, queue);
      return;
    }
    queue.timer ??= setTimeout(() => {
      queue.timer = undefined;
      if (queue.inFlight.size < maxInsertsInFlight && queue.pending.rows > 0) this.#flush(table, queue);
    }, this.#config.maxBatchDelayMs - age);
  }

  #flush(table: TableName, queue: TableQueue): void {
    clearTimeout(queue.timer);
    queue.timer = undefined;
    const batch = queue.pending;
    queue.pending = emptyBatch();
    const started = process.hrtime.bigint();
    const flight: Promise<void> = this.#sink.insert(table, batch.chunks).then((result) => {
      this.#queuedBytes -= batch.bytes;
      this.#observer.queueBytes(this.#queuedBytes);
      this.#observer.flushed({ table, rows: batch.rows, bytes: batch.bytes, seconds: Number(process.hrtime.bigint() - started) / 1e9, ok: result.ok });
      for (const resolve of batch.waiters) resolve(result);
      queue.inFlight.delete(flight);
      this.#schedule(table, queue);
    });
    queue.inFlight.add(flight);
  }
}
