// The drain decision for departed gateway replicas' claims (ADR 7), from a
// filled cache: which claims get a drain Job, which Jobs finish or go.
import { expect } from 'chai';
import { ClusterCache } from '../../../../operator/kube/cluster-cache.ts';
import type { KubeObject } from '../../../../operator/kube/kube-rest.ts';
import { resourceTypes } from '../../../../operator/kube/resource-types.ts';
import { drainDecisions } from '../../../../operator/reconcile/wal-drain.ts';
import { stackOf } from '../desired/stack-fixtures.ts';

const labels = { 'tenantry.dev/stack': 'demo' };
const claim = (ordinal: number, uid = `claim-${ordinal}`): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: `wal-demo-gateway-${ordinal}`, namespace: 'obs', uid, labels },
});
const job = (ordinal: number, claimUid: string, status: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  status,
  metadata: {
    name: `demo-gateway-drain-${ordinal}`,
    namespace: 'obs',
    uid: `job-${ordinal}`,
    labels,
    ownerReferences: [{ apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: `wal-demo-gateway-${ordinal}`, uid: claimUid }],
  },
});

function cacheWith(replicas: number | undefined, objects: KubeObject[]): ClusterCache {
  const cache = new ClusterCache();
  if (replicas !== undefined)
    cache
      .of(resourceTypes.statefulSet)
      .set({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'demo-gateway', namespace: 'obs' }, spec: { replicas } });
  for (const o of objects) cache.of(o.kind === 'Job' ? resourceTypes.job : resourceTypes.persistentVolumeClaim).set(o);
  return cache;
}

const summary = (replicas: number | undefined, objects: KubeObject[]): string[] =>
  drainDecisions(stackOf('demo', {}), cacheWith(replicas, objects)).map(
    (d) => `${d.kind} ${d.kind === 'start' ? String(d.ordinal) : (d.job.metadata?.name ?? '')}`,
  );

describe('gateway write-ahead log drain decision', () => {
  it('starts a drain for each claim at an ordinal at or above the replica count, and none below', () => {
    expect(summary(2, [claim(0), claim(1), claim(2), claim(3)])).to.deep.equal(['start 2', 'start 3']);
    expect(summary(4, [claim(0), claim(1), claim(2), claim(3)])).to.deep.equal([]);
  });

  it('nothing without the StatefulSet (its count is unknown), and claims of other stacks or names are not its own', () => {
    expect(summary(undefined, [claim(5)])).to.deep.equal([]);
    const other = { ...claim(5), metadata: { ...claim(5).metadata, labels: { 'tenantry.dev/stack': 'other' } } };
    const otherName = { ...claim(6), metadata: { ...claim(6).metadata, name: 'wal-demo-gateway-x6' } };
    expect(summary(1, [other, otherName])).to.deep.equal([]);
  });

  it('keeps a running Job, finishes a succeeded one, starts over after a failed one', () => {
    expect(summary(1, [claim(1), job(1, 'claim-1')])).to.deep.equal(['keep demo-gateway-drain-1']);
    expect(summary(1, [claim(1), job(1, 'claim-1', { succeeded: 1 })])).to.deep.equal(['finish demo-gateway-drain-1']);
    expect(summary(1, [claim(1), job(1, 'claim-1', { conditions: [{ type: 'Failed', status: 'True' }] })])).to.deep.equal(['cancel demo-gateway-drain-1']);
  });

  it('cancels the Job of a replica scaled back up, and of a claim that is gone or was replaced', () => {
    expect(summary(2, [claim(1), job(1, 'claim-1')])).to.deep.equal(['cancel demo-gateway-drain-1']);
    expect(summary(1, [job(1, 'claim-1')])).to.deep.equal(['cancel demo-gateway-drain-1']);
    // A new claim of the same name is another volume: the old Job goes first, the new claim gets its own Job after it.
    expect(summary(1, [claim(1, 'claim-1b'), job(1, 'claim-1')])).to.deep.equal(['cancel demo-gateway-drain-1']);
  });
});
