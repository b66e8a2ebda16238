// histogram_quantile's monotonicity info, folded as Prometheus 3.16 folds it:
// one info per message (the metric name is in it only under delayed name
// removal), its position the first call's, with the lowest and highest bound
// fixed, the largest decrease and the first and last step that needed a fix
// over the whole query, and a sample count kept the way Prometheus' evaluator
// keeps it. That count is not the number of fixes: rangeEval merges the
// call's running annotations into its own at every step, and as both hold the
// same fold after its first fix, the merge adds the fold to itself, so the
// count doubles (plus one) at every later step of the call, with or without a
// fix (a fix at each of 11 steps reads "over 3070 samples"). It is Go's int,
// wrapping at 64 bits on long ranges.
import type { MonotonicityFix } from './functions/function-types.ts';
import { monotonicityDetails } from './functions/annotations.ts';

/** One message's fold; `count` is Go's (the samples less one). */
interface Fold {
  readonly where: string;
  minTs: number;
  maxTs: number;
  minBucket: number;
  maxBucket: number;
  maxDiff: number;
  count: bigint;
}

const int64 = (n: bigint): bigint => BigInt.asIntN(64, n);

function widen(into: Fold, from: Omit<Fold, 'where' | 'count'>): void {
  into.minTs = Math.min(into.minTs, from.minTs);
  into.maxTs = Math.max(into.maxTs, from.maxTs);
  into.minBucket = Math.min(into.minBucket, from.minBucket);
  into.maxBucket = Math.max(into.maxBucket, from.maxBucket);
  into.maxDiff = Math.max(into.maxDiff, from.maxDiff);
}

/** A fix placed: the message and the position (" (1:26)") of the argument it stands at. */
export interface PlacedFix {
  readonly fix: MonotonicityFix;
  readonly where: string;
}

/** One function call's folds over its steps. */
export class CallFolds {
  private readonly folds = new Map<string, Fold>();

  /** Adds one step's fixes; called at every step of the call, in order, with or without fixes. */
  step(t: number, fixes: readonly PlacedFix[]): void {
    const now = new Map<string, Fold>();
    for (const { fix, where } of fixes) {
      const made: Fold = { where, minTs: t, maxTs: t, minBucket: fix.minBucket, maxBucket: fix.maxBucket, maxDiff: fix.maxDiff, count: 0n };
      const known = now.get(fix.text);
      if (known === undefined) now.set(fix.text, made);
      else {
        widen(known, made);
        known.count = int64(known.count + 1n);
      }
    }
    for (const [text, fold] of this.folds) {
      const added = now.get(text);
      if (added !== undefined) {
        widen(fold, added);
        fold.count = int64(fold.count + added.count + 1n);
      }
      fold.count = int64(2n * fold.count + 1n);
    }
    for (const [text, fold] of now) if (!this.folds.has(text)) this.folds.set(text, fold);
  }

  /** The folds so far, by message. */
  entries(): IterableIterator<[string, Fold]> {
    return this.folds.entries();
  }
}

/** A query's folds: each call's, added up, the first call's position kept. */
export class QueryFolds {
  private readonly folds = new Map<string, Fold>();

  /** Adds a finished call's folds. */
  add(call: CallFolds): void {
    for (const [text, fold] of call.entries()) {
      const known = this.folds.get(text);
      if (known === undefined) {
        this.folds.set(text, { ...fold });
        continue;
      }
      widen(known, fold);
      known.count = int64(known.count + fold.count + 1n);
    }
  }

  /** The infos, as Prometheus prints them. */
  infos(): string[] {
    return [...this.folds].map(([text, f]) => text + monotonicityDetails({ ...f, samples: int64(f.count + 1n) }) + f.where);
  }
}
