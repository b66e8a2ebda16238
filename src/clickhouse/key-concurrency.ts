// Per-key concurrency of queries: a key may have `limit` queries in flight
// (waiting for the store or running); one more waits, first come first
// served, for a key's query to finish, and is refused after a short wait.
// Keys are API keys today; a tenant's limit (DESIGN §8, maxConcurrentQueries)
// is the same count under another identity.
import type { Clock } from '../clock.ts';

interface Waiter {
  readonly admit: (admitted: boolean) => void;
  readonly timer: { cancel(): void };
}

interface KeyState {
  inFlight: number;
  readonly waiters: Waiter[];
}

export class KeyConcurrency {
  readonly #clock: Clock;
  readonly #keys = new Map<unknown, KeyState>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Queries of `key` in flight (admitted, not yet released). */
  inFlight(key: unknown): number {
    return this.#keys.get(key)?.inFlight ?? 0;
  }

  /**
   * Resolves true once the key has a free place (then the caller must
   * release() it), or false after `waitMs` without one.
   */
  acquire(key: unknown, limit: number, waitMs: number): Promise<boolean> {
    let state = this.#keys.get(key);
    if (state === undefined) {
      state = { inFlight: 0, waiters: [] };
      this.#keys.set(key, state);
    }
    if (state.inFlight < limit && state.waiters.length === 0) {
      state.inFlight++;
      return Promise.resolve(true);
    }
    if (waitMs <= 0) {
      this.#forgetIfIdle(key, state);
      return Promise.resolve(false);
    }
    const keyState = state;
    return new Promise((resolve) => {
      const waiter: Waiter = {
        admit: resolve,
        timer: this.#clock.setTimeout(() => {
          keyState.waiters.splice(keyState.waiters.indexOf(waiter), 1);
          this.#forgetIfIdle(key, keyState);
          resolve(false);
        }, waitMs),
      };
      keyState.waiters.push(waiter);
    });
  }

  /** Gives a place back; the key's oldest waiter takes it. */
  release(key: unknown): void {
    const state = this.#keys.get(key);
    if (state === undefined) throw new Error('bug: release without acquire');
    const next = state.waiters.shift();
    if (next !== undefined) {
      next.timer.cancel();
      next.admit(true);
      return;
    }
    state.inFlight--;
    this.#forgetIfIdle(key, state);
  }

  #forgetIfIdle(key: unknown, state: KeyState): void {
    if (state.inFlight === 0 && state.waiters.length === 0) this.#keys.delete(key);
  }
}
