// The gateway's writer: a request's rows are acknowledged once the
// write-ahead log has them on disk; the block inserter moves sealed
// segments into ClickHouse in large blocks, whatever the number of clients
// (docs/adr/0006-write-ahead-log.md). On open, segments a previous process
// left behind are inserted first.
import { join } from 'node:path';
import type { StoreFailureKind } from '../../src/clickhouse/clickhouse-error.ts';
import type { Clock } from '../../src/clock.ts';
import type { WriterConfig } from '../../src/config/config.ts';
import type { TableName } from '../rowbinary/row-batch.ts';
import { AdmissionPacer } from './admission-pacer.ts';
import type { PacerOptions } from './admission-pacer.ts';
import { BlockInserter, defaultInserterOptions } from './block-inserter.ts';
import type { InsertStats } from './block-inserter.ts';
import type { RowSink } from './row-sink.ts';
import { WriteAheadLog } from './write-ahead-log.ts';

export type SubmitResult = { readonly ok: true } | { readonly ok: false; readonly kind: 'overloaded' | 'stopped' | StoreFailureKind; readonly message: string };

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
  submit(table: TableName, rows: Buffer, rowCount: number, flow?: string): Promise<SubmitResult>;
}

/** Readiness conditions the writer reports. */
export const writerConditions = { disk: 'write-ahead log disk', storage: 'ClickHouse accepting writes' } as const;

/** How long stop() waits for ClickHouse to take the backlog before leaving it to the next start. */
export const stopTimeoutMs = 30_000;

/**
 * Backpressure while ClickHouse is healthy but slower than the traffic:
 * requests enter the log at the pace ClickHouse takes rows out of it (a
 * token bucket of half a second's worth, drained at the measured INSERT
 * rate), and the rows admitted and not yet in an INSERT (the filling
 * segment and sealed ones waiting for an INSERT slot) stay under one
 * second of inserting, so acknowledged rows become queryable within about
 * that plus their own INSERT (ADR 6). Under overload every request waits a
 * little instead of some waiting a whole INSERT; one not admitted within
 * maxWaitMs is refused with 429. While ClickHouse fails, the log buffers up
 * to its byte bound instead (that is what it is for).
 */
export const backpressure = { backlogSeconds: 0.5, maxBacklogSeconds: 1, maxWaitMs: 5000 } as const satisfies Omit<PacerOptions, 'unmeasuredBacklogRows'>;

export class LoggedWriter implements DurableWriter {
  readonly #wal: WriteAheadLog;
  readonly #inserter: BlockInserter;
  readonly #health: HealthEdges;
  readonly #pacer: AdmissionPacer<TableName>;
  readonly #observer: WriterObserver;

  private constructor(wal: WriteAheadLog, inserter: BlockInserter, health: HealthEdges, pacer: AdmissionPacer<TableName>, observer: WriterObserver) {
    this.#observer = observer;
    this.#wal = wal;
    this.#inserter = inserter;
    this.#health = health;
    this.#pacer = pacer;
  }

