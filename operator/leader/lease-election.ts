// Leader election with a coordination.k8s.io/v1 Lease, like client-go's: the
// holder renews every retry period; a candidate takes the Lease over when it
// has not been renewed for the lease duration. Writes carry the Lease's
// resourceVersion, so two candidates cannot both win the same round.
import type { Logger } from '../../src/log/logger.ts';
import { createObject, getObject } from '../kube/cluster-objects.ts';
import type { KubeObject, KubeRest } from '../kube/kube-rest.ts';
import { objectPath, resourceTypes } from '../kube/resource-types.ts';

export interface LeaseOptions {
  readonly rest: KubeRest;
  readonly log: Logger;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly leaseDurationSeconds: number;
  readonly retryPeriodMs: number;
  readonly onStartedLeading: () => void;
  readonly onStoppedLeading: () => void;
}

export interface RunningElection {
  isLeader(): boolean;
  /** Stops campaigning and, if leading, releases the Lease for a fast handover. */
  stop(): Promise<void>;
}

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export function startLeaseElection(o: LeaseOptions): RunningElection {
  let leader = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const path = objectPath(resourceTypes.lease, o.namespace, o.name);

  const setLeader = (value: boolean): void => {
    if (value === leader) return;
    leader = value;
    o.log.info(value ? 'became leader' : 'lost leadership', { lease: `${o.namespace}/${o.name}`, identity: o.identity });
    if (value) o.onStartedLeading();
    else o.onStoppedLeading();
  };

  const write = async (lease: KubeObject, spec: LeaseSpec): Promise<boolean> => {
    const r = await o.rest.call<KubeObject>({ method: 'PUT', path, body: { ...lease, spec } });
    return r.ok;
  };

  const round = async (): Promise<void> => {
    const now = new Date();
    const got = await getObject(o.rest, resourceTypes.lease, o.namespace, o.name);
    if (!got.ok) {
      o.log.warn('cannot read the leader Lease', { error: got.error.message });
      // A leader that cannot renew must assume it lost the Lease once it would have expired; stepping down at once is safer.
      setLeader(false);
      return;
    }
    const fresh: LeaseSpec = {
      holderIdentity: o.identity,
      leaseDurationSeconds: o.leaseDurationSeconds,
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    if (got.value === undefined) {
      const created = await createObject(o.rest, resourceTypes.lease, o.namespace, {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: o.name, namespace: o.namespace },
        spec: fresh,
      });
      setLeader(created.ok);
      return;
    }
    const spec = (got.value['spec'] ?? {}) as LeaseSpec;
    if (spec.holderIdentity === o.identity) {
      setLeader(await write(got.value, { ...spec, renewTime: microTime(now), leaseDurationSeconds: o.leaseDurationSeconds }));
      return;
    }
    const renewed = Date.parse(spec.renewTime ?? '') || 0;
    const expired =
      spec.holderIdentity === undefined || spec.holderIdentity === '' || renewed + (spec.leaseDurationSeconds ?? o.leaseDurationSeconds) * 1000 < now.getTime();
    if (!expired) {
      setLeader(false);
      return;
    }
    setLeader(await write(got.value, { ...fresh, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }));
  };

  const loop = (): void => {
    if (stopped) return;
    current = round().catch((error: unknown) => {
      o.log.error('leader election round failed', { error });
    });
    void current.then(() => {
      if (!stopped) timer = setTimeout(loop, o.retryPeriodMs);
    });
  };
  loop();

  return {
    isLeader: () => leader,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await current;
      if (!leader) return;
      const got = await getObject(o.rest, resourceTypes.lease, o.namespace, o.name);
      if (got.ok && got.value !== undefined) {
        const spec = (got.value['spec'] ?? {}) as LeaseSpec;
        if (spec.holderIdentity === o.identity) await write(got.value, { ...spec, holderIdentity: '', leaseDurationSeconds: 1 });
      }
      setLeader(false);
    },
  };
}
