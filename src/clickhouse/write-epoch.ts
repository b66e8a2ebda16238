// Counts the statements that may change what a table holds, in a process
// that owns its store (embedded ClickHouse: no other process writes its
// data directory). A reader that saw the epoch of the tables it reads quiet
// and unchanged since it last looked knows that no INSERT, ALTER or DDL
// touched them in between, so their rows are those it saw (background
// merges move rows between parts but neither add nor remove a live one;
// TTL merges only drop rows past retention, which every read cuts off
// itself).
//
// Counted per table where the statement names the one it writes (`INSERT
// INTO db.table`, `ALTER TABLE db.table`), so that a log or span INSERT, or
// the gateway's usage and heartbeat rows, leave the metrics table's readers
// alone; any other statement that may write (DDL, an unqualified name)
// counts against every table. A materialized view's target moves with its
// source's INSERT: a reader names the source too (the series index reads
// metric_series, which metrics' INSERTs fill).

/** Starts and ends of the writes of one table (or of writes to any table). */
interface Counts {
  started: number;
  ended: number;
}

/** The write counters of an embedded store (src/clickhouse/chdb-pool.ts keeps them). */
export class WriteEpoch {
  /** Writes whose table is not known: they count against every table. */
  readonly #anywhere: Counts = { started: 0, ended: 0 };
  readonly #tables = new Map<string, Counts>();
  /** Per table, who is told when a write that may have touched it ends and leaves it quiet. */
  readonly #listeners = new Map<string, Set<() => void>>();

  /** Notes that a statement that may write `table` (`db.table`; undefined: any) starts; call `end` once it has ended, however it ended. */
  begin(table?: string): { end(): void } {
    const counts = table === undefined ? this.#anywhere : this.#countsOf(table);
    counts.started++;
    let ended = false;
    return {
      end: () => {
        if (ended) return;
        ended = true;
        counts.ended++;
        this.#tell(table);
      },
    };
  }

  /** Calls `listener` (on a later turn of the event loop) after each write that may have touched `table` ends with the table quiet; returns the unsubscribe. */
  onQuiet(table: string, listener: () => void): () => void {
    let set = this.#listeners.get(table);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(table, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  #tell(table: string | undefined): void {
    for (const [name, set] of this.#listeners) {
      if ((table !== undefined && name !== table) || this.quiet(name) === undefined) continue;
      for (const listener of set) setImmediate(listener);
    }
  }

  /**
   * The epoch of `tables` (each `db.table`; none: every table) when no write that may touch them is in flight,
   * else undefined: equal epochs at two quiet moments mean no such write ran between them.
   */
  quiet(...tables: readonly string[]): number | undefined {
    if (tables.length === 0) {
      let started = this.#anywhere.started;
      let ended = this.#anywhere.ended;
      for (const c of this.#tables.values()) {
        started += c.started;
        ended += c.ended;
      }
      return started === ended ? started : undefined;
    }
    if (this.#anywhere.started !== this.#anywhere.ended) return undefined;
    // Every count only grows, so the sum moves whenever one of them does.
    let epoch = this.#anywhere.started;
    for (const table of tables) {
      const c = this.#tables.get(table);
      if (c === undefined) continue;
      if (c.started !== c.ended) return undefined;
      epoch += c.started;
    }
    return epoch;
  }

  #countsOf(table: string): Counts {
    let c = this.#tables.get(table);
    if (c === undefined) {
      c = { started: 0, ended: 0 };
      this.#tables.set(table, c);
    }
    return c;
  }
}

/** Whether a statement only reads (SELECT, WITH, SHOW, DESCRIBE, EXPLAIN, EXISTS, KILL); anything else counts as a write. */
export function readOnly(sql: string): boolean {
  return /^\s*(?:SELECT|WITH|SHOW|DESC|DESCRIBE|EXPLAIN|EXISTS|KILL)\b/i.test(sql);
}

/** The `db.table` a write names (`INSERT INTO db.table`, `ALTER TABLE db.table`), or undefined when it names none qualified (it may write any). */
export function writtenTable(sql: string): string | undefined {
  const m = /^\s*(?:INSERT\s+INTO(?:\s+TABLE)?|ALTER\s+TABLE)\s+`?([A-Za-z_][A-Za-z0-9_]*)`?\.`?([A-Za-z_][A-Za-z0-9_]*)`?[\s(]/i.exec(sql);
  return m === null ? undefined : `${m[1] ?? ''}.${m[2] ?? ''}`;
}
