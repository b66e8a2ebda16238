// Counts the statements that may change what a table holds, in a process
// that owns its store (embedded ClickHouse: no other process writes its
// data directory). A reader that saw the epoch quiet and unchanged since
// it last looked knows that no INSERT, ALTER or DDL ran in between, so the
// store's rows are those it saw (background merges move rows between parts
// but neither add nor remove a live one; TTL merges only drop rows past
// retention, which every read cuts off itself).

/** The write counters of an embedded store (src/clickhouse/chdb-pool.ts keeps them). */
export class WriteEpoch {
  #started = 0;
  #ended = 0;

  /** Notes that a statement that may write starts; call `end` once it has ended, however it ended. */
  begin(): { end(): void } {
    this.#started++;
    let ended = false;
    return {
      end: () => {
        if (ended) return;
        ended = true;
        this.#ended++;
      },
    };
  }

  /** The epoch when no write is in flight, else undefined: equal epochs at two quiet moments mean no write ran between them. */
  quiet(): number | undefined {
    return this.#started === this.#ended ? this.#started : undefined;
  }
}

/** Whether a statement only reads (SELECT, WITH, SHOW, DESCRIBE, EXPLAIN, EXISTS, KILL); anything else counts as a write. */
export function readOnly(sql: string): boolean {
  return /^\s*(?:SELECT|WITH|SHOW|DESC|DESCRIBE|EXPLAIN|EXISTS|KILL)\b/i.test(sql);
}
