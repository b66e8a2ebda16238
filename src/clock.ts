// The time source of the parts that schedule work (the store gate, the
// write-ahead log's admission pacing); tests inject a manual one.

export interface Clock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  setTimeout(run: () => void, ms: number): { cancel(): void };
}

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (run, ms) => {
    const timer = setTimeout(run, ms);
    return { cancel: () => { clearTimeout(timer); } };
  },
};
