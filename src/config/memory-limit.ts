// The memory this process is given, when TENANTRY_MEMORY_LIMIT_BYTES does
// not say: the cgroup's limit (a container's memory limit; cgroup v2, then
// v1), else the machine's memory. The per-statement bounds derive from it
// (src/target/statement-limits.ts).
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';

/** cgroup v1 reports "no limit" as a number near 2^63 rounded to the page size: anything this large means none. */
const noLimitAbove = 2 ** 60;

/** Files that hold the process's cgroup memory limit, v2 first. */
const cgroupFiles = ['/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'] as const;

/** Reads one limit file: bytes, or undefined for "max", a missing file or no real limit. */
function readLimit(path: string, read: (path: string) => string): number | undefined {
  let text: string;
  try {
    text = read(path).trim();
  } catch {
    return undefined;
  }
  if (!/^\d+$/.test(text)) return undefined;
  const bytes = Number(text);
  return bytes > 0 && bytes < noLimitAbove ? bytes : undefined;
}

/** The cgroup's memory limit, or the machine's memory when the process has none (or the smaller of the two). */
export function detectedMemoryBytes(read: (path: string) => string = (path) => readFileSync(path, 'utf8'), machine: number = totalmem()): number {
  for (const path of cgroupFiles) {
    const limit = readLimit(path, read);
    if (limit !== undefined) return Math.min(limit, machine);
  }
  return machine;
}
