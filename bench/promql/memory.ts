// Peak resident memory of a process over a phase of the bench: its
// high-water mark (VmHWM in /proc/<pid>/status) reset at the start of the
// phase by writing 5 to /proc/<pid>/clear_refs (Linux 4.0+, the process's
// owner or root). Where the reset is refused, VmRSS is sampled every 10 ms
// instead, which can miss a peak shorter than that.
import { readFileSync, writeFileSync } from 'node:fs';

function statusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] === undefined ? NaN : Number(m[1]);
  } catch {
    return NaN;
  }
}

/** A phase being watched; `end()` stops it and returns the peak RSS in MiB (NaN when the process is gone). */
export interface PeakWatch {
  end(): number;
}

/** Starts watching the peak RSS of `pid`. */
export function watchPeak(pid: number): PeakWatch {
  let reset = true;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    reset = false;
  }
  if (reset) return { end: () => statusKb(pid, 'VmHWM') / 1024 };
  let peak = statusKb(pid, 'VmRSS');
  const timer = setInterval(() => {
    peak = Math.max(peak, statusKb(pid, 'VmRSS'));
  }, 10);
  return {
    end: () => {
      clearInterval(timer);
      return Math.max(peak, statusKb(pid, 'VmRSS')) / 1024;
    },
  };
}
