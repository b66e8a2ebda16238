// Paces requests into the write-ahead log at the rate ClickHouse takes the
// rows out, per table, so that under overload every request waits a little
// instead of some waiting a whole INSERT (docs/adr/0006-write-ahead-log.md,
// "Backpressure").
//
// Two bounds, both in seconds of inserting at the measured INSERT rate:
// - a token bucket: admitted rows drain from it continuously, whatever the
//   INSERTs' boundaries, so admissions flow at a steady pace (a request
//   waits about its own rows' worth, not for an INSERT to end); at most
//   `backlogSeconds` may be in it;
// - the real backlog, rows admitted and not yet in an INSERT (the filling
//   segment and sealed ones waiting for an INSERT), at most
//   `maxBacklogSeconds`: it bounds how long an acknowledged row waits to
//   become queryable. The bucket drains at the measured rate while the real
//   backlog is under `backlogSeconds`, and slower as it grows towards the
//   bound (not at all at it): an INSERT rate measured higher than what the
//   table sustains (INSERTs are not back to back; a query or merges slow
//   them) settles as a slightly longer backlog instead of admissions
//   stalling at the bound until an INSERT ends.
// Waiters are served in deficit round robin over their flows (tenants), so
// a flooding tenant does not make a small one wait behind its requests, and
// first come, first served within a flow.
//
// The bounds are shared, so one tenant's large requests could fill them
// and leave another's small request waiting for an INSERT to end (issue
// 35: a tenant's 16 MB bodies, 19,530 rows each, held another's 100-row
// requests 0.5-0.7 s). So while two or more flows have rows in the backlog
// or waiting, a flow whose own rows in the backlog stay within its equal
// share of the bucket (rate × backlogSeconds / flows) enters past the
// bounds and past the round robin's head. A flow's rows leave the backlog
// when an INSERT of a segment holding them ends (a segment knows its rows
// per flow); a split block's rows and dead letters leave every flow in
// proportion. The backlog may pass its bound by the others' shares, at
// most once more.

import { systemClock } from '../../src/clock.ts';
import type { Clock } from '../../src/clock.ts';
import { FairQueue } from './fair-queue.ts';

export interface PacerOptions {
  /** Seconds of inserting the token bucket holds: how far admissions may run ahead of the measured rate. */
  readonly backlogSeconds: number;
  /** Seconds of inserting the real backlog (admitted, not yet in an INSERT) may hold. */
  readonly maxBacklogSeconds: number;
  /** Longest a request waits before it is refused. */
  readonly maxWaitMs: number;
  /**
   * Until a table's first INSERT has measured its rate, rows admitted and not
   * yet inserted stay under this many (one block: the first INSERT measures
   * the rate on a block of the size the next ones will have).
   */
  readonly unmeasuredBacklogRows: number;
  /** INSERTs of a table that may run at once (the inserter's parallelism): fewer running while requests wait is starving. 1 when absent. */
  readonly insertSlots?: number;
}

/**
 * Called when requests of a table wait and fewer of its INSERTs run than
 * may: the rows are in the segment still filling, and only cutting it now
 * lets them drain (otherwise ClickHouse idles until the segment is due).
 */
export type Starved<Table extends string> = (table: Table) => void;

/** Weight of the newest INSERT in the rate estimate. */
const rateSmoothing = 0.3;

/**
 * The bucket drains at this share of the measured rate: INSERTs are not
 * back to back (a segment is read, the next one cut), so the rate an
 * INSERT measures is a little above what the table sustains.
 */
const sustainedShare = 0.9;

/** Rows each flow may take per round of the fair queue: about one request. */
export const fairQuantumRows = 1000;

interface Waiter {
  readonly flow: string;
  readonly rows: number;
  readonly resolve: (admitted: boolean) => void;
  readonly deadline: { cancel(): void };
}