  /** Opens the log in config.logDir and starts inserting what a previous process left. */
  static async open(sink: RowSink, config: WriterConfig, observer: WriterObserver, clock?: Clock): Promise<LoggedWriter> {
    // Nothing is sealed while the log opens (no appends yet); the inserter is there before the first seal.
    const handoff: { inserter?: BlockInserter } = {};
    const health = new HealthEdges(observer);
    const opened = await WriteAheadLog.open(
      { dir: config.logDir, maxBytes: config.maxLogBytes, sync: config.logSync ?? 'write', cut: { maxRows: config.maxBatchRows, maxBytes: config.maxBatchBytes, maxDelayMs: config.maxBatchDelayMs } },
      {
        sealed: (segment) => { handoff.inserter?.enqueue(segment); },
        diskHealth: (healthy, message) => { health.report(writerConditions.disk, healthy, message); },
      },
    );
    const log = opened.wal;
    // Requests wait and ClickHouse idles until the filling segment is due: cut it early, but at most twice per cut delay.
    const earlyCutMs = Math.min(500, config.maxBatchDelayMs / 2);
    const pacer = new AdmissionPacer<TableName>({ ...backpressure, unmeasuredBacklogRows: config.maxBatchRows, insertSlots: defaultInserterOptions.parallelism }, (table) => {
      if (handoff.inserter?.full(table) !== true) log.sealEarly(table, earlyCutMs);
    }, clock);
    // A previous process's rows were never admitted here; their blocks (and the halves they split into) carry their segment's token.
    const recovered = opened.recovered.map((segment) => segment.token);
    const admitted = (token: string): boolean => !recovered.some((t) => token.startsWith(t));
    const inserter = new BlockInserter(sink, log, {
      inserting: (table, rows, token) => { pacer.inserting(table, admitted(token) ? rows : 0); },
      inserted: (stats) => {
        pacer.inserted(stats.table, stats.rows, stats.ok, admitted(stats.token));
        observer.inserted(stats);
      },
      storageHealth: (healthy, message) => { health.report(writerConditions.storage, healthy, message); },
      deadLettered: (table, rows, reason, token) => {
        if (admitted(token)) pacer.withdraw(table, rows);
        observer.deadLettered(table, rows, reason);
      },
      slotFree: (table) => {
        if (pacer.waiting(table)) log.sealEarly(table, earlyCutMs);
      },
    }, { ...defaultInserterOptions, deadLetterDir: join(config.logDir, 'dead-letter') });
    handoff.inserter = inserter;
    for (const segment of opened.recovered) inserter.enqueue(segment);
    return new LoggedWriter(log, inserter, health, pacer, observer);
  }

  /** Bytes acknowledged and not yet in ClickHouse. */
  get logBytes(): number {
    return this.#wal.bytes;
  }

  /** Logs rows (RowBinary, whole rows) and resolves once they are durable, or at once when refused. */
  async submit(table: TableName, rows: Buffer, rowCount: number, flow = ''): Promise<SubmitResult> {
    if (rowCount === 0) return { ok: true };
    const arrived = performance.now();
    if (!this.#health.healthy(writerConditions.storage)) this.#pacer.bypass(table, rowCount);
    else if (!await this.#pacer.admit(table, rowCount, flow)) return { ok: false, kind: 'overloaded', message: `ClickHouse is behind on ${table}: retry later` };
    const admitted = performance.now();
    const result = await this.#wal.append(table, rows, rowCount);
    if (!result.ok) this.#pacer.withdraw(table, rowCount);
    else this.#observer.submitted(table, (admitted - arrived) / 1000, (performance.now() - admitted) / 1000);
    return result;
  }

  /** Seals every segment now instead of when it is due; resolves once they are queued for their INSERTs. */
  seal(): Promise<void> {
    return this.#wal.sealAll();
  }

  /** Resolves once everything acknowledged so far is in ClickHouse (tests, benchmarks). */
  async flush(): Promise<void> {
    await this.seal();
    await this.#inserter.whenIdle();
  }

  /** Refuses new rows, seals the log and inserts it; what ClickHouse does not take in time stays for the next start. */
  async stop(): Promise<void> {
    await this.#wal.stop();
    await this.#inserter.stop(stopTimeoutMs);
  }
}

/** Reports a health condition only when it changes. */
class HealthEdges {
  readonly #observer: WriterObserver;
  readonly #unhealthy = new Set<string>();

  constructor(observer: WriterObserver) {
    this.#observer = observer;
  }

  healthy(condition: string): boolean {
    return !this.#unhealthy.has(condition);
  }

  report(condition: string, healthy: boolean, message: string): void {
    if (healthy !== this.#unhealthy.has(condition)) return;
    if (healthy) this.#unhealthy.delete(condition);
    else this.#unhealthy.add(condition);
    this.#observer.health(condition, healthy, message);
  }
}
