// Paces requests into the write-ahead log at the rate ClickHouse takes the
// rows out, per table, so that under overload every request waits a little
// instead of some waiting a whole INSERT (docs/adr/0006-write-ahead-log.md,
// "Backpressure").
//
// The backlog of a table is the rows admitted and not yet inserted. While an
// INSERT runs, its rows leave the backlog at the measured rate rather than
// all at once when it ends, so admissions flow at a steady pace through the
// INSERT instead of in a burst after it. A request is admitted while the
// estimated backlog with its rows stays under `backlogSeconds` of inserting;
// waiters are served in deficit round robin over their flows (tenants), so
// a flooding tenant does not make a small one wait behind its requests, and
// first come, first served within a flow. The estimate never counts a
// running INSERT as more than done, so when ClickHouse slows down (a long
// query holds it, merges run) the real backlog throttles admissions at once.

import { FairQueue } from './fair-queue.ts';

/** The time source; tests inject one. */
export interface PacerClock {
  now(): number;
  setTimeout(run: () => void, ms: number): { cancel(): void };
}

export const systemClock: PacerClock = {
  now: () => performance.now(),
  setTimeout: (run, ms) => {
    const timer = setTimeout(run, ms);
    return { cancel: () => { clearTimeout(timer); } };
  },
};

export interface PacerOptions {
  /** Seconds of inserting the backlog may hold before requests wait (includes the segment still filling). */
  readonly backlogSeconds: number;
  /** Longest a request waits before it is refused. */
  readonly maxWaitMs: number;
}

/**
 * Called when requests of a table wait and no INSERT of it runs: the rows
 * are all in the segment still filling, and only cutting it now lets them
 * drain (otherwise ClickHouse idles until the segment is due).
 */
export type Starved<Table extends string> = (table: Table) => void;

/** Weight of the newest INSERT in the rate estimate. */
const rateSmoothing = 0.3;

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
  /** Rows per second of INSERT, smoothed; undefined until one INSERT was measured. */
  rate: number | undefined;
  running: { readonly rows: number; readonly since: number } | undefined;
  readonly waiters = new FairQueue<Waiter>(fairQuantumRows);
  wake: { cancel(): void } | undefined;
}

export class AdmissionPacer<Table extends string> {
  readonly #clock: PacerClock;
  readonly #options: PacerOptions;
  readonly #tables = new Map<Table, TablePace>();

  readonly #starved: Starved<Table>;

  constructor(options: PacerOptions, starved: Starved<Table>, clock: PacerClock = systemClock) {
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
    if (pace.waiters.size === 0 && this.#fits(pace, rows)) {
      pace.backlog += rows;
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
      this.#schedule(table, pace);
    });
  }

  /** Counts rows that enter without waiting (while ClickHouse fails, the log buffers them instead of pacing). */
  bypass(table: Table, rows: number): void {
    this.#pace(table).backlog += rows;
  }

  /** Admitted rows that left without an INSERT: the append failed, or they were dead-lettered. */
  withdraw(table: Table, rows: number): void {
    const pace = this.#pace(table);
    pace.backlog = Math.max(0, pace.backlog - rows);
    this.#serve(table, pace);
  }

  /** An INSERT of the table's rows begins. */
  inserting(table: Table, rows: number): void {
    const pace = this.#pace(table);
    pace.running = { rows, since: this.#clock.now() };
    this.#schedule(table, pace);
  }

  /**
   * The running INSERT ended. A stored block measures the rate; its rows
   * leave the backlog unless they were never admitted here (`admitted`
   * false: a previous process's segment).
   */
  inserted(table: Table, rows: number, stored: boolean, admitted: boolean): void {
    const pace = this.#pace(table);
    const seconds = pace.running === undefined ? 0 : (this.#clock.now() - pace.running.since) / 1000;
    pace.running = undefined;
    if (stored) {
      if (admitted) pace.backlog = Math.max(0, pace.backlog - rows);
      if (seconds > 0 && rows > 0) {
        const measured = rows / seconds;
        pace.rate = pace.rate === undefined ? measured : pace.rate + rateSmoothing * (measured - pace.rate);
      }
    }
    this.#serve(table, pace);
  }

  /** Whether requests of the table wait to be admitted. */
  waiting(table: Table): boolean {
    return this.#pace(table).waiters.size > 0;
  }

  /** Rows of the table estimated still to insert, now. */
  backlog(table: Table): number {
    return this.#estimate(this.#pace(table));
  }

  #pace(table: Table): TablePace {
    let pace = this.#tables.get(table);
    if (pace === undefined) {
      pace = new TablePace();
      this.#tables.set(table, pace);
    }
    return pace;
  }

  #estimate(pace: TablePace): number {
    if (pace.running === undefined || pace.rate === undefined) return pace.backlog;
    const done = Math.min(pace.running.rows, pace.rate * (this.#clock.now() - pace.running.since) / 1000);
    return Math.max(0, pace.backlog - done);
  }

  #fits(pace: TablePace, rows: number): boolean {
    // No measure yet: nothing to pace by (the log's byte bound still holds).
    if (pace.rate === undefined) return true;
    const estimate = this.#estimate(pace);
    // An empty backlog takes any request, however large, or it could never enter.
    return estimate === 0 || estimate + rows <= pace.rate * this.#options.backlogSeconds;
  }

  #serve(table: Table, pace: TablePace): void {
    for (let head = pace.waiters.peek(); head !== undefined && this.#fits(pace, head.rows); head = pace.waiters.peek()) {
      pace.waiters.take();
      head.deadline.cancel();
      pace.backlog += head.rows;
      head.resolve(true);
    }
    this.#schedule(table, pace);
  }

  /** Wakes up when the running INSERT should have made room for the first waiter. */
  #schedule(table: Table, pace: TablePace): void {
    pace.wake?.cancel();
    pace.wake = undefined;
    const head = pace.waiters.peek();
    if (head === undefined || pace.rate === undefined) return;
    if (pace.running === undefined) {
      this.#starved(table); // the next INSERT's start and end wake it
      return;
    }
    const excess = this.#estimate(pace) + head.rows - pace.rate * this.#options.backlogSeconds;
    const left = pace.running.rows - pace.rate * (this.#clock.now() - pace.running.since) / 1000;
    if (excess > left) return; // only the INSERT's end makes enough room
    pace.wake = this.#clock.setTimeout(() => { pace.wake = undefined; this.#serve(table, pace); }, Math.max(1, Math.ceil(excess / pace.rate * 1000)));
  }
}