class TablePace {
  /** Rows admitted and not yet inserted. */
  backlog = 0;
  /** Rows of the INSERTs running now. */
  runningRows = 0;
  /** The token bucket's level, in rows, as of `drainedAt`. */
  bucket = 0;
  drainedAt = 0;
  /** The rate's two smoothed terms: rows per INSERT, and the seconds each one took the table (0 until one INSERT was measured). */
  smoothedRows = 0;
  smoothedSeconds = 0;
  /** Rows per second of INSERT, smoothed; undefined until one INSERT was measured. */
  get rate(): number | undefined {
    return this.smoothedSeconds > 0 ? this.smoothedRows / this.smoothedSeconds : undefined;
  }
  /** When each running INSERT began (several may overlap). */
  readonly runningSince: number[] = [];
  /** When the last INSERT ended. */
  endedAt = Number.NEGATIVE_INFINITY;
  readonly waiters = new FairQueue<Waiter>(fairQuantumRows);
  wake: { cancel(): void } | undefined;
  /** Each flow's rows in the backlog (see the header). */
  readonly outstanding = new Map<string, number>();
}

export class AdmissionPacer<Table extends string> {
  readonly #clock: Clock;
  readonly #options: PacerOptions;
  readonly #tables = new Map<Table, TablePace>();
  readonly #starved: Starved<Table>;

  constructor(options: PacerOptions, starved: Starved<Table>, clock: Clock = systemClock) {
    this.#options = options;
    this.#starved = starved;
    this.#clock = clock;
  }

