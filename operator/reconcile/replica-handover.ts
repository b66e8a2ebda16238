// Handing a Deployment's (or StatefulSet's) replica count to its HorizontalPodAutoscaler. When
// autoscaling is switched on, the operator stops applying spec.replicas; if
// its field manager still owned the field, server-side apply would reset it
// to the default of 1 (the field has no other owner) until the HPA scales it
// back up. So, once, the live count is applied under a second field manager
// first: the field then survives the operator letting go, and the HPA's own
// scaling takes it over from there (the Kubernetes documentation's
// "transferring ownership" between managers).
import type { Manifest } from '../desired/manifest-types.ts';
import { fieldManager } from '../desired/object-meta.ts';
import type { KubeObject } from '../kube/kube-rest.ts';

/** The field manager that holds spec.replicas between the operator and the HPA. */
export const handoverManager = 'tenantry-hpa-handover';

interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation?: string;
  readonly fieldsV1?: { readonly 'f:spec'?: Readonly<Record<string, unknown>> };
}

/** True when the operator's own applies own the live object's spec.replicas. */
function operatorOwnsReplicas(live: KubeObject): boolean {
  const entries = (live.metadata as { managedFields?: ManagedFieldsEntry[] } | undefined)?.managedFields ?? [];
  return entries.some((e) => e.manager === fieldManager && e.operation === 'Apply' && e.fieldsV1?.['f:spec']?.['f:replicas'] !== undefined);
}

/**
 * The apply to send under `handoverManager` before applying `desired`, or
 * undefined: only for a Deployment or StatefulSet the operator is about to stop scaling
 * while it still owns the live replica count.
 */
export function replicaHandover(desired: Manifest, live: KubeObject | undefined): Manifest | undefined {
  if ((desired.kind !== 'Deployment' && desired.kind !== 'StatefulSet') || live === undefined) return undefined;
  if ((desired as { spec?: { replicas?: number } }).spec?.replicas !== undefined) return undefined;
  const replicas = (live['spec'] as { replicas?: number } | undefined)?.replicas;
  if (replicas === undefined || !operatorOwnsReplicas(live)) return undefined;
  return {
    apiVersion: desired.apiVersion,
    kind: desired.kind,
    metadata: { name: live.metadata?.name ?? '', namespace: live.metadata?.namespace ?? '' },
    spec: { replicas },
  } as Manifest;
}
