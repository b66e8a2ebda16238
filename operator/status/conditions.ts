// Kubernetes-style conditions: setting one keeps its lastTransitionTime
// unless its status changes, so "since when" stays truthful across reconciles.

export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration: number;
  readonly lastTransitionTime: string;
}

export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/** The new conditions, keeping the previous transition time of any condition whose status did not change. */
export function mergeConditions(previous: readonly Condition[], next: readonly ConditionInput[], generation: number, now: Date): Condition[] {
  return next.map((c) => {
    const before = previous.find((p) => p.type === c.type);
    const lastTransitionTime = before !== undefined && before.status === c.status ? before.lastTransitionTime : now.toISOString();
    return { ...c, observedGeneration: generation, lastTransitionTime };
  });
}

/** Reads conditions from a status object as stored, dropping malformed entries. */
export function readConditions(status: unknown): Condition[] {
  const list = (status as { conditions?: unknown } | undefined)?.conditions;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (c): c is Condition => typeof c === 'object' && c !== null && typeof (c as Condition).type === 'string' && typeof (c as Condition).status === 'string',
  );
}
