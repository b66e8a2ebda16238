// Where test/chart/build-helm.sh puts helm. Keep the version equal to the script's.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const helmVersion = 'v3.19.0';

/** The cached helm binary, or a sentence saying why it is missing (for a test skip). */
export function findHelm(): { readonly ok: true; readonly helm: string } | { readonly ok: false; readonly reason: string } {
  const root = process.env['K8S_TEST_CACHE'] ?? join(homedir(), '.cache', 'tenantry', 'k8s');
  const helm = join(root, `helm-${helmVersion}`, 'helm');
  return existsSync(helm) ? { ok: true, helm } : { ok: false, reason: `helm ${helmVersion} missing at ${helm}; run: bash test/chart/build-helm.sh` };
}
