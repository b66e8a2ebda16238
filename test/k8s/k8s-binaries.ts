// Where test/k8s/build-binaries.sh puts kube-apiserver, kubectl and etcd.
// Keep these versions equal to the ones pinned in that script.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { skipUnlessFound } from '../support/skip-unless-found.ts';

export const kubernetesVersion = 'v1.36.3';
export const etcdVersion = 'v3.6.16';

export interface K8sBinaries {
  readonly kubeApiServer: string;
  readonly kubectl: string;
  readonly etcd: string;
}

/** The cached binaries, or a sentence saying why they are not there (for a test skip). */
export function findK8sBinaries(): { readonly ok: true; readonly binaries: K8sBinaries } | { readonly ok: false; readonly reason: string } {
  const root = process.env['K8S_TEST_CACHE'] ?? join(homedir(), '.cache', 'tenantry', 'k8s');
  const dir = join(root, `${kubernetesVersion}-etcd-${etcdVersion}`);
  const binaries = { kubeApiServer: join(dir, 'kube-apiserver'), kubectl: join(dir, 'kubectl'), etcd: join(dir, 'etcd') };
  const missing = Object.values(binaries).filter((p) => !existsSync(p));
  return missing.length === 0
    ? { ok: true, binaries }
    : { ok: false, reason: `kube-apiserver/etcd binaries missing (${missing.join(', ')}); run: bash test/k8s/build-binaries.sh` };
}

/** The binaries, or skips the suite whose before hook `ctx` is (with the reason). */
export function k8sBinariesOrSkip(ctx: Mocha.Context): K8sBinaries {
  const found = findK8sBinaries();
  skipUnlessFound(ctx, found);
  if (!found.ok) throw new Error('bug: skipUnlessFound returned for a missing prerequisite');
  return found.binaries;
}
