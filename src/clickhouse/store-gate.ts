// The one gate every statement of a serving process passes on its way to
// ClickHouse: the gateway's block INSERTs and the API's queries. Created once
// by the composition root and handed to both.
//
// - Per API key, at most `maxConcurrentQueries` queries are in flight; one
//   more waits briefly for the key's own queries, then is refused (429).
//   A query about one tenant also counts against that tenant's own limit
//   (its limits.maxConcurrentQueries, carried by the caller), the same way.
//   In server mode that is all: each API replica counts its own, and
//   INSERTs go straight through.
// - Embedded ClickHouse (chDB) runs one statement at a time per connection
//   (and every statement with bound parameters one at a time per process):
//   a statement waits, unseen, behind every one before it, so eight loops
//   of wide queries left an INSERT behind eight queries. The gate therefore
//   holds the queries' turn itself: one query at a time, round-robin over
//   keys (first come first served within a key). INSERTs have a connection
//   of their own (Store.insertClients) and run beside the queries; when they
//   share the queries' connection (`insertsTakeTurn`), a waiting INSERT
//   gets the turn first. A running query is not preempted for an INSERT
//   (it is only killed when its time runs out or its client goes away,
//   api/v1/query/running-statements.ts, and holds the turn until chDB has
//   really ended it), so while
//   ingest is active queries also yield: after a query that ran d ms, the
//   next one starts no sooner than d × (1 − share) / share ms later, which
//   keeps queries to `queryShare` of the time and leaves the rest (and the
//   CPU) to INSERTs and the gateway. With no ingest, queries run back to
//   back.
//   A query's statement runs at most `maxRunMs` (the time waiting for the
//   turn counts toward the query's own limit, not this one) and, if the
//   policy says so, on fewer threads, leaving a core to the gateway.
import { KeyConcurrency } from './key-concurrency.ts';
import { systemClock } from '../clock.ts';
import type { Clock } from '../clock.ts';

/** Who runs a query: the identity of its API key. */
export interface QueryCaller {
  /** Compared by identity (the key's Principal); per-key limits count by it. */
  readonly key: unknown;
  /** The tenant the query reads, with its own limit of queries in flight (absent: no tenant limit, e.g. the tenant list). */
  readonly tenant?: { readonly id: string; readonly maxConcurrentQueries: number };
}

export type QueryTurn<T> =
  | { readonly ok: true; readonly value: T }
  /** The key already has `limit` queries in flight and none finished within the wait. */
  | { readonly ok: false; readonly refused: 'key_limit'; readonly limit: number; readonly retryAfterSeconds: number }
  /** The tenant already has `limit` queries in flight and none finished within the wait. */
  | { readonly ok: false; readonly refused: 'tenant_limit'; readonly limit: number; readonly retryAfterSeconds: number }
  /** The query's time ran out while it waited for its turn. */
  | { readonly ok: false; readonly refused: 'deadline'; readonly waitedMs: number };

/** What a query's statement may use once it has its turn. */
export interface StatementBudget {
  /** Milliseconds it may run: what is left of the query's time limit, at most the gate's limit per statement. */
  readonly ms: number;
  /** Threads it may use (max_threads), or undefined for ClickHouse's default. */
  readonly threads: number | undefined;
}

export interface StoreGate {
  /** Runs an INSERT when the store can take it; inserts are never refused. */
  insert<T>(work: () => Promise<T>): Promise<T>;
  /**
   * Runs a query for `caller` within `timeoutMs` (waiting included): `work`
   * gets the budget of the statement itself. A throw of `work` is passed on.
   */
  query<T>(caller: QueryCaller, timeoutMs: number, work: (budget: StatementBudget) => Promise<T>): Promise<QueryTurn<T>>;
}

