// A work queue keyed by object: each key is processed by at most one worker
// at a time (serial per key), a key added while it runs is run again after
// (level-triggered: the handler always reads the current state), failures are
// retried with per-key exponential backoff, and `after` schedules a resync.
import type { BackoffPolicy } from './backoff.ts';
import { backoffDelay } from './backoff.ts';

export type HandlerResult = { readonly ok: true; readonly resyncAfterMs?: number } | { readonly ok: false; readonly message: string };

export interface QueueEvents {
  onResult?(key: string, result: HandlerResult, durationMs: number): void;
}

export class KeyQueue {
  readonly #handler: (key: string) => Promise<HandlerResult>;
  readonly #policy: BackoffPolicy;
  readonly #concurrency: number;
  readonly #events: QueueEvents;
  readonly #ready: string[] = [];
  readonly #queued = new Set<string>();
  readonly #running = new Set<string>();
  readonly #dirty = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #idleWaiters: Array<() => void> = [];
  #stopped = false;

  constructor(handler: (key: string) => Promise<HandlerResult>, policy: BackoffPolicy, concurrency: number, events: QueueEvents = {}) {
    this.#handler = handler;
    this.#policy = policy;
    this.#concurrency = concurrency;
    this.#events = events;
  }

  /** Keys waiting or running, for the queue-depth metric. */
  get depth(): number {
    return this.#queued.size + this.#running.size;
  }

  /** Marks a key for processing now (a pending delayed retry is superseded). */
  add(key: string): void {
    if (this.#stopped) return;
    const timer = this.#timers.get(key);
    if (timer !== undefined) { clearTimeout(timer); this.#timers.delete(key); }
    if (this.#running.has(key)) { this.#dirty.add(key); return; }
    if (this.#queued.has(key)) return;
    this.#queued.add(key);
    this.#ready.push(key);
    this.#pump();
  }

  /** Processes a key now unless a retry or resync is already scheduled for it (keeps its backoff). */
  addUnlessScheduled(key: string): void {
    if (!this.#timers.has(key)) this.add(key);
  }

  /** Processes a key after a delay, unless something adds it sooner. */
  addAfter(key: string, delayMs: number): void {
    if (this.#stopped || this.#timers.has(key)) return;
    const timer = setTimeout(() => { this.#timers.delete(key); this.add(key); }, delayMs);
    timer.unref();
    this.#timers.set(key, timer);
  }

  #pump(): void {
    while (!this.#stopped && this.#running.size < this.#concurrency) {
      const index = this.#ready.findIndex((k) => !this.#running.has(k));
      if (index < 0) break;
      const [key] = this.#ready.splice(index, 1);
      if (key === undefined) break;
      this.#queued.delete(key);
      this.#running.add(key);
      void this.#run(key);
    }
  }

  async #run(key: string): Promise<void> {
    const started = performance.now();
    let result: HandlerResult;
    try {
      result = await this.#handler(key);
    } catch (error) {
      // A throw is a bug in a handler; keep the queue alive and retry with backoff.
      result = { ok: false, message: `unexpected: ${(error as Error).message}` };
    }
    this.#events.onResult?.(key, result, performance.now() - started);
    this.#running.delete(key);
    if (result.ok) {
      this.#failures.delete(key);
      if (this.#dirty.delete(key)) this.add(key);
      else if (result.resyncAfterMs !== undefined) this.addAfter(key, result.resyncAfterMs);
    } else {
      const failures = (this.#failures.get(key) ?? 0) + 1;
      this.#failures.set(key, failures);
      if (this.#dirty.delete(key)) this.add(key);
      else this.addAfter(key, backoffDelay(this.#policy, failures));
    }
    this.#pump();
    if (this.#running.size === 0) for (const w of this.#idleWaiters.splice(0)) w();
  }

  /** Stops taking work and waits for running handlers to finish. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
    this.#ready.length = 0;
    this.#queued.clear();
    if (this.#running.size > 0) await new Promise<void>((resolve) => { this.#idleWaiters.push(resolve); });
  }
}
