// Upgrading a stack whose gateways ran as a Deployment (before
// docs/adr/0007-gateway-wal-volumes.md): the new StatefulSet is applied next
// to it, and the old Deployment is no longer desired, so pruning deletes it.
// Not at once, though: its pods keep serving (the Service selects both) until
// every replica of the StatefulSet is ready, so an upgrade never leaves the
// OTLP ports without a ready pod. Its pods then stop as any gateway pod does,
// draining their emptyDir logs into ClickHouse.
import { childNames } from '../desired/child-names.ts';
import type { ClusterCache } from '../kube/cluster-cache.ts';
import { resourceTypes } from '../kube/resource-types.ts';
import type { Stack } from '../stack/stack-spec.ts';

/** True once a StatefulSet's current generation has all its replicas ready. */
function allReady(statefulSet: { metadata?: { generation?: number }; [key: string]: unknown }): boolean {
  const spec = (statefulSet['spec'] ?? {}) as { replicas?: number };
  const status = (statefulSet['status'] ?? {}) as { readyReplicas?: number; observedGeneration?: number };
  return (status.observedGeneration ?? 0) >= (statefulSet.metadata?.generation ?? 0) && (status.readyReplicas ?? 0) >= (spec.replicas ?? 1);
}

/** The old gateway Deployment's key while it must survive pruning (the StatefulSet not yet ready), else nothing. */
export function legacyGatewayKept(cache: ClusterCache, stack: Stack): string[] {
  const name = childNames(stack.ref.name).gateway;
  if (cache.of(resourceTypes.deployment).get(name, stack.ref.namespace) === undefined) return [];
  const statefulSet = cache.of(resourceTypes.statefulSet).get(name, stack.ref.namespace);
  return statefulSet !== undefined && allReady(statefulSet) ? [] : [`Deployment/${name}`];
}
