// A work queue of typed keys (one queue per reconciler): each key is processed
// by at most one worker at a time (serial per key), a key added while it runs
// is run again after (level-triggered: the handler always reads the current
// state), failures are retried with per-key exponential backoff, and
// `resyncAfterMs` schedules a resync. Timers come from an injected clock and
// `whenIdle()` resolves when nothing is waiting or running, so tests await
// events instead of sleeping. It is not a fair scheduler like the gateway's
// FairQueue or the store gate: keys are few, each reconcile is cheap and
// idempotent, so FIFO order with per-key serialising and coalescing is all
// the operator needs.
import type { BackoffPolicy } from '../../src/backoff.ts';
import { backoffDelay } from '../../src/backoff.ts';
import type { Clock } from '../../src/clock.ts';
import { backgroundClock } from '../../src/clock.ts';
import { fail } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';

/** What a successful handler asks of the queue: a resync after so many ms, or nothing. */
export interface Handled {
  readonly resyncAfterMs?: number;
}

/** The key of a namespaced object, such as a stack. */
export interface ObjectKey {
  readonly namespace: string;
  readonly name: string;
}

/** The string identity of an object key (the queue's map key). */
export const objectKeyId = (k: ObjectKey): string => `${k.namespace}/${k.name}`;

export interface KeyQueueOptions<K> {
  readonly handler: (key: K) => Promise<Result<Handled, string>>;
  /** A string identity of a key (keys equal by it are the same key). */
  readonly idOf: (key: K) => string;
  readonly backoff: BackoffPolicy;
  readonly concurrency: number;
  /** Timers for retries and resyncs; unref'd by default so a pending resync never keeps the process alive. */
  readonly clock?: Clock;
  readonly onResult?: (key: K, result: Result<Handled, string>, durationMs: number) => void;
}

export class KeyQueue<K> {
  readonly #o: KeyQueueOptions<K>;
  readonly #clock: Clock;
  readonly #keys = new Map<string, K>();
  readonly #ready: string[] = [];
  readonly #queued = new Set<string>();
  readonly #running = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #timers = new Map<string, { cancel(): void }>();
  readonly #idleWaiters: Array<() => void> = [];
  #stopped = false;

  constructor(options: KeyQueueOptions<K>) {
    this.#o = options;
    this.#clock = options.clock ?? backgroundClock;
  }

  /** Keys waiting or running, for the queue-depth metric. */
  get depth(): number {
    return this.#queued.size + this.#running.size;
  }

  /** Marks a key for processing now (a pending delayed retry is superseded). */
  add(key: K): void {
    if (this.#stopped) return;
    const id = this.#o.idOf(key);
    this.#keys.set(id, key);
    const timer = this.#timers.get(id);
    if (timer !== undefined) {
      timer.cancel();
      this.#timers.delete(id);
    }
    if (this.#running.has(id)) {
      this.#dirty.add(id);
      return;
    }
    if (this.#queued.has(id)) return;
    this.#queued.add(id);
    this.#ready.push(id);
    this.#pump();
  }

  /** Processes a key now unless it is waiting, running, or has a retry or resync scheduled (keeps its backoff). */
  addUnlessScheduled(key: K): void {
    const id = this.#o.idOf(key);
    if (!this.#timers.has(id) && !this.#queued.has(id) && !this.#running.has(id)) this.add(key);
  }

  /** Processes a key after a delay, unless something adds it sooner. */
  addAfter(key: K, delayMs: number): void {
    const id = this.#o.idOf(key);
    if (this.#stopped || this.#timers.has(id)) return;
    this.#keys.set(id, key);
    this.#timers.set(
      id,
      this.#clock.setTimeout(() => {
        this.#timers.delete(id);
        this.add(key);
      }, delayMs),
    );
  }

  /** Resolves once no key is waiting or running (scheduled retries and resyncs do not count). */
  whenIdle(): Promise<void> {
    if (this.depth === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#idleWaiters.push(resolve);
    });
  }

  #pump(): void {
    while (!this.#stopped && this.#running.size < this.#o.concurrency) {
      const index = this.#ready.findIndex((k) => !this.#running.has(k));
      if (index < 0) break;
      const [id] = this.#ready.splice(index, 1);
      const key = id === undefined ? undefined : this.#keys.get(id);
      if (id === undefined || key === undefined) break;
      this.#queued.delete(id);
      this.#running.add(id);
      void this.#run(id, key);
    }
  }

  async #run(id: string, key: K): Promise<void> {
    const started = performance.now();
    let result: Result<Handled, string>;
    try {
      result = await this.#o.handler(key);
    } catch (error) {
      // A throw is a bug in a handler; keep the queue alive and retry with backoff.
      result = fail(`unexpected: ${(error as Error).message}`);
    }
    this.#running.delete(id);
    const dirty = this.#dirty.delete(id);
    if (result.ok) {
      this.#failures.delete(id);
      if (dirty) this.add(key);
      else if (result.value.resyncAfterMs !== undefined) this.addAfter(key, result.value.resyncAfterMs);
    } else {
      const failures = (this.#failures.get(id) ?? 0) + 1;
      this.#failures.set(id, failures);
      if (dirty) this.add(key);
      else this.addAfter(key, backoffDelay(this.#o.backoff, failures));
    }
    if (!this.#timers.has(id) && !this.#queued.has(id) && !this.#running.has(id)) this.#keys.delete(id);
    // After the bookkeeping, so `depth` seen from the callback no longer counts this run.
    this.#o.onResult?.(key, result, performance.now() - started);
    this.#pump();
    if (this.depth === 0 || (this.#stopped && this.#running.size === 0)) for (const w of this.#idleWaiters.splice(0)) w();
  }

  /** Stops taking work and waits for running handlers to finish. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers.values()) t.cancel();
    this.#timers.clear();
    this.#ready.length = 0;
    this.#queued.clear();
    if (this.#running.size > 0)
      await new Promise<void>((resolve) => {
        this.#idleWaiters.push(resolve);
      });
  }
}
