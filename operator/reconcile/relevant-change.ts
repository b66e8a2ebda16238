// Which watch events can change a reconcile's outcome. Stacks and Tenants:
// only their spec (metadata.generation) and deletion, so status writes
// (including the operator's own) do not wake it. Children: everything except
// status and bookkeeping metadata, plus the few status fields the stack's
// status is computed from (ready replicas, Job success or failure) and a
// StatefulSet's pod count (the gateways' drain decision); a Service
// or PodDisruptionBudget status update, or a Deployment's availableReplicas
// ticking, enqueues nothing.
import type { KubeObject } from '../kube/kube-rest.ts';

type Status = Record<string, unknown> & { conditions?: Array<{ type?: string; status?: string }> };

/** The part of a child's status that stack-status.ts reads. */
function statusRead(kind: string | undefined, status: Status | undefined): unknown {
  if (status === undefined) return undefined;
  if (kind === 'Deployment') return [status['readyReplicas'], status['updatedReplicas'], status['observedGeneration']];
  // A StatefulSet's pod count too: a scaled-away gateway's pod being gone is when its claim's drain starts (wal-drain.ts).
  if (kind === 'StatefulSet') return [status['readyReplicas'], status['updatedReplicas'], status['observedGeneration'], status['replicas']];
  if (kind === 'Job') return [status['succeeded'], status.conditions?.filter((c) => c.type === 'Failed').map((c) => c.status)];
  return undefined;
}

/** A string that changes exactly when an event about this object can change a reconcile. */
export function relevantState(object: KubeObject): string {
  const m = object.metadata ?? {};
  if (object.kind === 'ObservabilityStack' || object.kind === 'Tenant') {
    return JSON.stringify([m.uid, m.generation, m.deletionTimestamp]);
  }
  const { status, metadata: _metadata, ...rest } = object;
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = m as typeof m & { managedFields?: unknown };
  return JSON.stringify([meta, rest, statusRead(object.kind, status as Status | undefined)]);
}

/** Whether an event (the object now, the stored copy before) can change a reconcile. */
export function isRelevantChange(type: 'LISTED' | 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject, previous: KubeObject | undefined): boolean {
  if (type === 'DELETED') return true;
  return previous === undefined || relevantState(previous) !== relevantState(object);
}
