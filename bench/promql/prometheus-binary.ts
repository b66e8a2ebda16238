// The reference Prometheus 3.16 and promtool for bench:promql, from the
// cache test/prometheus/build-prometheus.sh fills (shared with the
// Prometheus tests). When the binaries are missing the script is run here;
// it holds a lock, so a build already under way is waited for.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { findPrometheus } from '../../support/prometheus-binaries.ts';
import type { PrometheusBinaries } from '../../support/prometheus-binaries.ts';

const script = 'build-prometheus.sh';
const repoRoot = join(import.meta.dirname, '..', '..');

/** The binaries, built or waited for first when missing (the bench says so through `say`). */
export function ensurePrometheus(say: (line: string) => void): PrometheusBinaries {
  let found = findPrometheus();
  if (!found.ok) {
    say(`building Prometheus 3.16 (test/prometheus/${script}, once; about 11 min of CPU; a build already under way is waited for)`);
    const built = spawnSync('bash', [join(repoRoot, 'test', 'prometheus', script)], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 60 * 60_000 });
    if (built.status !== 0) throw new Error(`test/prometheus/${script} failed (${built.status ?? built.signal ?? '?'})`);
    found = findPrometheus();
  }
  if (!found.ok) throw new Error(found.reason);
  return found.found;
}
