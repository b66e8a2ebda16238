// The one way a suite skips when a prerequisite built outside the repo (the
// kube-apiserver/etcd binaries, helm) is missing: from its before hook, with
// every missing piece's reason printed, so a skip is never silent.

/** What a finder answers: found, or the sentence saying why not. */
export type Found = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Skips the suite whose before hook `ctx` is, printing each missing prerequisite's reason. */
export function skipUnlessFound(ctx: Mocha.Context, ...found: readonly Found[]): void {
  const reasons = found.flatMap((f) => (f.ok ? [] : [f.reason]));
  if (reasons.length === 0) return;
  console.log(`    skipped: ${reasons.join('; ')}`);
  ctx.skip();
}
