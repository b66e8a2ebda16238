// The resource types the operator reads and writes, with their REST paths.
// A fixed table instead of discovery: the operator only touches these.

export interface ResourceType {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
}

export const resourceTypes = {
  stack: { apiVersion: 'tenantry.dev/v1alpha1', kind: 'ObservabilityStack', plural: 'observabilitystacks' },
  tenant: { apiVersion: 'tenantry.dev/v1alpha1', kind: 'Tenant', plural: 'tenants' },
  deployment: { apiVersion: 'apps/v1', kind: 'Deployment', plural: 'deployments' },
  statefulSet: { apiVersion: 'apps/v1', kind: 'StatefulSet', plural: 'statefulsets' },
  service: { apiVersion: 'v1', kind: 'Service', plural: 'services' },
  configMap: { apiVersion: 'v1', kind: 'ConfigMap', plural: 'configmaps' },
  persistentVolumeClaim: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', plural: 'persistentvolumeclaims' },
  pod: { apiVersion: 'v1', kind: 'Pod', plural: 'pods' },
  secret: { apiVersion: 'v1', kind: 'Secret', plural: 'secrets' },
  job: { apiVersion: 'batch/v1', kind: 'Job', plural: 'jobs' },
  podDisruptionBudget: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets' },
  horizontalPodAutoscaler: { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', plural: 'horizontalpodautoscalers' },
  networkPolicy: { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', plural: 'networkpolicies' },
  event: { apiVersion: 'v1', kind: 'Event', plural: 'events' },
  lease: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', plural: 'leases' },
} as const satisfies Record<string, ResourceType>;

/** The kinds a stack owns, which the operator watches and prunes. */
export const ownedTypes: readonly ResourceType[] = [
  resourceTypes.secret,
  resourceTypes.configMap,
  resourceTypes.service,
  resourceTypes.statefulSet,
  resourceTypes.job,
  resourceTypes.deployment,
  resourceTypes.podDisruptionBudget,
  resourceTypes.horizontalPodAutoscaler,
  resourceTypes.networkPolicy,
];

/**
 * Kinds watched besides the owned ones: the gateway's write-ahead-log claims,
 * made by the StatefulSet controller from the operator's template (labelled,
 * not owned), which the operator drains and deletes once their replica is
 * scaled away (reconcile/wal-drain.ts).
 */
export const claimTypes: readonly ResourceType[] = [resourceTypes.persistentVolumeClaim];

export function typeOfKind(apiVersion: string | undefined, kind: string | undefined): ResourceType | undefined {
  return Object.values(resourceTypes).find((t) => t.apiVersion === apiVersion && t.kind === kind);
}

/** Collection path; namespace '' means all namespaces. */
export function collectionPath(t: ResourceType, namespace: string): string {
  const base = t.apiVersion.includes('/') ? `/apis/${t.apiVersion}` : `/api/${t.apiVersion}`;
  return namespace === '' ? `${base}/${t.plural}` : `${base}/namespaces/${encodeURIComponent(namespace)}/${t.plural}`;
}

export function objectPath(t: ResourceType, namespace: string, name: string): string {
  return `${collectionPath(t, namespace)}/${encodeURIComponent(name)}`;
}
