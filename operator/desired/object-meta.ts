// Labels, owner references and metadata shared by every child of a stack.
import type { ObjectMeta, OwnerReference } from './manifest-types.ts';
import { apiVersion } from '../stack/stack-spec.ts';
import type { StackRef } from '../stack/stack-spec.ts';

export const fieldManager = 'tenantry-operator';
export const managedByValue = 'tenantry-operator';
export const stackLabel = 'tenantry.dev/stack';
export const checksumAnnotation = 'tenantry.dev/config-checksum';

export type Component = 'gateway' | 'api' | 'clickhouse' | 'clickhouse-keeper' | 'migrate' | 'credentials' | 'gateway-drain';

/** The labels that select a component's pods; stable across upgrades (selectors are immutable). */
export function selectorLabels(stack: StackRef, component: Component): Record<string, string> {
  return {
    'app.kubernetes.io/name': component.startsWith('clickhouse') ? 'clickhouse' : 'tenantry',
    'app.kubernetes.io/instance': stack.name,
    'app.kubernetes.io/component': component,
  };
}

/** Every label a child carries: selector labels plus part-of, managed-by and the stack label used for pruning. */
export function childLabels(stack: StackRef, component: Component): Record<string, string> {
  return {
    ...selectorLabels(stack, component),
    'app.kubernetes.io/part-of': 'tenantry',
    'app.kubernetes.io/managed-by': managedByValue,
    [stackLabel]: stack.name,
  };
}

/** The label selector that finds every child of a stack (for pruning). */
export function childSelector(stack: string): string {
  return `app.kubernetes.io/managed-by=${managedByValue},${stackLabel}=${stack}`;
}

export function ownerReference(stack: StackRef): OwnerReference {
  return { apiVersion, kind: 'ObservabilityStack', name: stack.name, uid: stack.uid, controller: true, blockOwnerDeletion: true };
}

/** Metadata of a child: name, namespace, labels, owner reference. */
export function childMeta(stack: StackRef, name: string, component: Component, annotations?: Record<string, string>): ObjectMeta {
  return {
    name,
    namespace: stack.namespace,
    labels: childLabels(stack, component),
    ...(annotations === undefined ? {} : { annotations }),
    ownerReferences: [ownerReference(stack)],
  };
}
