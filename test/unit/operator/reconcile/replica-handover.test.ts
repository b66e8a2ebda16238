import { expect } from 'chai';
import type { Manifest } from '../../../../operator/desired/manifest-types.ts';
import type { KubeObject } from '../../../../operator/kube/kube-rest.ts';
import { replicaHandover } from '../../../../operator/reconcile/replica-handover.ts';

const desired = (replicas?: number): Manifest =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'demo-gateway', namespace: 'obs' },
    spec: replicas === undefined ? {} : { replicas },
  }) as Manifest;
const live = (replicas: number, manager: string, operation = 'Apply'): KubeObject =>
  ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'demo-gateway', namespace: 'obs', managedFields: [{ manager, operation, fieldsV1: { 'f:spec': { 'f:replicas': {} } } }] },
    spec: { replicas },
  }) as unknown as KubeObject;

describe('replica handover to the HPA', () => {
  it('applies the live count under the handover manager when the operator owns replicas and stops sending them', () => {
    expect(replicaHandover(desired(), live(4, 'tenantry-operator'))).to.deep.equal({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'demo-gateway', namespace: 'obs' },
      spec: { replicas: 4 },
    });
    // The gateways run as a StatefulSet: its count is handed over the same way.
    expect(replicaHandover({ ...desired(), kind: 'StatefulSet' }, { ...live(4, 'tenantry-operator'), kind: 'StatefulSet' })).to.deep.equal({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'demo-gateway', namespace: 'obs' },
      spec: { replicas: 4 },
    });
  });

  it('does nothing when the operator still sends replicas, no longer owns them, or the object is new or another kind', () => {
    expect(replicaHandover(desired(3), live(4, 'tenantry-operator'))).to.equal(undefined);
    expect(replicaHandover(desired(), live(7, 'kube-controller-manager', 'Update'))).to.equal(undefined);
    expect(replicaHandover(desired(), live(4, 'tenantry-hpa-handover'))).to.equal(undefined);
    expect(replicaHandover(desired(), undefined)).to.equal(undefined);
    expect(replicaHandover({ ...desired(), kind: 'Service' }, live(4, 'tenantry-operator'))).to.equal(undefined);
  });
});
