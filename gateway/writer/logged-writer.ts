// The gateway's writer, and the one owner of the write path's state: a
// request's rows are acknowledged once the write-ahead log has them, and
// sealed segments move into ClickHouse in large blocks whatever the number
// of clients (docs/adr/0006-write-ahead-log.md). The log (write-ahead-log.ts),
// the INSERT mechanics (block-inserter.ts) and the pacer (admission-pacer.ts)
// report to this class and are driven only by it; its methods are the only
// way the state below changes.
//
// Invariants it keeps:
// - Acknowledged ⇒ in the log. submit() answers ok only after the log's
//   append of the rows returned (write, or fdatasync with sync 'fsync'); a
//   segment leaves the log (release) only after every row of it is stored or
//   dead-lettered, never on stop or failure: what is left is replayed on the
//   next start, before anything new.
// - One segment ⇒ one INSERT under one deduplication token, the segment's
//   (unique across restarts), so a replay of a segment stored just before a
//   crash is skipped by ClickHouse. The only exception is a block ClickHouse
//   refuses for its rows: it is split by request into halves under the
//   token with a suffix, and the split is recorded in the segment before the
//   first half's INSERT, so a replay splits it again instead of storing a
//   half twice (block-inserter.ts).
// - A failed append never replays: the log cuts its bytes off the segment
//   before answering (503), and counts nothing of it (the pacer's admission
//   is withdrawn here). If even the cut fails, the segment is sealed at its
//   acknowledged length and read only up to it; a crash before its INSERT
//   is the one case left (the disk refused a truncate and the process died).
// - Only whole requests are dead-lettered: an append is one record of its
//   segment, a block is split at record boundaries, and only a block of one
//   record is kept aside.
// - Which gate answers 429 and which waits (all five, in a request's order):
//   1. in-flight bytes (receivers/inflight-bytes.ts): request bodies being
//      read and decoded, process-wide; past TENANTRY_MAX_INFLIGHT_BYTES, 429
//      at once, the body unread. It bounds memory; nothing else sees a body
//      before it is decoded.
//   2. tenant bucket (limits/ingest-limiter.ts): a tenant's decoded bytes per
//      second; over its limit, 429 at once. It is the only gate per tenant.
//   3. pacer (admission-pacer.ts): while ClickHouse takes writes but slower
//      than they come, a request waits (tenants taking turns) until its rows
//      fit one second of inserting; after `backpressure.maxWaitMs`, 429. It
//      bounds how long an acknowledged row waits to become queryable.
//      Bypassed while ClickHouse fails: there is no rate to pace by.
//   4. log bytes (write-ahead-log.ts, TENANTRY_WAL_MAX_BYTES): past it, 429
//      at once. It acts while ClickHouse fails (the log buffers until then)
//      and bounds the disk; otherwise the pacer keeps the log to about a
//      second of inserting plus the segments being inserted, and it acts
//      only when that is more than the bound (a small TENANTRY_WAL_MAX_BYTES,
//      or before the first INSERT has measured the rate).
//   5. store gate (src/clickhouse/store-gate.ts): an INSERT waits for its
//      turn and connection beside the API's queries; never refused. A client
//      sees it only as a lower INSERT rate, which the pacer measures.
//   Not gates: a failing log disk answers 503 (nothing kept), so does a
//   stopped writer.
import { join } from 'node:path';
import type { StoreFailureKind } from '../../src/clickhouse/clickhouse-error.ts';
import { systemClock } from '../../src/clock.ts';
import type { Clock } from '../../src/clock.ts';
import type { WriterConfig } from '../../src/config/config.ts';
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';
import type { TableName } from '../rowbinary/row-batch.ts';
import { AdmissionPacer } from './admission-pacer.ts';
import type { PacerOptions } from './admission-pacer.ts';
import { backoff, defaultInserterOptions, insertSegment } from './block-inserter.ts';
import type { InsertContext, InsertEvent, InsertStats } from './block-inserter.ts';
import type { RowSink, WriteFailure } from './row-sink.ts';
import { WriteAheadLog } from './write-ahead-log.ts';
import type { Recovery, Segment } from './write-ahead-log.ts';

/** Why a submit was refused or failed. */
export type SubmitFailure = WriteFailure<'overloaded' | 'stopped' | StoreFailureKind>;

export interface WriterObserver {
  inserted(stats: InsertStats): void;
  deadLettered(table: TableName, rows: number, reason: string): void;
  /** A request's rows are in the log: how long they waited to enter it and how long the append (with its fsync) took. */
  submitted(table: TableName, waitSeconds: number, appendSeconds: number): void;
  /** A condition readiness depends on changed: the log's disk, or ClickHouse taking writes. */
  health(condition: string, healthy: boolean, message: string): void;
}

