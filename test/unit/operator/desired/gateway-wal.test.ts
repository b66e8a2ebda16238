// The gateway's write-ahead log volume (ADR 7): a claim per replica by
// default, with size and class from the spec; an emptyDir when chosen; the
// drain Job of a departed replica's claim.
import { expect } from 'chai';
import { desiredObjects, objectKey } from '../../../../operator/desired/desired-state.ts';
import type { Manifest, StatefulSet } from '../../../../operator/desired/manifest-types.ts';
import { drainArgs, walDrainJob } from '../../../../operator/desired/wal-drain-job.ts';
import { inputs, stackOf } from './stack-fixtures.ts';

const gateway = (spec: unknown): StatefulSet => {
  const found = desiredObjects(stackOf('demo', spec), inputs).find((o: Manifest) => objectKey(o) === 'StatefulSet/demo-gateway');
  if (found === undefined) throw new Error('no StatefulSet/demo-gateway');
  return found;
};

describe('gateway write-ahead log volume', () => {
  it("by default: a ReadWriteOnce claim template of 2Gi in the cluster's default class, retained on scale-down and deletion", () => {
    const s = gateway({});
    expect(s.spec?.volumeClaimTemplates?.map((t) => [t.metadata?.name, t.spec])).to.deep.equal([
      ['wal', { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } }],
    ]);
    expect(s.spec?.persistentVolumeClaimRetentionPolicy).to.deep.equal({ whenScaled: 'Retain', whenDeleted: 'Retain' });
    expect(s.spec?.template.spec?.volumes?.map((v) => v.name)).to.deep.equal(['api-keys']);
    expect(s.spec?.template.spec?.containers[0]?.volumeMounts).to.deep.include({ name: 'wal', mountPath: '/var/lib/tenantry/wal' });
    // The claim's files belong to the gateway's user; ownership is changed only when the volume's root does not match (fast mounts).
    expect(s.spec?.template.spec?.securityContext).to.deep.equal({ fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch' });
    // A 5 s stop delay, 30 s for in-flight bodies, 30 s for the log's INSERTs, a margin.
    expect(s.spec?.template.spec?.terminationGracePeriodSeconds).to.equal(75);
    expect(s.spec?.template.spec?.containers[0]?.lifecycle).to.deep.equal({ preStop: { sleep: { seconds: 5 } } });
  });

  it('size and storage class from spec.gateway.wal', () => {
    const t = gateway({ gateway: { wal: { size: '20Gi', storageClassName: 'fast-ssd' } } }).spec?.volumeClaimTemplates?.[0];
    expect(t?.spec).to.deep.equal({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '20Gi' } }, storageClassName: 'fast-ssd' });
  });

  it('EmptyDir: no claim template, an emptyDir of the given size instead', () => {
    const s = gateway({ gateway: { wal: { volume: 'EmptyDir', size: '3Gi' } } });
    expect(s.spec).not.to.have.property('volumeClaimTemplates');
    expect(s.spec).not.to.have.property('persistentVolumeClaimRetentionPolicy');
    expect(s.spec?.template.spec?.volumes).to.deep.include({ name: 'wal', emptyDir: { sizeLimit: '3Gi' } });
  });

  it('the drain Job mounts the claim, runs the drain entry point, and is owned by the stack (controller) and the claim', () => {
    const job = walDrainJob(stackOf('demo', {}), 2, 'wal-demo-gateway-2', 'uid-claim');
    expect(job.metadata?.name).to.equal('demo-gateway-drain-2');
    expect(job.metadata?.ownerReferences).to.deep.equal([
      { apiVersion: 'tenantry.dev/v1alpha1', kind: 'ObservabilityStack', name: 'demo', uid: 'uid-demo', controller: true, blockOwnerDeletion: true },
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: 'wal-demo-gateway-2', uid: 'uid-claim' },
    ]);
    const pod = job.spec?.template.spec;
    expect(pod?.volumes).to.deep.equal([{ name: 'wal', persistentVolumeClaim: { claimName: 'wal-demo-gateway-2' } }]);
    expect(pod?.containers[0]?.args).to.deep.equal(drainArgs);
    expect(pod?.containers[0]?.command, "the image's ENTRYPOINT runs it").to.equal(undefined);
    expect(pod?.containers[0]?.env).to.deep.include({ name: 'TENANTRY_WAL_DIR', value: '/var/lib/tenantry/wal' });
  });
});
