// Where test/prometheus/build-prometheus.sh puts the reference Prometheus 3.16
// (and promtool), for the Prometheus differential tests and bench:promql, and
// where a PromQL compliance tester built from a checkout would be. Keep these
// versions equal to the ones pinned in that script.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The Prometheus release, built from github.com/prometheus/prometheus v0.316.0. */
export const prometheusVersion = '3.16.0';
/** Module pseudo-version of github.com/prometheus/compliance/promql (its last commit, 2026-05-26). */
export const complianceVersion = 'v0.0.0-20260526170707-7754e6a52015';

export interface PrometheusBinaries {
  readonly prometheus: string;
  readonly promtool: string;
}

export interface ComplianceTester {
  readonly tester: string;
  /** The tester's standard query suite, shipped with it. */
  readonly queries: string;
}

type Finding<T> = { readonly ok: true; readonly found: T } | { readonly ok: false; readonly reason: string };

const cacheRoot = (): string => process.env['PROMETHEUS_CACHE'] ?? join(homedir(), '.cache', 'tenantry');
const buildHint = 'run: bash test/prometheus/build-prometheus.sh';

function find<T extends Record<string, string>>(what: string, paths: T): Finding<T> {
  const missing = Object.values(paths).filter((p) => !existsSync(p));
  return missing.length === 0 ? { ok: true, found: paths } : { ok: false, reason: `${what} missing (${missing.join(', ')}); ${buildHint}` };
}

/** The cached prometheus and promtool binaries, or a sentence saying why they are not there (for a skip). */
export function findPrometheus(): Finding<PrometheusBinaries> {
  const dir = join(cacheRoot(), 'prometheus', prometheusVersion);
  return find('Prometheus', { prometheus: join(dir, 'prometheus'), promtool: join(dir, 'promtool') });
}

/**
 * The cached promql-compliance-tester and its query suite, or why they are
 * not there; `unobtainable` when the build script found no source for it (the
 * module proxy refuses the module and no checkout was given): the one case the
 * compliance test skips by itself, with that reason.
 */
export function findComplianceTester(): Finding<ComplianceTester> & { readonly unobtainable?: string } {
  const dir = join(cacheRoot(), 'promql-compliance', complianceVersion);
  const found = find('PromQL compliance tester', { tester: join(dir, 'promql-compliance-tester'), queries: join(dir, 'promql-test-queries.yml') });
  const note = `${dir}.unavailable`;
  return found.ok || !existsSync(note) ? found : { ...found, unobtainable: readFileSync(note, 'utf8').trim() };
}
