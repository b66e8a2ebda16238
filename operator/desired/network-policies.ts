// NetworkPolicies of a stack (spec.networkPolicy.enabled): from outside the
// stack only the gateway's OTLP ports and the API port are reachable (that is
// also where Prometheus scrapes /metrics); ClickHouse and Keeper accept only
// the stack's own pods (gateway, API, migrate Job, ClickHouse, Keeper), and
// the migrate Job's pods accept nothing. Ingress only: egress stays open, so
// DNS, the Kubernetes API and an external ClickHouse need no rules.
import type { NetworkPolicy, NetworkPolicyIngressRule } from './manifest-types.ts';
import type { Stack } from '../stack/stack-spec.ts';
import { isClustered } from '../stack/stack-spec.ts';
import { childNames } from './child-names.ts';
import type { Component } from './object-meta.ts';
import { childMeta, managedByValue, selectorLabels, stackLabel } from './object-meta.ts';
import { apiPort } from './tenantry-workloads.ts';

type Ingress = NetworkPolicyIngressRule[];

function policy(stack: Stack, name: string, component: Component, ingress: Ingress): NetworkPolicy {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: childMeta(stack.ref, name, component),
    spec: { podSelector: { matchLabels: selectorLabels(stack.ref, component) }, policyTypes: ['Ingress'], ingress },
  };
}

/** Open to any source on the given TCP ports. */
const openPorts = (ports: readonly number[]): Ingress => [{ ports: ports.map((port) => ({ protocol: 'TCP', port })) }];

/** Every pod of this stack, by the labels the operator puts on all of them; any port. */
const stackPods = (stack: Stack): Ingress => [
  { from: [{ podSelector: { matchLabels: { 'app.kubernetes.io/managed-by': managedByValue, [stackLabel]: stack.ref.name } } }] },
];

/** The stack's NetworkPolicies, or none when disabled. */
export function networkPolicies(stack: Stack): NetworkPolicy[] {
  if (!stack.spec.networkPolicy.enabled) return [];
  const n = childNames(stack.ref.name);
  const g = stack.spec.gateway.ports;
  const out = [
    policy(stack, n.gateway, 'gateway', openPorts([g.otlpHttp, g.otlpGrpc])),
    policy(stack, n.api, 'api', openPorts([apiPort])),
    // No ingress rule at all: the Job's pods only connect out, to ClickHouse.
    policy(stack, `${stack.ref.name}-migrate`, 'migrate', []),
  ];
  const ch = stack.spec.clickhouse;
  if (ch.mode === 'managed') out.push(policy(stack, n.clickhouse, 'clickhouse', stackPods(stack)));
  if (ch.mode === 'managed' && isClustered(ch.managed)) out.push(policy(stack, n.keeper, 'clickhouse-keeper', stackPods(stack)));
  return out;
}
