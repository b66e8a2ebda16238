// The one way a suite meets a prerequisite built outside the repo (the
// kube-apiserver/etcd binaries, helm, Prometheus, ...): from its before hook.
// A missing one FAILS the suite, since `npm test` builds every prerequisite
// first (test/prepare-binaries.sh), unless the user asked to go without it in
// TENANTRY_TEST_SKIP; then the suite skips, and its reason is printed and
// counted in the closing line (test/support/summary-reporter.cjs).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What a finder answers: found, or the sentence saying why not (naming the build script that fixes it). */
export type Found = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** A prerequisite of the list in test/prepare-binaries.sh: its TENANTRY_TEST_SKIP name and build script. */
export interface Prerequisite {
  readonly name: string;
  readonly script: string;
}

/** The property of a skipped suite the summary reporter reads its short reason from. */
export const skipReasonProperty = 'tenantrySkipReason';

const prepareScript = join(dirname(fileURLToPath(import.meta.url)), '..', 'prepare-binaries.sh');

/** The lines of the `<<'LIST'` block of a prepare script: name and build script. */
export function parsePrerequisites(script: string): Prerequisite[] {
  const block = /<<'LIST'[^\n]*\n([\s\S]*?)\nLIST\n/.exec(script)?.[1];
  if (block === undefined) throw new Error('test/prepare-binaries.sh has no LIST block');
  return block.split('\n').flatMap((line) => {
    const [name, path] = line.trim().split(/\s+/);
    return name !== undefined && name !== '' && path !== undefined ? [{ name, script: path }] : [];
  });
}

/** The names of TENANTRY_TEST_SKIP ("k8s,helm" → ["k8s", "helm"]). */
export function parseSkipList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** The prerequisite whose build script a finder's reason names, if any. */
export function prerequisiteOf(reason: string, list: readonly Prerequisite[]): Prerequisite | undefined {
  return list.find((p) => reason.includes(p.script));
}

/** What to do about the missing prerequisites' reasons: run, skip (asked for), or fail. */
export type Verdict =
  { readonly kind: 'run' } | { readonly kind: 'skip'; readonly label: string; readonly detail: string } | { readonly kind: 'fail'; readonly message: string };

/** Run when nothing is missing; skip when every missing piece is named in the skip list; fail otherwise. */
export function verdict(reasons: readonly string[], list: readonly Prerequisite[], skip: readonly string[]): Verdict {
  if (reasons.length === 0) return { kind: 'run' };
  const named = reasons.map((reason) => ({ reason, prerequisite: prerequisiteOf(reason, list) }));
  const notAsked = named.filter((n) => n.prerequisite === undefined || !skip.includes(n.prerequisite.name));
  if (notAsked.length > 0) {
    const hint = notAsked.flatMap((n) => (n.prerequisite === undefined ? [] : [n.prerequisite.name]));
    const skipHint = hint.length > 0 ? ` (or go without it: TENANTRY_TEST_SKIP=${hint.join(',')})` : '';
    return { kind: 'fail', message: `missing prerequisite: ${notAsked.map((n) => n.reason).join('; ')}${skipHint}` };
  }
  const names = [...new Set(named.flatMap((n) => (n.prerequisite === undefined ? [] : [n.prerequisite.name])))];
  return { kind: 'skip', label: `TENANTRY_TEST_SKIP=${names.join(',')}`, detail: reasons.join('; ') };
}

/** Skips the suite whose before hook `ctx` is, printing `detail` and recording `label` for the closing line. */
export function skipBecause(ctx: Mocha.Context, label: string, detail: string): void {
  console.log(`    skipped (${label}): ${detail}`);
  const suite = ctx.test?.parent;
  if (suite !== undefined) Object.defineProperty(suite, skipReasonProperty, { value: label, configurable: true });
  ctx.skip();
}

/** Returns when every prerequisite is found; otherwise skips the suite (asked in TENANTRY_TEST_SKIP) or throws. */
export function skipUnlessFound(ctx: Mocha.Context, ...found: readonly Found[]): void {
  const reasons = found.flatMap((f) => (f.ok ? [] : [f.reason]));
  if (reasons.length === 0) return;
  const list = parsePrerequisites(readFileSync(prepareScript, 'utf8'));
  // The one place tests read the variable: it is the test runner's, not Tenantry's config.
  const v = verdict(reasons, list, parseSkipList(process.env['TENANTRY_TEST_SKIP']));
  if (v.kind === 'fail') throw new Error(v.message);
  if (v.kind === 'skip') skipBecause(ctx, v.label, v.detail);
}