export interface GatePolicy {
  /** True for embedded ClickHouse: one query at a time, scheduled here. */
  readonly exclusive: boolean;
  /** Exclusive mode: INSERTs share the queries' connection, so they take the turn too (first). */
  readonly insertsTakeTurn: boolean;
  /** Queries in flight per key; a tenant's own limit plugs in here. */
  readonly maxConcurrentQueries: (caller: QueryCaller) => number;
  /** How long a query over its key's limit waits for one of the key's queries to finish. */
  readonly keyWaitMs: number;
  /** Exclusive mode: the share of the store's time queries may take while ingest is active (0 < share ≤ 1). */
  readonly queryShare: number;
  /** Longest a query's statement may run once it has its turn (it is not preempted, and holds the turn INSERTs need). */
  readonly maxRunMs: number;
  /** Threads a query's statement may use, or undefined for ClickHouse's default. */
  readonly queryThreads: number | undefined;
  /** Exclusive mode: ingest counts as active this long after an INSERT ended (a little over the writer's block interval). */
  readonly ingestActiveMs: number;
}

/** The gate of a process without limits or scheduling (tools, tests that build a context by hand). */
export const openGate: StoreGate = {
  insert: (work) => work(),
  query: async (_caller, timeoutMs, work) => ({ ok: true, value: await work({ ms: timeoutMs, threads: undefined }) }),
};

interface QueryWaiter {
  readonly start: () => void;
  readonly timer: { cancel(): void };
}

/** Embedded mode's single turn: INSERTs first, queries round-robin by key and paced while ingest is active. */
class ExclusiveTurn {
  readonly #clock: Clock;
  readonly #policy: GatePolicy;
  #busy = false;
  readonly #inserts: Array<() => void> = [];
  /** INSERTs running alongside the queries (not taking the turn). */
  #running = 0;
  /** Waiting queries by key, in round-robin order (a key served moves to the back). */
  readonly #queries = new Map<unknown, QueryWaiter[]>();
  #lastInsertEnd = Number.NEGATIVE_INFINITY;
  /** While ingest is active, no query starts before this time. */
  #queriesFrom = Number.NEGATIVE_INFINITY;
  #wake: { cancel(): void } | undefined;
  /** The key whose query ran last: it does not go first again while another key waits. */
  #lastKey: unknown;

  constructor(clock: Clock, policy: GatePolicy) {
    this.#clock = clock;
    this.#policy = policy;
  }

  async insert<T>(work: () => Promise<T>): Promise<T> {
    if (!this.#policy.insertsTakeTurn) return this.#alongside(work);
    await new Promise<void>((resolve) => {
      this.#inserts.push(resolve);
      this.#dispatch();
    });
    try {
      return await work();
    } finally {
      this.#lastInsertEnd = this.#clock.now();
      this.#busy = false;
      this.#dispatch();
    }
  }

  /** An INSERT on its own connection: it runs at once; queries are paced while it and its successors run. */
  async #alongside<T>(work: () => Promise<T>): Promise<T> {
    this.#running++;
    try {
      return await work();
    } finally {
      this.#running--;
      this.#lastInsertEnd = this.#clock.now();
      this.#dispatch();
    }
  }

