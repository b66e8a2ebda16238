// The per-process decode gate: every export request passes it before its
// body is read, inflated and converted, and leaves it once its rows exist.
// Those steps are the gateway's CPU (conversion runs on the event loop, so a
// 16 MB body holds it for ~0.4 s), and the token buckets alone do not share
// it: they charge bytes after the fact, so a tenant under its rate with
// large, compressible bodies could keep every core busy. The gate holds
// `concurrency` requests at once (about the core count); one flow (a tenant,
// or a key whose tenant is unknown before decoding) holds at most
// concurrency - 1 of them, so another tenant always finds a slot free or
// next. When requests wait, the next slot goes to the flow that has used
// the least (start-time fair queuing, Goyal et al.: each flow's tag is the
// decoded bytes it was served, the virtual time is the least start tag in
// service, and a flow that was idle starts at the virtual time, not at
// zero, so it cannot save up). A request that
// would wait longer than `maxWaitMs` is refused (overloaded, 429 / 503 with
// Retry-After), so a flood queues behind others up to a bound and no
// further. Costs are known only after decoding: a flow pays for a request
// when it leaves, and its next request is ordered by that.
import { systemClock } from '../../src/clock.ts';
import type { Clock } from '../../src/clock.ts';
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';

/** The gate's size and bound. */
export interface DecodeGateOptions {
  /** Requests being read, inflated or converted at once in this process (at least 1). */
  readonly concurrency: number;
  /** Longest a request waits for a slot before it is refused. */
  readonly maxWaitMs: number;
}

/** A held slot: release it with the decoded (or inflated) bytes the request cost. */
export interface DecodePass {
  release(costBytes: number): void;
}

/** Why a request got no slot: it would have waited past the bound. */
export interface DecodeRefusal {
  readonly message: string;
  readonly retryAfterSeconds: number;
}

interface Waiter {
  readonly flow: string;
  readonly grant: (pass: DecodePass) => void;
  readonly timer: { cancel(): void };
}

interface Flow {
  /** Virtual bytes served: the flow's finish tag. */
  tag: number;
  held: number;
  readonly waiting: Waiter[];
}

export class DecodeGate {
  readonly #concurrency: number;
  readonly #perFlow: number;
  readonly #maxWaitMs: number;
  readonly #clock: Clock;
  readonly #flows = new Map<string, Flow>();
  /** Start tags of the requests holding slots: the virtual time is the least of them. */
  readonly #starts = new Set<{ readonly tag: number }>();
  /** The virtual time while no request holds a slot: the start tag of the last one. */
  #lastStart = 0;
  #held = 0;

  constructor(options: DecodeGateOptions, clock: Clock = systemClock) {
    this.#concurrency = Math.max(1, Math.floor(options.concurrency));
    this.#perFlow = Math.max(1, this.#concurrency - 1);
    this.#maxWaitMs = options.maxWaitMs;
    this.#clock = clock;
  }

  /** The virtual time: the least start tag in service (SFQ's, with several servers), else the last one. */
  get #virtual(): number {
    let least = Number.POSITIVE_INFINITY;
    for (const s of this.#starts) least = Math.min(least, s.tag);
    return least === Number.POSITIVE_INFINITY ? this.#lastStart : least;
  }

  /** Slots held now (tests, metrics). */
  get held(): number {
    return this.#held;
  }

  /** Requests waiting now, all flows together. */
  get waiting(): number {
    let n = 0;
    for (const f of this.#flows.values()) n += f.waiting.length;
    return n;
  }

  /** A slot for a request of `flow`: at once when one is free to it, else in fair order, else refused after maxWaitMs. */
  enter(flow: string): Promise<Result<DecodePass, DecodeRefusal>> {
    const f = this.#flow(flow);
    if (f.waiting.length === 0 && this.#free(f) && !this.#othersFirst(f)) return Promise.resolve(ok(this.#admit(flow, f)));
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => {
        const at = f.waiting.indexOf(waiter);
        if (at < 0) return;
        f.waiting.splice(at, 1);
        this.#forget(flow, f);
        resolve(
          fail({
            message: `the gateway is decoding other requests: this one waited ${this.#maxWaitMs} ms for its turn (requests of busier tenants wait longer): retry later`,
            retryAfterSeconds: 1,
          }),
        );
      }, this.#maxWaitMs);
      const waiter: Waiter = {
        flow,
        grant: (pass) => {
          timer.cancel();
          resolve(ok(pass));
        },
        timer,
      };
      f.waiting.push(waiter);
    });
  }

  /** Whether `f` may hold one more slot now. */
  #free(f: Flow): boolean {
    return this.#held < this.#concurrency && f.held < this.#perFlow;
  }

  /** Whether a waiting flow with a lower tag that could take the slot is ahead of `f`. */
  #othersFirst(f: Flow): boolean {
    const virtual = this.#virtual;
    const tag = Math.max(f.tag, virtual);
    for (const other of this.#flows.values())
      if (other !== f && other.waiting.length > 0 && other.held < this.#perFlow && Math.max(other.tag, virtual) < tag) return true;
    return false;
  }

  #admit(name: string, f: Flow): DecodePass {
    f.tag = Math.max(f.tag, this.#virtual);
    const start = { tag: f.tag };
    this.#starts.add(start);
    this.#lastStart = f.tag;
    f.held++;
    this.#held++;
    let released = false;
    return {
      release: (costBytes) => {
        if (released) return;
        released = true;
        this.#starts.delete(start);
        f.held--;
        this.#held--;
        f.tag += Math.max(0, costBytes);
        this.#forget(name, f);
        this.#dispatch();
      },
    };
  }

  /** Gives free slots to waiting flows, lowest tag first. */
  #dispatch(): void {
    while (this.#held < this.#concurrency) {
      const virtual = this.#virtual;
      let best: [string, Flow] | undefined;
      for (const entry of this.#flows) {
        const [, f] = entry;
        if (f.waiting.length === 0 || f.held >= this.#perFlow) continue;
        if (best === undefined || Math.max(f.tag, virtual) < Math.max(best[1].tag, virtual)) best = entry;
      }
      if (best === undefined) return;
      const [name, f] = best;
      const waiter = f.waiting.shift();
      if (waiter === undefined) return;
      waiter.grant(this.#admit(name, f));
    }
  }

  #flow(name: string): Flow {
    let f = this.#flows.get(name);
    if (f === undefined) {
      f = { tag: this.#virtual, held: 0, waiting: [] };
      this.#flows.set(name, f);
    }
    return f;
  }

  /** Drops an idle flow: its tag is below the virtual time soon, and a new flow starts there anyway. */
  #forget(name: string, f: Flow): void {
    if (f.held === 0 && f.waiting.length === 0 && f.tag <= this.#virtual) this.#flows.delete(name);
  }
}
