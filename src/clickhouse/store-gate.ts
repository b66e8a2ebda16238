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
// - Embedded ClickHouse (chDB) runs one statement at a time per connection:
//   a statement waits, unseen, behind every one before it on its
//   connection, so eight loops of wide queries left an INSERT behind eight
//   queries. The gate therefore schedules the queries' statements itself:
//   `querySlots` at once (the store's query connections, two), at most one
//   per party, so a tenant alone keeps to one thread and another tenant's
//   query runs beside it at once (the store inlines parameters so that
//   statements on two connections really run at once, ADR 8). INSERTs have
//   connections of their own (Store.insertClients) and run beside the
//   queries, never waiting for a slot.
// - The slots are fair across tenants (a query's party is its tenant, or its
//   key when it reads no one tenant): a free slot goes to the waiting party
//   that has used the least store time (ties: the one served longest ago;
//   first come first served within a party). A party back from idle starts
//   level with the statement last started, so it saves up no credit. One
//   tenant's long statements thus never put another tenant's short ones
//   behind a queue of them (issue 33, bench:isolation's heavy neighbour).
// - A running query keeps its slot until it ends, its time runs out or its
//   client goes away (then it is killed, api/query/running-statements.ts,
//   and holds the slot until chDB has really ended it), with one exception:
//   when every slot is held and another party's query waits (and may start:
//   its own pause is over), the statement that started first gets its turn
//   signal once it has run `turnMs`. The runner then kills it and answers
//   503 naming the turn limit; its tenant may retry. A tenant alone thus
//   gets its whole time limit (`maxRunMs`), another tenant's query starts at
//   once while a slot is free, and one arriving when both are held by long
//   statements waits at most about `turnMs` plus the time chDB takes to end
//   one (on the shared machine: a few ms to 0.65 s for count() states, up to
//   1.9 s for a statement freeing many quantile states; docs/benchmarks.md).
//   The time waiting for a slot counts toward the query's own limit.
// - While ingest is active each party also yields, once its burst is spent:
//   it has a credit of store time that refills at `queryShare` of the
//   wall-clock time up to `queryBurstMs`; a statement that ran d ms takes
//   d × (1 − share) from it (it earned d × share while it ran), and while the
//   credit is below zero the party's next query waits until it has refilled
//   to zero. With no burst that is a pause of d × (1 − share) / share after
//   every statement. This keeps each tenant's queries to `queryShare` of the
//   time over any stretch longer than its burst and leaves the rest (and the
//   CPU) to INSERTs, the gateway and other tenants, while a dashboard's few
//   short statements (a PromQL query is two or three of 3-10 ms) run back to
//   back: without a burst each of them paused three times its own length
//   under ingest, 27-46 ms a query in bench:promql's live run.
//   The pause is the party's own: another tenant's query is not held by it.
//   With no ingest, queries run back to back.
// - A query's statement runs, if the policy says so, on fewer threads,
//   leaving a core to the gateway.
// - Why this turn is not the writer's FairQueue (deficit round robin): a
//   query's cost, its store time, is known only once it has run, so parties
//   are ordered by the time they used, as the decode gate orders flows by the
//   bytes they were served; and only this gate pauses a party while ingest
//   is active and preempts a long statement with the turn signal.
import { fail, ok } from '../result.ts';
import type { Result } from '../result.ts';
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

/** Why a query did not get its turn. */
export type TurnRefusal =
  /** The key already has `limit` queries in flight and none finished within the wait. */
  | { readonly refused: 'key_limit'; readonly limit: number; readonly retryAfterSeconds: number }
  /** The tenant already has `limit` queries in flight and none finished within the wait. */
  | { readonly refused: 'tenant_limit'; readonly limit: number; readonly retryAfterSeconds: number }
  /** The query's time ran out while it waited for its turn. */
  | { readonly refused: 'deadline'; readonly waitedMs: number };

/** A query's answer once it had its turn, or why it had none. */
export type QueryTurn<T> = Result<T, TurnRefusal>;