  /**
   * Resolves true once `rows` more rows of the table may enter the log
   * (counted in its backlog from then on), or false after maxWaitMs.
   * `flow` is whom the rows are for (the tenant): waiting flows take turns.
   */
  admit(table: Table, rows: number, flow = ''): Promise<boolean> {
    const pace = this.#pace(table);
    if ((pace.waiters.size === 0 && this.#fits(pace, rows)) || (!pace.waiters.has(flow) && this.#withinShare(pace, flow, rows))) {
      this.#enter(pace, rows, flow);
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const waiter: Waiter = {
        flow,
        rows,
        resolve,
        deadline: this.#clock.setTimeout(() => {
          pace.waiters.remove(flow, waiter);
          resolve(false);
          this.#serve(table, pace); // the next waiter may fit where this one did not
        }, this.#options.maxWaitMs),
      };
      pace.waiters.push(flow, waiter);
      this.#serve(table, pace);
    });
  }

  /** Counts rows that enter without waiting (while ClickHouse fails, the log buffers them instead of pacing). */
  bypass(table: Table, rows: number, flow = ''): void {
    this.#enter(this.#pace(table), rows, flow);
  }

  /**
   * Lets in every request waiting, as bypass() does: ClickHouse is known to fail, so later requests enter
   * without pacing, and those that began waiting before it was known would otherwise wait for an INSERT
   * that cannot end while it fails, and be refused after maxWaitMs.
   */
  admitWaiting(): void {
    for (const pace of this.#tables.values()) {
      for (let waiter = pace.waiters.take(); waiter !== undefined; waiter = pace.waiters.take()) {
        waiter.deadline.cancel();
        this.#enter(pace, waiter.rows, waiter.flow);
        waiter.resolve(true);
      }
      pace.wake?.cancel();
      pace.wake = undefined;
    }
  }

  /** Admitted rows that left without an INSERT: the append failed, or they were dead-lettered. */
  withdraw(table: Table, rows: number): void {
    const pace = this.#pace(table);
    this.#drain(pace);
    this.#leave(pace, rows);
    pace.bucket = Math.max(0, pace.bucket - rows);
    this.#serve(table, pace);
  }

  /** An INSERT of `rows` of the table's rows begins (others of the table may be running); 0 rows for a previous process's segment. */
  inserting(table: Table, rows = 0): void {
    const pace = this.#pace(table);
    pace.runningSince.push(this.#clock.now());
    pace.runningRows += rows;
    this.#schedule(table, pace);
  }

  /**
   * An INSERT ended. A stored block measures the rate; its rows leave the
   * backlog unless they were never admitted here (`admitted` false: a
   * previous process's segment). The rate is rows per second of the table
   * being inserted: each INSERT's rows over the time since the later of its
   * start (taken as the earliest running one's) and the last INSERT's end,
   * so overlapping INSERTs measure what they take together, and INSERTs
   * one after another what each takes. `flows`: the block's rows per flow,
   * when it is a whole segment (otherwise every flow's leave in proportion).
   */
  inserted(table: Table, rows: number, stored: boolean, admitted: boolean, flows?: ReadonlyMap<string, number>): void {
    const pace = this.#pace(table);
    const now = this.#clock.now();
    const started = pace.runningSince.shift();
    const seconds = started === undefined ? 0 : (now - Math.max(started, pace.endedAt)) / 1000;
    pace.endedAt = now;
    this.#drain(pace); // at the old rate and backlog up to now
    if (admitted) pace.runningRows = Math.max(0, pace.runningRows - rows); // a previous process's INSERT began with none
    if (stored) {
      if (admitted) this.#leave(pace, rows, flows);
      if (seconds > 0 && rows > 0) {
        // Smoothed apart, not as rows / seconds per INSERT: an INSERT ending just after an overlapping one
        // counts only that short while, and its own ratio would be many times the table's rate.
        const first = pace.rate === undefined;
        pace.smoothedRows = first ? rows : pace.smoothedRows + rateSmoothing * (rows - pace.smoothedRows);
        pace.smoothedSeconds = first ? seconds : pace.smoothedSeconds + rateSmoothing * (seconds - pace.smoothedSeconds);
      }
    }
    this.#serve(table, pace);
  }

  /** Whether requests of the table wait to be admitted. */
  waiting(table: Table): boolean {
    return this.#pace(table).waiters.size > 0;
  }

  /** Rows per second the table's INSERTs take, as measured; undefined before the first one ended. */
  measuredRate(table: Table): number | undefined {
    return this.#pace(table).rate;
  }

  /** Rows of the table admitted and not yet inserted. */
  backlog(table: Table): number {
    return this.#pace(table).backlog;
  }

  #pace(table: Table): TablePace {
    let pace = this.#tables.get(table);
    if (pace === undefined) {
      pace = new TablePace();
      this.#tables.set(table, pace);
    }
    return pace;
  }

  /** Brings the bucket's level up to now. */
  #drain(pace: TablePace): void {
    const now = this.#clock.now();
    // Without a measured rate there is nothing to pace by: the bucket starts empty once there is.
    pace.bucket = pace.rate === undefined ? 0 : Math.max(0, pace.bucket - (this.#drainRate(pace) * (now - pace.drainedAt)) / 1000);
    pace.drainedAt = now;
  }

  /** Rows per second the bucket drains now: the measured rate, slowed as the real backlog grows past backlogSeconds. */
  #drainRate(pace: TablePace): number {
    if (pace.rate === undefined) return 0;
    const target = pace.rate * this.#options.backlogSeconds;
    const bound = pace.rate * this.#options.maxBacklogSeconds;
    const waiting = this.#waitingRows(pace);
    const room = bound <= target ? (waiting < bound ? 1 : 0) : Math.min(1, Math.max(0, (bound - waiting) / (bound - target)));
    return pace.rate * sustainedShare * room;
  }

  /**
   * The real backlog: admitted rows not yet in an INSERT. Rows being inserted
   * are not counted: the INSERTs' number and size are bounded already, and
   * counting them held admissions back while ClickHouse kept up (the filling
   * segment and the running INSERT alone made up most of a second).
   */
  #waitingRows(pace: TablePace): number {
    return Math.max(0, pace.backlog - pace.runningRows);
  }

  #enter(pace: TablePace, rows: number, flow: string): void {
    this.#drain(pace);
    pace.backlog += rows;
    pace.bucket += rows;
    pace.outstanding.set(flow, (pace.outstanding.get(flow) ?? 0) + rows);
  }

  /** Rows leave the backlog: `flows`' rows when known, else each flow's in proportion. */
  #leave(pace: TablePace, rows: number, flows?: ReadonlyMap<string, number>): void {
    const before = pace.backlog;
    pace.backlog = Math.max(0, before - rows);
    if (flows !== undefined) {
      for (const [flow, n] of flows) {
        const left = (pace.outstanding.get(flow) ?? 0) - n;
        if (left < 1) pace.outstanding.delete(flow);
        else pace.outstanding.set(flow, left);
      }
      return;
    }
    const kept = before > 0 ? pace.backlog / before : 0;
    for (const [flow, n] of pace.outstanding) {
      const left = n * kept;
      if (left < 1) pace.outstanding.delete(flow);
      else pace.outstanding.set(flow, left);
    }
  }

  /**
   * Whether `flow` may enter past the bounds: two or more flows have rows in
   * the backlog or waiting, and its own rows there stay within its equal
   * share of the bucket (see the header).
   */
  #withinShare(pace: TablePace, flow: string, rows: number): boolean {
    // Counted without building a set: this runs for every request admitted.
    let flows = pace.outstanding.size + (pace.outstanding.has(flow) ? 0 : 1);
    for (const [waiting] of pace.waiters.heads()) if (waiting !== flow && !pace.outstanding.has(waiting)) flows++;
    if (flows < 2) return false;
    const capacity = pace.rate === undefined ? this.#options.unmeasuredBacklogRows : pace.rate * this.#options.backlogSeconds;
    return (pace.outstanding.get(flow) ?? 0) + rows <= capacity / flows;
  }

  /** Why the rows cannot enter now: the bucket (time will make room) or the real backlog (only an INSERT will); undefined when they can. */
  #blocked(pace: TablePace, rows: number): 'bucket' | 'backlog' | undefined {
    // An empty backlog takes any request, however large, or it could never enter.
    if (pace.backlog === 0) return undefined;
    // No measure yet: nothing to pace by, but a burst admitted before the first INSERT ends would be a
    // backlog of unknown seconds that every request then waits out (all of a start's clients got 429 after 5 s).
    if (pace.rate === undefined) return pace.backlog + rows > this.#options.unmeasuredBacklogRows ? 'backlog' : undefined;
    if (this.#waitingRows(pace) + rows > pace.rate * this.#options.maxBacklogSeconds) return 'backlog';
    this.#drain(pace);
    return pace.bucket + rows > pace.rate * this.#options.backlogSeconds ? 'bucket' : undefined;
  }

  #fits(pace: TablePace, rows: number): boolean {
    return this.#blocked(pace, rows) === undefined;
  }

  #serve(table: Table, pace: TablePace): void {
    for (let head = pace.waiters.peek(); head !== undefined && this.#fits(pace, head.rows); head = pace.waiters.peek()) {
      pace.waiters.take();
      head.deadline.cancel();
      this.#enter(pace, head.rows, head.flow);
      head.resolve(true);
    }
    // Past a head that does not fit: flows within their share (see the header).
    for (const [flow, waiter] of pace.waiters.heads()) {
      if (!this.#withinShare(pace, flow, waiter.rows)) continue;
      pace.waiters.remove(flow, waiter);
      waiter.deadline.cancel();
      this.#enter(pace, waiter.rows, flow);
      waiter.resolve(true);
    }
    this.#schedule(table, pace);
  }

  /** Wakes up when the bucket will have room for the next waiter; the real backlog waits for an INSERT instead. */
  #schedule(table: Table, pace: TablePace): void {
    pace.wake?.cancel();
    pace.wake = undefined;
    const head = pace.waiters.peek();
    if (head === undefined) return;
    if (pace.runningSince.length < (this.#options.insertSlots ?? 1)) this.#starved(table);
    const blocked = this.#blocked(pace, head.rows);
    if (blocked === undefined) {
      this.#serve(table, pace);
      return;
    }
    if (pace.rate === undefined) return; // the first INSERT's end makes room
    const drainRate = this.#drainRate(pace);
    if (blocked === 'backlog' || drainRate === 0) return; // only an INSERT's end makes room
    const excess = pace.bucket + head.rows - pace.rate * this.#options.backlogSeconds;
    pace.wake = this.#clock.setTimeout(
      () => {
        pace.wake = undefined;
        this.#serve(table, pace);
      },
      Math.max(1, Math.ceil((excess / drainRate) * 1000)),
    );
  }
}
