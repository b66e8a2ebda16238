// A pacer clock that moves only when a test tells it to.
import type { PacerClock } from '../../../../gateway/writer/admission-pacer.ts';

/** Lets pending promise callbacks and I/O callbacks run. */
export const settle = (): Promise<void> => new Promise((resolve) => { setImmediate(resolve); });

/** Time moves only on advance(), which fires the timers that come due, in order. */
export class ManualClock implements PacerClock {
  #now = 0;
  readonly #timers: { at: number; run: () => void; cancelled: boolean }[] = [];

  now(): number {
    return this.#now;
  }

  setTimeout(run: () => void, ms: number): { cancel(): void } {
    const timer = { at: this.#now + ms, run, cancelled: false };
    this.#timers.push(timer);
    return { cancel: () => { timer.cancelled = true; } };
  }

  /** Moves time forward, firing every timer that comes due; lets promise callbacks run after each. */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => !t.cancelled && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.#now = due.at;
      due.cancelled = true;
      due.run();
      await settle();
    }
    this.#now = end;
    await settle();
  }
}
