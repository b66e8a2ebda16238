// The one time source of the parts that schedule work (the store gate, the
// write-ahead log's admission pacing, the operator's work queue); tests
// inject a manual one.

export interface Clock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  setTimeout(run: () => void, ms: number): { cancel(): void };
}

/** Node's monotonic clock and timers. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (run, ms) => {
    const timer = setTimeout(run, ms);
    return {
      cancel: () => {
        clearTimeout(timer);
      },
    };
  },
};

/** Node's clock with unref'd timers: for background schedules (retries, resyncs) that must never keep the process alive. */
export const backgroundClock: Clock = {
  now: () => performance.now(),
  setTimeout: (run, ms) => {
    const timer = setTimeout(run, ms).unref();
    return {
      cancel: () => {
        clearTimeout(timer);
      },
    };
  },
};