/** What a query's statement may use once it has its turn. */
export interface StatementBudget {
  /** Milliseconds it may run: what is left of the query's time limit, at most the gate's limit per statement. */
  readonly ms: number;
  /** Threads it may use (max_threads), or undefined for ClickHouse's default. */
  readonly threads: number | undefined;
  /** Embedded mode: aborts once the statement has run `turnMs` while another tenant's query waits for the store; the statement should stop. */
  readonly turn?: { readonly signal: AbortSignal; readonly turnMs: number };
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
  /** True for embedded ClickHouse: the queries' statements are scheduled here, `querySlots` at a time. */
  readonly exclusive: boolean;
  /** Exclusive mode: query statements at once (the store's query connections), at most one per party. */
  readonly querySlots: number;
  /** Queries in flight per key; a tenant's own limit plugs in here. */
  readonly maxConcurrentQueries: (caller: QueryCaller) => number;
  /** How long a query over its key's limit waits for one of the key's queries to finish. */
  readonly keyWaitMs: number;
  /** Exclusive mode: the share of the store's time each tenant's queries may take while ingest is active (0 < share ≤ 1). */
  readonly queryShare: number;
  /** Exclusive mode: store time (ms) a tenant's queries may use at once while ingest is active before they are held to their share. */
  readonly queryBurstMs: number;
  /** Longest a query's statement may run once it has its turn. */
  readonly maxRunMs: number;
  /** Exclusive mode: how long a statement runs before its turn signal fires, if another tenant's query waits by then (or once one does). */
  readonly turnMs: number;
  /** Threads a query's statement may use, or undefined for ClickHouse's default. */
  readonly queryThreads: number | undefined;
  /** Exclusive mode: ingest counts as active this long after an INSERT ended (a little over the writer's block interval). */
  readonly ingestActiveMs: number;
}

/** The gate of a process without limits or scheduling (tools, tests that build a context by hand). */
export const openGate: StoreGate = {
  insert: (work) => work(),
  query: async (_caller, timeoutMs, work) => ok(await work({ ms: timeoutMs, threads: undefined })),
};

interface QueryWaiter {
  readonly start: (statement: RunningStatement) => void;
  readonly timer: { cancel(): void };
}

/** Whose store time a query spends: its tenant's, or its key's when it reads no one tenant. */
function partyOf(caller: QueryCaller): unknown {
  return caller.tenant === undefined ? caller.key : `tenant:${caller.tenant.id}`;
}

/** One tenant (or tenantless key) in embedded mode's round. */
interface Party {
  readonly waiters: QueryWaiter[];
  /** Store time (ms) its statements have used, raised to the round's virtual time when it comes back from idle. */
  used: number;
  /** Its store-time credit (ms) at `creditAt`: refills at the query share up to the burst, spent while ingest is active. */
  credit: number;
  creditAt: number;
  /** When it was last served (a counter): of two parties with the same use, the one served longer ago goes first. */
  served: number;
  /** Whether one of its statements holds a slot (a party runs one at a time). */
  running: boolean;
}

/** A query statement holding a slot: its party, start, turn signal and the timer that fires it. */
interface RunningStatement {
  readonly party: Party;
  readonly started: number;
  readonly turn: AbortController;
  timer?: { cancel(): void; at: number };
}

/**
 * Embedded mode's query slots (`querySlots` statements at once, one per
 * party), fair over tenants, each tenant paced by its own use while ingest
 * (INSERTs beside the queries) is active.
 */
class QuerySlots {
  readonly #clock: Clock;
  readonly #policy: GatePolicy;
  /** INSERTs running beside the queries. */
  #inserts = 0;
  readonly #running = new Set<RunningStatement>();
  readonly #parties = new Map<unknown, Party>();
  /** The `used` of the statement last started: a party coming back from idle starts here (it saves up no credit while away). */
  #virtual = 0;
  #servedCount = 0;
  #lastInsertEnd = Number.NEGATIVE_INFINITY;
  #wake: { cancel(): void; at: number } | undefined;

  constructor(clock: Clock, policy: GatePolicy) {
    this.#clock = clock;
    this.#policy = policy;
  }

  /** An INSERT on its own connection: it runs at once; queries are paced while it and its successors run. */
  async insert<T>(work: () => Promise<T>): Promise<T> {
    this.#inserts++;
    try {
      return await work();
    } finally {
      this.#inserts--;
      this.#lastInsertEnd = this.#clock.now();
      this.#dispatch();
    }
  }

