// The reference Prometheus 3.16 and promtool for bench:promql, from the
// cache test/prometheus/build-prometheus.sh fills (shared with the
// Prometheus tests). A build already under way is waited for, at most 40
// minutes; when there is none and the binaries are missing, the script is
// run here, once.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { findPrometheus } from '../../test/prometheus/prometheus-binaries.ts';
import type { PrometheusBinaries } from '../../test/prometheus/prometheus-binaries.ts';

const script = 'build-prometheus.sh';
const repoRoot = join(import.meta.dirname, '..', '..');

/** Whether some process (another engineer's, a test's, an earlier bench's) is running the build script now. */
function buildRunning(): boolean {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(script)) return true;
    } catch {
      // gone
    }
  }
  return false;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The binaries, built or waited for first when missing (the bench says so through `say`). */
export async function ensurePrometheus(say: (line: string) => void): Promise<PrometheusBinaries> {
  const until = Date.now() + 40 * 60_000;
  let found = findPrometheus();
  while (!found.ok && buildRunning() && Date.now() < until) {
    say(`waiting for the Prometheus build under way (test/prometheus/${script})`);
    await sleep(30_000);
    found = findPrometheus();
  }
  if (!found.ok) {
    say(`building Prometheus 3.16 (test/prometheus/${script}, once; about 11 min of CPU)`);
    const built = spawnSync('bash', [join(repoRoot, 'test', 'prometheus', script)], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 60 * 60_000 });
    if (built.status !== 0) throw new Error(`test/prometheus/${script} failed (${built.status ?? built.signal ?? '?'})`);
    found = findPrometheus();
  }
  if (!found.ok) throw new Error(found.reason);
  return found.found;
}
