// Upgrading from gateways run as a Deployment: the old Deployment survives
// pruning exactly while the new StatefulSet is not fully ready.
import { expect } from 'chai';
import { ClusterCache } from '../../../../operator/kube/cluster-cache.ts';
import { resourceTypes } from '../../../../operator/kube/resource-types.ts';
import { legacyGatewayKept } from '../../../../operator/reconcile/legacy-gateway.ts';
import { stackOf } from '../desired/stack-fixtures.ts';

const meta = { name: 'demo-gateway', namespace: 'obs', generation: 2 };

function cache(deployment: boolean, statefulSet?: { replicas: number; ready: number; observed: number }): ClusterCache {
  const c = new ClusterCache();
  if (deployment) c.of(resourceTypes.deployment).set({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta });
  if (statefulSet !== undefined) {
    c.of(resourceTypes.statefulSet).set({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: meta,
      spec: { replicas: statefulSet.replicas },
      status: { readyReplicas: statefulSet.ready, observedGeneration: statefulSet.observed },
    });
  }
  return c;
}

describe('legacy gateway Deployment on upgrade', () => {
  const stack = stackOf('demo', {});
  it('is kept while the StatefulSet is missing, short of ready replicas, or not yet observed at its generation', () => {
    expect(legacyGatewayKept(cache(true), stack)).to.deep.equal(['Deployment/demo-gateway']);
    expect(legacyGatewayKept(cache(true, { replicas: 3, ready: 2, observed: 2 }), stack)).to.deep.equal(['Deployment/demo-gateway']);
    expect(legacyGatewayKept(cache(true, { replicas: 3, ready: 3, observed: 1 }), stack)).to.deep.equal(['Deployment/demo-gateway']);
  });

  it('is let go (pruned) once every replica is ready, and nothing is kept when there is no old Deployment', () => {
    expect(legacyGatewayKept(cache(true, { replicas: 3, ready: 3, observed: 2 }), stack)).to.deep.equal([]);
    expect(legacyGatewayKept(cache(false), stack)).to.deep.equal([]);
  });
});