  /**
   * Resolves with the turn signal of its statement (see turnMs) and a
   * function that frees its slot, or undefined if `deadline` passed first.
   */
  queryTurn(caller: QueryCaller, deadline: number): Promise<{ readonly turn: AbortSignal; readonly end: () => void } | undefined> {
    return new Promise((resolve) => {
      const party = this.#join(partyOf(caller));
      const waiter: QueryWaiter = {
        start: (statement) => {
          resolve({
            turn: statement.turn.signal,
            end: () => {
              this.#queryEnded(statement);
            },
          });
        },
        timer: this.#clock.setTimeout(
          () => {
            const at = party.waiters.indexOf(waiter);
            if (at >= 0) party.waiters.splice(at, 1);
            resolve(undefined);
            this.#dispatch();
          },
          Math.max(0, deadline - this.#clock.now()),
        ),
      };
      party.waiters.push(waiter);
      this.#dispatch();
    });
  }

  /** The caller's party, brought up to the round's virtual time if it was idle. */
  #join(id: unknown): Party {
    let party = this.#parties.get(id);
    if (party === undefined) {
      party = {
        waiters: [],
        used: this.#virtual,
        credit: this.#policy.queryBurstMs,
        creditAt: this.#clock.now(),
        served: -1,
        running: false,
      };
      this.#parties.set(id, party);
    } else if (party.waiters.length === 0 && !party.running) {
      party.used = Math.max(party.used, this.#virtual);
    }
    return party;
  }

  /** While ingest is active, none of the party's queries starts before this time: when its credit is back to zero. */
  #readyAt(party: Party): number {
    return party.credit >= 0 ? Number.NEGATIVE_INFINITY : party.creditAt - party.credit / this.#policy.queryShare;
  }

  /** A party's credit refilled from its last statement to `at` (not capped). */
  #creditAt(party: Party, at: number): number {
    return party.credit + Math.max(0, at - party.creditAt) * this.#policy.queryShare;
  }

  #ingestActive(now: number): boolean {
    return this.#inserts > 0 || now - this.#lastInsertEnd <= this.#policy.ingestActiveMs;
  }

  #queryEnded(statement: RunningStatement): void {
    if (!this.#running.delete(statement)) return;
    const now = this.#clock.now();
    statement.timer?.cancel();
    const { party, started } = statement;
    const ran = now - started;
    party.used += ran;
    party.running = false;
    if (this.#ingestActive(now)) {
      const share = this.#policy.queryShare;
      // Refilled up to the burst by the statement's start; then it used d and earned d × share while it ran.
      const credit = Math.min(this.#policy.queryBurstMs, this.#creditAt(party, started)) - ran * (1 - share);
      party.credit = credit;
      party.creditAt = now;
    }
    this.#dispatch();
  }

  /** The waiting party whose query starts next (least store time used, then served longest ago), and the soonest end of a pause. */
  #next(now: number): { next: Party | undefined; soonest: number } {
    const ingest = this.#ingestActive(now);
    let next: Party | undefined;
    let soonest = Number.POSITIVE_INFINITY;
    for (const [id, party] of this.#parties) {
      if (party.waiters.length === 0) {
        // An idle party with no debt and its credit refilled is forgotten: joining again starts it at the virtual time and a full burst.
        if (!party.running && party.used <= this.#virtual && this.#creditAt(party, now) >= this.#policy.queryBurstMs) {
          this.#parties.delete(id);
        }
        continue;
      }
      if (party.running) continue;
      const from = this.#readyAt(party);
      if (ingest && now < from) {
        soonest = Math.min(soonest, from);
        continue;
      }
      if (next === undefined || party.used < next.used || (party.used === next.used && party.served < next.served)) next = party;
    }
    return { next, soonest };
  }

  #dispatch(): void {
    const now = this.#clock.now();
    let soonest = Number.POSITIVE_INFINITY;
    while (this.#running.size < this.#policy.querySlots) {
      const pick = this.#next(now);
      soonest = pick.soonest;
      const next = pick.next;
      if (next === undefined) break;
      const waiter = next.waiters.shift();
      if (waiter === undefined) break;
      waiter.timer.cancel();
      this.#virtual = Math.max(this.#virtual, next.used);
      next.served = this.#servedCount++;
      next.running = true;
      const statement: RunningStatement = { party: next, started: now, turn: new AbortController() };
      this.#running.add(statement);
      waiter.start(statement);
    }
    if (this.#running.size < this.#policy.querySlots && soonest !== Number.POSITIVE_INFINITY) this.#wakeAt(soonest, now);
    this.#armTurn(now);
  }

  /**
   * Sets (or moves, or drops) the turn timer: when every slot is taken and
   * another party's query waits (and may start: its own pause is over), the
   * statement that started first is signalled `turnMs` after its start, or
   * as soon as that party's query may start if that is later; never while no
   * other party waits, and not while a signalled statement is still ending
   * (its slot is about to free).
   */
  #armTurn(now: number): void {
    let victim: RunningStatement | undefined;
    let ending = false;
    for (const r of this.#running) {
      if (r.turn.signal.aborted) ending = true;
      else if (victim === undefined || r.started < victim.started) victim = r;
    }
    for (const r of this.#running) if (r !== victim || ending) this.#disarm(r);
    if (victim === undefined || ending) return;
    const ingest = this.#ingestActive(now);
    let ready = Number.POSITIVE_INFINITY;
    if (this.#running.size >= this.#policy.querySlots) {
      for (const party of this.#parties.values()) {
        if (party.running || party.waiters.length === 0) continue;
        ready = Math.min(ready, ingest ? Math.max(now, this.#readyAt(party)) : now);
      }
    }
    const at = Math.max(victim.started + this.#policy.turnMs, ready);
    if (victim.timer?.at === at) return;
    this.#disarm(victim);
    if (at === Number.POSITIVE_INFINITY) return;
    if (at <= now) {
      victim.turn.abort();
      return;
    }
    const statement = victim;
    const timer = this.#clock.setTimeout(() => {
      if (statement.timer === undefined || !this.#running.has(statement)) return;
      statement.timer = undefined;
      // Checked again: the waiting party may have left (its time ran out) or paused since.
      this.#armTurn(this.#clock.now());
    }, at - now);
    statement.timer = {
      cancel: () => {
        timer.cancel();
      },
      at,
    };
  }

  #disarm(statement: RunningStatement | undefined): void {
    statement?.timer?.cancel();
    if (statement !== undefined) statement.timer = undefined;
  }

  /** Dispatches again at `at` (the soonest end of a party's pause), unless a wake-up is already due by then. */
  #wakeAt(at: number, now: number): void {
    if (this.#wake !== undefined && this.#wake.at <= at) return;
    this.#wake?.cancel();
    const timer = this.#clock.setTimeout(() => {
      this.#wake = undefined;
      this.#dispatch();
    }, at - now);
    this.#wake = {
      cancel: () => {
        timer.cancel();
      },
      at,
    };
  }
}