/** What the ingest pipeline needs of a writer: rows in, a durable answer out. */
export interface DurableWriter {
  /** `flow` is whom the rows are for (their tenant): while ClickHouse is behind, waiting flows take turns. */
  submit(table: TableName, rows: Buffer, rowCount: number, flow?: string): Promise<Result<void, SubmitFailure>>;
}

/** Readiness conditions the writer reports. */
export const writerConditions = { disk: 'write-ahead log disk', storage: 'ClickHouse accepting writes' } as const;

/** How long stop() waits for ClickHouse to take the backlog before leaving it to the next start. */
export const stopTimeoutMs = 30_000;

/**
 * The pacer's bounds (gate 3 above): a token bucket of half a second of
 * inserting, drained at the measured INSERT rate, and rows admitted and
 * not yet in an INSERT under one second of inserting, so acknowledged rows
 * become queryable within about that plus their own INSERT (ADR 6). Under
 * overload every request waits a little instead of some waiting a whole
 * INSERT; one not admitted within maxWaitMs is refused with 429.
 */
export const backpressure = { backlogSeconds: 0.5, maxBacklogSeconds: 1, maxWaitMs: 5000 } as const satisfies Omit<PacerOptions, 'unmeasuredBacklogRows'>;

/** A table's sealed segments: those waiting for an INSERT slot, and how many are being inserted. */
interface TableQueue {
  readonly waiting: Segment[];
  running: number;
}

export class LoggedWriter implements DurableWriter {
  readonly #observer: WriterObserver;
  readonly #clock: Clock;
  readonly #wal: WriteAheadLog;
  readonly #pacer: AdmissionPacer<TableName>;
  readonly #insert: InsertContext;
  /** Requests wait and ClickHouse idles until the filling segment is due: it is cut early, but at most twice per cut delay. */
  readonly #earlyCutMs: number;
  readonly #queues = new Map<TableName, TableQueue>();
  readonly #moves = new Set<Promise<void>>();
  readonly #unhealthy = new Set<string>();
  readonly #abandon = new AbortController();

