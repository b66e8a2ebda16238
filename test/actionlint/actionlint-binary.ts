// Where test/actionlint/build-actionlint.sh puts actionlint. Keep the version equal to the script's.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const actionlintVersion = 'v1.7.12';

/** The cached actionlint binary, or a sentence saying why it is missing (naming its build script). */
export function findActionlint(): { readonly ok: true; readonly actionlint: string } | { readonly ok: false; readonly reason: string } {
  const root = process.env['ACTIONLINT_CACHE'] ?? join(homedir(), '.cache', 'tenantry', 'actionlint');
  const actionlint = join(root, `actionlint-${actionlintVersion}`, 'actionlint');
  return existsSync(actionlint)
    ? { ok: true, actionlint }
    : { ok: false, reason: `actionlint ${actionlintVersion} missing at ${actionlint}; run: bash test/actionlint/build-actionlint.sh` };
}
