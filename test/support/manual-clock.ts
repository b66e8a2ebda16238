// A clock (src/clock.ts) that moves only when a test tells it to.
import type { Clock } from '../../src/clock.ts';

/** Lets every promise reaction that is ready run. */
export const settle = (): Promise<void> =>
  new Promise((resolve) => {
    setImmediate(resolve);
  });

/** Time moves only on advance(), which runs the timers that come due, in order. */
export class ManualClock implements Clock {
  #now = 0;
  readonly #timers: { at: number; run: () => void; cancelled: boolean }[] = [];

  now(): number {
    return this.#now;
  }

  setTimeout(run: () => void, ms: number): { cancel(): void } {
    const timer = { at: this.#now + ms, run, cancelled: false };
    this.#timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Moves time forward, running each timer that falls due (and what it sets off) in order. */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    for (;;) {
      await settle();
      const due = this.#timers.filter((t) => !t.cancelled && t.at <= until).sort((a, b) => a.at - b.at)[0];
      if (due === undefined) break;
      this.#timers.splice(this.#timers.indexOf(due), 1);
      this.#now = due.at;
      due.run();
    }
    this.#now = until;
    await settle();
  }
}
