// Readiness of a process: ready once every named condition is met and until
// shutdown begins. Liveness (/healthz) is simply "the event loop answers".

export class Readiness {
  readonly #pending: Set<string>;
  #shuttingDown = false;
  readonly #waiters: (() => void)[] = [];
  readonly #watchers = new Set<() => void>();

  /** `conditions` must all be marked done before the process reports ready. */
  constructor(conditions: readonly string[]) {
    this.#pending = new Set(conditions);
  }

  done(condition: string): void {
    this.#pending.delete(condition);
    if (this.isReady()) for (const resolve of this.#waiters.splice(0)) resolve();
    this.#changed();
  }

  /** Calls `watcher` after every change that may flip readiness (gRPC health Watch); returns the unsubscribe. */
  onChange(watcher: () => void): () => void {
    this.#watchers.add(watcher);
    return () => {
      this.#watchers.delete(watcher);
    };
  }

  #changed(): void {
    for (const watcher of [...this.#watchers]) watcher();
  }

  /** Resolves once the process is ready (at once when it is). */
  whenReady(): Promise<void> {
    if (this.isReady()) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
    });
  }

  /** Makes the process unready until `condition` is done again (e.g. storage refusing writes). */
  unready(condition: string): void {
    this.#pending.add(condition);
    this.#changed();
  }

  beginShutdown(): void {
    this.#shuttingDown = true;
    this.#changed();
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  isReady(): boolean {
    return !this.#shuttingDown && this.#pending.size === 0;
  }

  /** Why the process is not ready, for the /readyz body. */
  reasons(): string[] {
    return this.#shuttingDown ? ['shutting down'] : [...this.#pending].map((c) => `waiting for ${c}`);
  }
}
