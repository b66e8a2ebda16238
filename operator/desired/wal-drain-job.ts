// The Job that drains a scaled-away gateway replica's write-ahead log: it
// mounts the replica's claim and inserts the segments left on it into
// ClickHouse (`tenantry drain`, gateway/drain/drain-target.ts), each exactly once (a segment's
// INSERT carries its deduplication token, and a segment is deleted only after
// its INSERT succeeded). The operator deletes the claim once the Job succeeded
// (docs/adr/0007-gateway-wal-volumes.md, reconcile/wal-drain.ts).
import type { Job } from './manifest-types.ts';
import type { Stack } from '../stack/stack-spec.ts';
import { childNames } from './child-names.ts';
import { childLabels, childMeta } from './object-meta.ts';
import { storageEnv, walVolumeName } from './tenantry-workloads.ts';

/**
 * The arguments of the image's ENTRYPOINT (`tenantry`) that drain a log: target
 * `drain`, started as every other target is, so the Job depends on no path
 * inside the image.
 */
export const drainArgs = ['drain'];

const drainMountPath = '/var/lib/tenantry/wal';

/**
 * Attempts before the Job fails: Kubernetes backs off exponentially (up to six
 * minutes between pods), so about an hour of ClickHouse being unreachable;
 * a failed Job is deleted and started again by the operator.
 */
export const drainBackoffLimit = 12;

/** The drain Job of gateway replica `ordinal`, mounting its claim `claim` (uid `claimUid`). */
export function walDrainJob(stack: Stack, ordinal: number, claim: string, claimUid: string): Job {
  const meta = childMeta(stack.ref, childNames(stack.ref.name).walDrain(ordinal), 'gateway-drain');
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      ...meta,
      // The stack controls the Job; the claim owns it too, so a Job never outlives the volume it drains
      // and a newer claim of the same name (another volume) is told apart by its uid.
      ownerReferences: [...(meta.ownerReferences ?? []), { apiVersion: 'v1', kind: 'PersistentVolumeClaim', name: claim, uid: claimUid }],
    },
    spec: {
      backoffLimit: drainBackoffLimit,
      template: {
        metadata: { labels: childLabels(stack.ref, 'gateway-drain') },
        spec: {
          restartPolicy: 'OnFailure',
          // The segments belong to user 1000 (the gateway that wrote them).
          securityContext: { fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch' },
          containers: [
            {
              name: 'drain',
              image: stack.spec.image,
              imagePullPolicy: stack.spec.imagePullPolicy,
              args: drainArgs,
              env: [{ name: 'TENANTRY_LOG_LEVEL', value: 'info' }, ...storageEnv(stack), { name: 'TENANTRY_WAL_DIR', value: drainMountPath }],
              volumeMounts: [{ name: walVolumeName, mountPath: drainMountPath }],
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 1000,
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
            },
          ],
          volumes: [{ name: walVolumeName, persistentVolumeClaim: { claimName: claim } }],
        },
      },
    },
  };
}
