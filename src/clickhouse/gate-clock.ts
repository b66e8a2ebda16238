// The time source of the store gate; tests inject a manual one.

export interface GateClock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  setTimeout(run: () => void, ms: number): { cancel(): void };
}

export const systemGateClock: GateClock = {
  now: () => performance.now(),
  setTimeout: (run, ms) => {
    const timer = setTimeout(run, ms);
    return { cancel: () => { clearTimeout(timer); } };
  },
};
