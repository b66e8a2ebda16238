// tenantry_operator_stack_condition: every watched stack's conditions as a
// gauge (1 while the condition is True, 0 otherwise), read from the watch
// cache at scrape time, so alerts can say "Degraded for 10 minutes" without
// asking the API server. Only the leader, which runs the controller and fills
// the cache, exports it; it is unregistered when the controller stops.
import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { KubeObject } from '../kube/kube-rest.ts';
import { readConditions } from './conditions.ts';

export const stackConditionMetric = 'tenantry_operator_stack_condition';

/** Registers the gauge over `stacks` (the cache's stack list); returns its unregistration. */
export function registerStackConditions(registry: Registry, stacks: () => readonly KubeObject[]): () => void {
  registry.removeSingleMetric(stackConditionMetric);
  new Gauge({
    name: stackConditionMetric,
    help: 'Conditions of each ObservabilityStack (Ready, Progressing, Degraded): 1 while True, 0 otherwise; exported by the leader',
    labelNames: ['namespace', 'stack', 'condition'],
    registers: [registry],
    collect() {
      // Rebuilt at every scrape: a deleted stack's series disappear with it.
      this.reset();
      for (const stack of stacks()) {
        const labels = { namespace: stack.metadata?.namespace ?? '', stack: stack.metadata?.name ?? '' };
        for (const c of readConditions(stack['status'])) this.set({ ...labels, condition: c.type }, c.status === 'True' ? 1 : 0);
      }
    },
  });
  return () => {
    registry.removeSingleMetric(stackConditionMetric);
  };
}