  /** Resolves with a function that ends the turn, or undefined if `deadline` passed first. */
  queryTurn(key: unknown, deadline: number): Promise<(() => void) | undefined> {
    return new Promise((resolve) => {
      let queue = this.#queries.get(key);
      if (queue === undefined) {
        queue = [];
        this.#queries.set(key, queue);
      }
      const own = queue;
      const waiter: QueryWaiter = {
        start: () => {
          const started = this.#clock.now();
          resolve(() => { this.#queryEnded(started); });
        },
        timer: this.#clock.setTimeout(() => {
          const at = own.indexOf(waiter);
          if (at >= 0) own.splice(at, 1);
          if (own.length === 0 && this.#queries.get(key) === own) this.#queries.delete(key);
          resolve(undefined);
        }, Math.max(0, deadline - this.#clock.now())),
      };
      own.push(waiter);
      this.#dispatch();
    });
  }

  #ingestActive(now: number): boolean {
    return this.#inserts.length > 0 || this.#running > 0 || now - this.#lastInsertEnd <= this.#policy.ingestActiveMs;
  }

  #queryEnded(started: number): void {
    const now = this.#clock.now();
    if (this.#ingestActive(now)) {
      const share = this.#policy.queryShare;
      this.#queriesFrom = now + ((now - started) * (1 - share)) / share;
    }
    this.#busy = false;
    this.#dispatch();
  }

  #dispatch(): void {
    if (this.#busy) return;
    const insert = this.#inserts.shift();
    if (insert !== undefined) {
      this.#busy = true;
      insert();
      return;
    }
    if (this.#queries.size === 0) return;
    const now = this.#clock.now();
    if (this.#ingestActive(now) && now < this.#queriesFrom) {
      this.#wake?.cancel();
      this.#wake = this.#clock.setTimeout(() => { this.#wake = undefined; this.#dispatch(); }, this.#queriesFrom - now);
      return;
    }
    const key = this.#nextKey();
    const queue = this.#queries.get(key) ?? [];
    const waiter = queue.shift();
    // The key served goes to the back of the round.
    this.#queries.delete(key);
    if (queue.length > 0) this.#queries.set(key, queue);
    if (waiter === undefined) return;
    this.#lastKey = key;
    waiter.timer.cancel();
    this.#busy = true;
    waiter.start();
  }

  /** The first key in the round, unless it was served last and another key waits too. */
  #nextKey(): unknown {
    const keys = this.#queries.keys();
    const first: unknown = keys.next().value;
    if (first !== this.#lastKey) return first;
    const second = keys.next();
    return second.done === true ? first : second.value;
  }
}

/** The gate for a process: exclusive scheduling for embedded ClickHouse, per-key limits always. */
export function createStoreGate(policy: GatePolicy, clock: Clock = systemClock): StoreGate {
  const keys = new KeyConcurrency(clock);
  const tenants = new KeyConcurrency(clock);
  const turn = policy.exclusive ? new ExclusiveTurn(clock, policy) : undefined;
  return {
    insert: (work) => (turn === undefined ? work() : turn.insert(work)),
    async query(caller, timeoutMs, work) {
      const arrived = clock.now();
      const deadline = arrived + timeoutMs;
      const tenant = caller.tenant;
      // The tenant's place first: a query waiting for its tenant holds none of its key's places.
      if (tenant !== undefined && !(await tenants.acquire(tenant.id, tenant.maxConcurrentQueries, Math.min(policy.keyWaitMs, timeoutMs)))) {
        return { ok: false, refused: 'tenant_limit', limit: tenant.maxConcurrentQueries, retryAfterSeconds: 1 };
      }
      const limit = policy.maxConcurrentQueries(caller);
      if (!(await keys.acquire(caller.key, limit, Math.max(0, Math.min(policy.keyWaitMs, deadline - clock.now()))))) {
        if (tenant !== undefined) tenants.release(tenant.id);
        return { ok: false, refused: 'key_limit', limit, retryAfterSeconds: 1 };
      }
      try {
        const end = turn === undefined ? () => undefined : await turn.queryTurn(caller.key, deadline);
        if (end === undefined) return { ok: false, refused: 'deadline', waitedMs: Math.round(clock.now() - arrived) };
        try {
          const remainingMs = deadline - clock.now();
          if (remainingMs < 1) return { ok: false, refused: 'deadline', waitedMs: Math.round(clock.now() - arrived) };
          return { ok: true, value: await work({ ms: Math.min(remainingMs, policy.maxRunMs), threads: policy.queryThreads }) };
        } finally {
          end();
        }
      } finally {
        keys.release(caller.key);
        if (tenant !== undefined) tenants.release(tenant.id);
      }
    },
  };
}
