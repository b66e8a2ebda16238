// PodDisruptionBudgets: at most one pod of a replicated component down at a
// time during voluntary disruptions (drains, upgrades). Single-replica
// components get none, since a budget would block node drains forever.
import type { PodDisruptionBudget } from './manifest-types.ts';
import type { Stack } from '../stack/stack-spec.ts';
import { isClustered } from '../stack/stack-spec.ts';
import { childNames } from './child-names.ts';
import type { Component } from './object-meta.ts';
import { childMeta, selectorLabels } from './object-meta.ts';
import { minimumReplicas } from './tenantry-workloads.ts';

function budget(stack: Stack, name: string, component: Component, selector: Record<string, string>): PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: childMeta(stack.ref, name, component),
    spec: { maxUnavailable: 1, selector: { matchLabels: selector } },
  };
}

export function disruptionBudgets(stack: Stack): PodDisruptionBudget[] {
  const n = childNames(stack.ref.name);
  const out: PodDisruptionBudget[] = [];
  if (minimumReplicas(stack.spec.gateway) > 1) out.push(budget(stack, n.gateway, 'gateway', selectorLabels(stack.ref, 'gateway')));
  if (minimumReplicas(stack.spec.api) > 1) out.push(budget(stack, n.api, 'api', selectorLabels(stack.ref, 'api')));
  const ch = stack.spec.clickhouse;
  if (ch.mode === 'managed') {
    if (ch.managed.replicas > 1) {
      for (let s = 0; s < ch.managed.shards; s++) {
        out.push(budget(stack, n.clickhouseShard(s), 'clickhouse', { ...selectorLabels(stack.ref, 'clickhouse'), 'tenantry.dev/shard': String(s) }));
      }
    }
    if (isClustered(ch.managed) && ch.managed.keeper.replicas > 1)
      out.push(budget(stack, n.keeper, 'clickhouse-keeper', selectorLabels(stack.ref, 'clickhouse-keeper')));
  }
  return out;
}