/** The gate for a process: exclusive scheduling for embedded ClickHouse, per-key limits always. */
export function createStoreGate(policy: GatePolicy, clock: Clock = systemClock): StoreGate {
  const keys = new KeyConcurrency(clock);
  const tenants = new KeyConcurrency(clock);
  const turn = policy.exclusive ? new QuerySlots(clock, policy) : undefined;
  return {
    insert: (work) => (turn === undefined ? work() : turn.insert(work)),
    async query(caller, timeoutMs, work) {
      const arrived = clock.now();
      const deadline = arrived + timeoutMs;
      const tenant = caller.tenant;
      // The tenant's place first: a query waiting for its tenant holds none of its key's places.
      if (tenant !== undefined && !(await tenants.acquire(tenant.id, tenant.maxConcurrentQueries, Math.min(policy.keyWaitMs, timeoutMs)))) {
        return fail({ refused: 'tenant_limit', limit: tenant.maxConcurrentQueries, retryAfterSeconds: 1 });
      }
      const limit = policy.maxConcurrentQueries(caller);
      if (!(await keys.acquire(caller.key, limit, Math.max(0, Math.min(policy.keyWaitMs, deadline - clock.now()))))) {
        if (tenant !== undefined) tenants.release(tenant.id);
        return fail({ refused: 'key_limit', limit, retryAfterSeconds: 1 });
      }
      try {
        const held = turn === undefined ? { turn: undefined, end: () => undefined } : await turn.queryTurn(caller, deadline);
        if (held === undefined) return fail({ refused: 'deadline', waitedMs: Math.round(clock.now() - arrived) });
        try {
          const remainingMs = deadline - clock.now();
          if (remainingMs < 1) return fail({ refused: 'deadline', waitedMs: Math.round(clock.now() - arrived) });
          const budget: StatementBudget = { ms: Math.min(remainingMs, policy.maxRunMs), threads: policy.queryThreads };
          return ok(await work(held.turn === undefined ? budget : { ...budget, turn: { signal: held.turn, turnMs: policy.turnMs } }));
        } finally {
          held.end();
        }
      } finally {
        keys.release(caller.key);
        if (tenant !== undefined) tenants.release(tenant.id);
      }
    },
  };
}
