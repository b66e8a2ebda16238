// Where bench:peers finds the peers' binaries, and building them on first
// use: VictoriaLogs, Jaeger and VictoriaMetrics by bench/peers/build-peers.sh,
// Prometheus by test/prometheus/build-prometheus.sh (the Prometheus tests
// need it too). All are Apache-2.0, built from their Go modules into
// ~/.cache/tenantry/<name>/<version>. Versions are pinned here and in the
// build scripts together.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
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

/**
 * The four binaries, built first when missing (minutes each; the bench says
 * so through `say`). The build scripts hold a lock, so a build already under
 * way is waited for rather than run twice.
 */
export function ensurePeerBinaries(say: (line: string) => void): PeerBinaries {
  const paths = peerBinaryPaths();
  const build = (script: string, what: string): void => {
    say(`building ${what} (${script}; a build already under way is waited for)`);
    const built = spawnSync('bash', [join(repoRoot, script)], { stdio: ['ignore', 'inherit', 'inherit'], timeout: 60 * 60_000 });
    if (built.status !== 0) throw new Error(`${script} failed (${built.status ?? built.signal ?? '?'})`);
  };
  const missing = (['victoriaLogs', 'jaeger', 'victoriaMetrics'] as const).filter((k) => !executable(paths[k]));
  if (missing.length > 0) build('bench/peers/build-peers.sh', missing.join(', '));
  if (!executable(paths.prometheus)) build('test/prometheus/build-prometheus.sh', 'Prometheus (about 11 min of CPU)');
  for (const [name, path] of Object.entries(paths) as [string, string][])
    if (!executable(path)) throw new Error(`${name}: ${path} is still missing after its build`);
  return paths;
}
