import { expect } from 'chai';
import type { KubeObject } from '../../../../operator/kube/kube-rest.ts';
import { isRelevantChange } from '../../../../operator/reconcile/relevant-change.ts';

const deployment = (meta: Partial<NonNullable<KubeObject['metadata']>>, status: Record<string, unknown>, replicas = 2): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'demo-api', namespace: 'obs', uid: 'u1', generation: 1, resourceVersion: '10', ...meta },
  spec: { replicas },
  status,
});

describe('operator relevant changes', () => {
  it('a new object, a deletion and a spec change are relevant', () => {
    const d = deployment({}, {});
    expect(isRelevantChange('ADDED', d, undefined)).to.equal(true);
    expect(isRelevantChange('LISTED', d, undefined)).to.equal(true);
    expect(isRelevantChange('DELETED', d, d)).to.equal(true);
    expect(isRelevantChange('MODIFIED', deployment({ generation: 2, resourceVersion: '11' }, {}, 7), d)).to.equal(true);
  });

  it('a child status change matters only in the fields the stack status reads', () => {
    const before = deployment({}, { readyReplicas: 1, availableReplicas: 1, updatedReplicas: 2, observedGeneration: 1 });
    const ticked = deployment(
      { resourceVersion: '11' },
      { readyReplicas: 1, availableReplicas: 2, updatedReplicas: 2, observedGeneration: 1, conditions: [{ type: 'Available', status: 'True' }] },
    );
    const ready = deployment({ resourceVersion: '12' }, { readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2, observedGeneration: 1 });
    expect(isRelevantChange('MODIFIED', ticked, before)).to.equal(false);
    expect(isRelevantChange('MODIFIED', ready, ticked)).to.equal(true);
    // A StatefulSet's pod count too: a scaled-away gateway's pod being gone starts the drain of its claim.
    const sts = (status: Record<string, unknown>): KubeObject => ({ ...deployment({}, status), kind: 'StatefulSet' });
    expect(isRelevantChange('MODIFIED', sts({ replicas: 2, readyReplicas: 2 }), sts({ replicas: 3, readyReplicas: 2 }))).to.equal(true);
    expect(isRelevantChange('MODIFIED', deployment({}, { replicas: 2, readyReplicas: 2 }), deployment({}, { replicas: 3, readyReplicas: 2 }))).to.equal(false);
  });

  it('a Service status or a managedFields-only change is not relevant; a label change is (drift)', () => {
    const svc = (rv: string, extra: Record<string, unknown>, labels: Record<string, string> = { a: 'b' }): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's', namespace: 'obs', uid: 'u', resourceVersion: rv, labels, ...extra },
      spec: { type: 'ClusterIP' },
      status: { loadBalancer: {} },
    });
    expect(isRelevantChange('MODIFIED', { ...svc('2', {}), status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } } }, svc('1', {}))).to.equal(false);
    expect(isRelevantChange('MODIFIED', svc('2', { managedFields: [{ manager: 'x' }] }), svc('1', {}))).to.equal(false);
    expect(isRelevantChange('MODIFIED', svc('2', {}, { a: 'changed' }), svc('1', {}))).to.equal(true);
  });

  it('stacks and Tenants change only with their generation (status writes, ours included, are ignored)', () => {
    const stack = (generation: number, status: unknown): KubeObject => ({
      apiVersion: 'tenantry.dev/v1alpha1',
      kind: 'ObservabilityStack',
      metadata: { name: 'demo', namespace: 'obs', uid: 's', generation, resourceVersion: String(generation * 10) },
      spec: {},
      status,
    });
    expect(isRelevantChange('MODIFIED', stack(1, { tenantCount: 3 }), stack(1, {}))).to.equal(false);
    expect(isRelevantChange('MODIFIED', stack(2, {}), stack(1, {}))).to.equal(true);
  });

  it('a Secret data change is relevant (it feeds the config checksum and holds the admin key)', () => {
    const secret = (data: Record<string, string>): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'keys', namespace: 'obs', uid: 'k' },
      data,
    });
    expect(isRelevantChange('MODIFIED', secret({ 'admin-key': 'Yg==' }), secret({ 'admin-key': 'YQ==' }))).to.equal(true);
    expect(isRelevantChange('MODIFIED', secret({ 'admin-key': 'YQ==' }), secret({ 'admin-key': 'YQ==' }))).to.equal(false);
  });
});
