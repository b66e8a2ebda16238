// Where bench:peers finds the peers' binaries, and building them on first
// use: VictoriaLogs, Jaeger and VictoriaMetrics by bench/peers/build-peers.sh,
// Prometheus by test/prometheus/build-prometheus.sh (the Prometheus tests
// need it too). All are Apache-2.0, built from their Go modules into
// ~/.cache/tenantry/<name>/<version>. Versions are pinned here and in the
// build scripts together.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const peerVersions = { victoriaLogs: '1.52.1', jaeger: '1.76.0', victoriaMetrics: '1.151.0', prometheus: '3.16.0' } as const;

export interface PeerBinaries {
  readonly victoriaLogs: string;
  readonly jaeger: string;
  readonly victoriaMetrics: string;
  readonly prometheus: string;
}

const repoRoot = join(import.meta.dirname, '..', '..');
const cacheRoot = (): string => process.env['PEERS_CACHE'] ?? join(homedir(), '.cache', 'tenantry');
const prometheusCacheRoot = (): string => process.env['PROMETHEUS_CACHE'] ?? join(homedir(), '.cache', 'tenantry');

/** The binaries' paths, whether they are there or not. */
export function peerBinaryPaths(): PeerBinaries {
  const root = cacheRoot();
  return {
    victoriaLogs: join(root, 'victoria-logs', peerVersions.victoriaLogs, 'victoria-logs'),
    jaeger: join(root, 'jaeger', peerVersions.jaeger, 'jaeger'),
    victoriaMetrics: join(root, 'victoria-metrics', peerVersions.victoriaMetrics, 'victoria-metrics'),
    prometheus: join(prometheusCacheRoot(), 'prometheus', peerVersions.prometheus, 'prometheus'),
  };
}

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** Whether a build script is running now (another engineer's, CI's or an earlier bench's): then wait for it rather than build twice. */
function buildRunning(script: string): boolean {
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

/**
 * The four binaries, built first when missing (minutes each; the bench says
 * so through `say`). A build already under way is waited for, at most 40
 * minutes in all.
 */
export async function ensurePeerBinaries(say: (line: string) => void): Promise<PeerBinaries> {
  const paths = peerBinaryPaths();
  const until = Date.now() + 40 * 60_000;
  while ((['victoriaLogs', 'jaeger', 'victoriaMetrics'] as const).some((k) => !executable(paths[k])) && buildRunning('build-peers.sh') && Date.now() < until) {
    say('waiting for the peers\' build under way (bench/peers/build-peers.sh)');
    await sleep(30_000);
  }
  const missing = (['victoriaLogs', 'jaeger', 'victoriaMetrics'] as const).filter((k) => !executable(paths[k]));
  if (missing.length > 0) {
    say(`building ${missing.join(', ')} (bench/peers/build-peers.sh, once; minutes)`);
    const built = spawnSync('bash', [join(repoRoot, 'bench', 'peers', 'build-peers.sh')], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 60 * 60_000 });
    if (built.status !== 0) throw new Error(`bench/peers/build-peers.sh failed (${built.status ?? built.signal ?? '?'})`);
  }
  while (!executable(paths.prometheus) && buildRunning('build-prometheus.sh') && Date.now() < until) {
    say('waiting for the Prometheus build under way (test/prometheus/build-prometheus.sh)');
    await sleep(30_000);
  }
  if (!executable(paths.prometheus)) {
    say('building Prometheus (test/prometheus/build-prometheus.sh, once; about 11 min of CPU)');
    const built = spawnSync('bash', [join(repoRoot, 'test', 'prometheus', 'build-prometheus.sh')], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 60 * 60_000 });
    if (built.status !== 0) throw new Error(`test/prometheus/build-prometheus.sh failed (${built.status ?? built.signal ?? '?'})`);
  }
  for (const [name, path] of Object.entries(paths) as [string, string][]) if (!executable(path)) throw new Error(`${name}: ${path} is still missing after its build`);
  return paths;
}
