// CPU time of the servers bench:peers compares, read from /proc/<pid>/stat:
// each server is its own process (Tenantry `all` runs ClickHouse in-process),
// so a process's utime+stime is that system's whole cost, wherever its
// threads run. Also: waiting until every server is idle again, so deferred
// work (merges, chunk and block flushes) is counted and does not leak into
// the next phase.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

const clockTicks = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Fields of /proc/<pid>/stat after the command name: [0] state, [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function children(pid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    const child = Number(name);
    if (Number.isInteger(child) && statFields(child)?.[1] === String(pid)) found.push(child);
  }
  return found;
}

/** CPU seconds (user + system) of the process, its reaped children and its live descendants; 0 once it has exited. */
export function cpuSeconds(pid: number, withDescendants = true): number {
  const f = statFields(pid);
  if (f === undefined) return 0;
  const own = [11, 12, 13, 14].reduce((sum, i) => sum + Number(f[i] ?? 0), 0) / clockTicks;
  return own + (withDescendants ? children(pid).reduce((sum, c) => sum + cpuSeconds(c), 0) : 0);
}

/** CPU seconds of the machine (all processes, all cores), from /proc/stat, for the load note. */
export function machineCpuSeconds(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  const total = v.reduce((a, b) => a + b, 0);
  const idle = (v[3] ?? 0) + (v[4] ?? 0);
  return { busy: (total - idle) / clockTicks, total: total / clockTicks };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface IdleOptions {
  /** A process is idle when it uses at most this many cores over a one-second window. */
  readonly threshold: number;
  /** Consecutive idle seconds required. */
  readonly quietSeconds: number;
  /** Give up after this long (ms) and say so. */
  readonly maxMs: number;
}

export const defaultIdle: IdleOptions = { threshold: 0.03, quietSeconds: 2, maxMs: 120_000 };

/**
 * Waits until every process has used at most `threshold` cores for `quietSeconds`
 * one-second windows in a row, at most `maxMs`. Returns how long it waited and whether
 * it settled.
 */
export async function waitIdle(pids: readonly number[], options: IdleOptions = defaultIdle): Promise<{ waitedMs: number; settled: boolean; busiest: number }> {
  const started = Date.now();
  let last = pids.map((p) => cpuSeconds(p));
  let quiet = 0;
  let busiest = 0;
  while (Date.now() - started < options.maxMs) {
    const t = performance.now();
    await sleep(1000);
    const seconds = (performance.now() - t) / 1000;
    const now = pids.map((p) => cpuSeconds(p));
    busiest = Math.max(...now.map((c, i) => (c - (last[i] ?? 0)) / seconds));
    last = now;
    quiet = busiest <= options.threshold ? quiet + 1 : 0;
    if (quiet >= options.quietSeconds) return { waitedMs: Date.now() - started, settled: true, busiest };
  }
  return { waitedMs: Date.now() - started, settled: false, busiest };
}

/** waitIdle over `pids` that says, through `say`, when the processes did not settle (the caller goes on: a bench times anyway). */
export async function settleOrSay(
  pids: readonly number[],
  why: string,
  say: (line: string) => void,
  maxMs = defaultIdle.maxMs,
): Promise<{ waitedMs: number; settled: boolean }> {
  const result = await waitIdle(pids, { ...defaultIdle, maxMs });
  if (!result.settled) say(`not idle after ${Math.round(result.waitedMs / 1000)} s (${why}); busiest process at ${result.busiest.toFixed(2)} cores — going on`);
  return result;
}
