// Plain-object views of @kubernetes/client-node's model classes. The builders
// return object literals (what is sent as JSON), not class instances, so the
// types are the classes' shapes made structural.
import type {
  KubernetesObject,
  V1ConfigMap,
  V1Container,
  V1Deployment,
  V1EnvVar,
  V1Job,
  V1ObjectMeta,
  V1OwnerReference,
  V1PersistentVolumeClaim,
  V1PodDisruptionBudget,
  V1PodSpec,
  V1Secret,
  V1Service,
  V1StatefulSet,
  V1Volume,
  V1VolumeMount,
  V1TopologySpreadConstraint,
  V2HorizontalPodAutoscaler,
} from '@kubernetes/client-node';

/** A class's shape as a plain object type, recursively. */
export type Plain<T> = T extends Date ? Date : T extends ReadonlyArray<infer U> ? Array<Plain<U>> : T extends object ? { [K in keyof T]: Plain<T[K]> } : T;

export type Manifest = Plain<KubernetesObject>;
export type ObjectMeta = Plain<V1ObjectMeta>;
export type OwnerReference = Plain<V1OwnerReference>;
export type ConfigMap = Plain<V1ConfigMap>;
export type Container = Plain<V1Container>;
export type Deployment = Plain<V1Deployment>;
export type EnvVar = Plain<V1EnvVar>;
export type Job = Plain<V1Job>;
export type PersistentVolumeClaim = Plain<V1PersistentVolumeClaim>;
export type PodDisruptionBudget = Plain<V1PodDisruptionBudget>;
export type PodSpec = Plain<V1PodSpec>;
export type Secret = Plain<V1Secret>;
export type Service = Plain<V1Service>;
export type StatefulSet = Plain<V1StatefulSet>;
export type Volume = Plain<V1Volume>;
export type VolumeMount = Plain<V1VolumeMount>;
export type HorizontalPodAutoscaler = Plain<V2HorizontalPodAutoscaler>;
export type TopologySpreadConstraint = Plain<V1TopologySpreadConstraint>;

/** One ingress rule as sent (the client's model names the `from` field `_from`, its own serialiser renames it). */
export interface NetworkPolicyIngressRule {
  readonly from?: Array<{ podSelector: { matchLabels: Record<string, string> } }>;
  readonly ports?: Array<{ protocol: 'TCP'; port: number }>;
}

export interface NetworkPolicy extends Manifest {
  readonly apiVersion: 'networking.k8s.io/v1';
  readonly kind: 'NetworkPolicy';
  readonly metadata: ObjectMeta;
  readonly spec: { podSelector: { matchLabels: Record<string, string> }; policyTypes: Array<'Ingress'>; ingress: NetworkPolicyIngressRule[] };
}