  private constructor(sink: RowSink, config: WriterConfig, observer: WriterObserver, clock: Clock, found: Recovery) {
    this.#observer = observer;
    this.#clock = clock;
    this.#earlyCutMs = Math.min(500, config.maxBatchDelayMs / 2);
    const options = { ...defaultInserterOptions, deadLetterDir: join(config.logDir, 'dead-letter') };
    this.#insert = { sink, options, clock, abandon: this.#abandon.signal };
    this.#wal = new WriteAheadLog(
      {
        dir: config.logDir,
        maxBytes: config.maxLogBytes,
        sync: config.logSync ?? 'write',
        cut: { maxRows: config.maxBatchRows, maxBytes: config.maxBatchBytes, maxDelayMs: config.maxBatchDelayMs },
      },
      {
        sealed: (segment) => {
          this.#enqueue(segment);
        },
        diskHealth: (healthy, message) => {
          this.#report(writerConditions.disk, healthy, message);
        },
      },
      found,
      clock,
    );
    const pacing = { ...backpressure, unmeasuredBacklogRows: config.maxBatchRows, insertSlots: options.parallelism };
    this.#pacer = new AdmissionPacer<TableName>(
      pacing,
      (table) => {
        this.#starved(table);
      },
      clock,
    );
  }

  /** Opens the log in config.logDir and starts inserting what a previous process left. */
  static async open(sink: RowSink, config: WriterConfig, observer: WriterObserver, clock: Clock = systemClock): Promise<LoggedWriter> {
    const found = await WriteAheadLog.recover(config.logDir);
    const writer = new LoggedWriter(sink, config, observer, clock, found);
    for (const segment of found.segments) writer.#enqueue(segment);
    return writer;
  }

  /** Bytes acknowledged and not yet in ClickHouse. */
  get logBytes(): number {
    return this.#wal.bytes;
  }

  /** Logs rows (RowBinary, whole rows) and resolves once they are durable, or at once when refused. */
  async submit(table: TableName, rows: Buffer, rowCount: number, flow = ''): Promise<Result<void, SubmitFailure>> {
    if (rowCount === 0) return ok(undefined);
    const arrived = this.#clock.now();
    if (this.#unhealthy.has(writerConditions.storage)) this.#pacer.bypass(table, rowCount, flow);
    else if (!(await this.#pacer.admit(table, rowCount, flow))) return fail({ kind: 'overloaded', message: `ClickHouse is behind on ${table}: retry later` });
    const admitted = this.#clock.now();
    const result = await this.#wal.append(table, rows, rowCount, flow);
    if (!result.ok) this.#pacer.withdraw(table, rowCount);
    else this.#observer.submitted(table, (admitted - arrived) / 1000, (this.#clock.now() - admitted) / 1000);
    return result;
  }

  /** Seals every segment now instead of when it is due; resolves once they are queued for their INSERTs. */
  seal(): Promise<void> {
    return this.#wal.sealAll();
  }

  /** Resolves once everything acknowledged so far is in ClickHouse (tests, benchmarks). */
  async flush(): Promise<void> {
    await this.seal();
    await this.#idle();
  }

  /** Refuses new rows, seals the log and inserts it; what ClickHouse does not take within stopTimeoutMs stays for the next start. */
  async stop(): Promise<void> {
    await this.#wal.stop();
    const timer = this.#clock.setTimeout(() => {
      this.#abandon.abort();
    }, stopTimeoutMs);
    try {
      await this.#idle();
    } finally {
      timer.cancel();
    }
  }

  async #idle(): Promise<void> {
    while (this.#moves.size > 0) await Promise.all(this.#moves);
  }

  /** A sealed segment (or one a previous process left) queues behind the table's earlier ones. */
  #enqueue(segment: Segment): void {
    let queue = this.#queues.get(segment.table);
    if (queue === undefined) {
      queue = { waiting: [], running: 0 };
      this.#queues.set(segment.table, queue);
    }
    queue.waiting.push(segment);
    this.#fill(segment.table, queue);
  }

  /** Whether a segment sealed now would wait for its INSERT: every slot of the table is taken, or a segment waits already. */
  #full(table: TableName): boolean {
    const queue = this.#queues.get(table);
    return queue !== undefined && (queue.waiting.length > 0 || queue.running >= this.#insert.options.parallelism);
  }

  /** Requests of the table wait for the pacer and an INSERT slot is free: only cutting the filling segment lets them drain. */
  #starved(table: TableName): void {
    if (!this.#full(table)) this.#wal.sealEarly(table, this.#earlyCutMs);
  }

  /** Starts the oldest waiting segments while fewer than `parallelism` of the table are being inserted. */
  #fill(table: TableName, queue: TableQueue): void {
    while (!this.#abandon.signal.aborted && queue.running < this.#insert.options.parallelism) {
      const segment = queue.waiting.shift();
      if (segment === undefined) return;
      queue.running++;
      const move: Promise<void> = this.#move(segment).finally(() => {
        this.#moves.delete(move);
        queue.running--;
        this.#fill(table, queue);
        if (!this.#full(table) && this.#pacer.waiting(table)) this.#wal.sealEarly(table, this.#earlyCutMs);
      });
      this.#moves.add(move);
    }
  }

  /** Inserts one segment and releases it from the log once all of its rows are stored or dead-lettered. */
  async #move(segment: Segment): Promise<void> {
    for await (const event of insertSegment(segment, this.#insert)) {
      if (event.kind === 'abandoned') return; // stays in the log for the next start
      this.#apply(segment, event);
    }
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#wal.release(segment);
        return;
      } catch (error) {
        // Left in the log, the segment would be replayed and skipped by ClickHouse: retried like a storage fault.
        this.#report(writerConditions.storage, false, `write-ahead log segment: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
        if (!(await backoff(this.#insert, attempt))) return;
      }
    }
  }

  /** What an insert's event changes: the pacer's counts (a previous process's rows were never admitted here), health, metrics. */
  #apply(segment: Segment, event: Exclude<InsertEvent, { kind: 'abandoned' }>): void {
    const { table } = segment;
    const admitted = !segment.recovered;
    switch (event.kind) {
      case 'inserting':
        this.#pacer.inserting(table, admitted ? event.rows : 0);
        return;
      case 'inserted':
        // A whole segment's block takes exactly its flows' rows out; a split block's are taken in proportion.
        this.#pacer.inserted(table, event.stats.rows, event.stats.ok, admitted, event.stats.rows === segment.rows ? segment.flows : undefined);
        this.#observer.inserted(event.stats);
        return;
      case 'storage':
        this.#report(writerConditions.storage, event.healthy, event.message);
        return;
      case 'dead-lettered':
        if (admitted) this.#pacer.withdraw(table, event.rows);
        this.#observer.deadLettered(table, event.rows, event.reason);
        return;
    }
  }

  /** Reports a health condition only when it changes. */
  #report(condition: string, healthy: boolean, message: string): void {
    if (healthy !== this.#unhealthy.has(condition)) return;
    if (healthy) this.#unhealthy.delete(condition);
    else this.#unhealthy.add(condition);
    // From now on submit() lets requests in unpaced; those already waiting go in with them.
    if (!healthy && condition === writerConditions.storage) this.#pacer.admitWaiting();
    this.#observer.health(condition, healthy, message);
  }
}
