// The drain decision for gateway claims left behind by a scale-down
// (docs/adr/0007-gateway-wal-volumes.md). The StatefulSet retains the claim of
// a replica it scales away; a replica that stopped cleanly left it empty, one
// that could not reach ClickHouse (or was killed) left acknowledged rows on it.
// The operator does not tell the two apart: once the replica's pod is gone it
// starts a drain Job on every such claim (an empty log drains in a second),
// deletes the claim when the Job succeeded, and the Job with it. A replica
// scaled back up before that replays its own claim, so its drain Job is
// deleted instead. Level-triggered like the rest of the reconcile: every
// step is decided from the cached claims, Jobs and StatefulSet alone.
import type { Logger } from '../../src/log/logger.ts';
import { childNames } from '../desired/child-names.ts';
import { objectKey } from '../desired/desired-state.ts';
import { stackLabel } from '../desired/object-meta.ts';
import { walDrainJob } from '../desired/wal-drain-job.ts';
import { applyObject, deleteObject, getObject, recordEvent } from '../kube/cluster-objects.ts';
import type { ClusterCache } from '../kube/cluster-cache.ts';
import type { KubeObject, KubeRest } from '../kube/kube-rest.ts';
import { resourceTypes } from '../kube/resource-types.ts';
import type { ResourceType } from '../kube/resource-types.ts';
import type { Stack } from '../stack/stack-spec.ts';

export interface WalDrainDeps {
  readonly rest: KubeRest;
  readonly cache: ClusterCache;
  readonly log: Logger;
}

export interface WalDrainOutcome {
  /** "Job/name" of the drain Jobs that must survive pruning. */
  readonly keep: readonly string[];
  readonly errors: readonly string[];
  /** Reconcile again this soon: a departed replica's pod is still stopping, or a Job was just deleted. */
  readonly recheckMs: number | undefined;
}

/** How soon a claim whose pod is still stopping (draining on SIGTERM) is looked at again. */
export const podGoneRecheckMs = 5_000;

type Decision =
  | { readonly kind: 'start'; readonly ordinal: number; readonly claim: KubeObject }
  | { readonly kind: 'finish'; readonly job: KubeObject; readonly claim: KubeObject }
  | { readonly kind: 'cancel'; readonly job: KubeObject; readonly why: string }
  | { readonly kind: 'keep'; readonly job: KubeObject };

const ordinalOf = (name: string, prefix: string): number | undefined => {
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  return /^(0|[1-9]\d{0,5})$/.test(rest) ? Number(rest) : undefined;
};

const jobCondition = (job: KubeObject, type: string): boolean =>
  ((job['status'] as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? []).some(
    (c) => c.type === type && c.status === 'True',
  );

const succeeded = (job: KubeObject): boolean => ((job['status'] as { succeeded?: number } | undefined)?.succeeded ?? 0) > 0 || jobCondition(job, 'Complete');

/** The uid of the claim a drain Job drains (its PersistentVolumeClaim owner). */
const drainedClaimUid = (job: KubeObject): string | undefined =>
  job.metadata?.ownerReferences?.find((r) => r.kind === resourceTypes.persistentVolumeClaim.kind)?.uid;

/** What to do about each departed replica's claim and each drain Job, from the cache alone (the pod check comes later). */
export function drainDecisions(stack: Stack, cache: ClusterCache): Decision[] {
  const names = childNames(stack.ref.name);
  const ns = stack.ref.namespace;
  const statefulSet = cache.of(resourceTypes.statefulSet).get(names.gateway, ns);
  // No StatefulSet (not yet created, or being replaced): no replica count to compare with; claims wait.
  if (statefulSet === undefined) return [];
  const replicas = (statefulSet['spec'] as { replicas?: number } | undefined)?.replicas ?? 1;
  const ofStack = (o: KubeObject): boolean => o.metadata?.labels?.[stackLabel] === stack.ref.name && o.metadata.deletionTimestamp === undefined;
  const claimPrefix = names.walClaim(0).slice(0, -1);
  const claims = cache
    .of(resourceTypes.persistentVolumeClaim)
    .list(ns)
    .filter(ofStack)
    .map((claim) => ({ claim, ordinal: ordinalOf(claim.metadata?.name ?? '', claimPrefix) }))
    .filter((c): c is { claim: KubeObject; ordinal: number } => c.ordinal !== undefined);
  const jobPrefix = names.walDrain(0).slice(0, -1);
  const jobs = cache
    .of(resourceTypes.job)
    .list(ns)
    .filter(ofStack)
    .map((job) => ({ job, ordinal: ordinalOf(job.metadata?.name ?? '', jobPrefix) }))
    .filter((j): j is { job: KubeObject; ordinal: number } => j.ordinal !== undefined);

  const out: Decision[] = [];
  for (const { job, ordinal } of jobs) {
    const claim = claims.find((c) => c.claim.metadata?.uid === drainedClaimUid(job))?.claim;
    if (claim === undefined) out.push({ kind: 'cancel', job, why: 'its claim is gone' });
    else if (ordinal < replicas) out.push({ kind: 'cancel', job, why: `replica ${ordinal} is back and replays its own log` });
    else if (succeeded(job)) out.push({ kind: 'finish', job, claim });
    // Failed after its retries (ClickHouse unreachable for long): a new Job starts over.
    else if (jobCondition(job, 'Failed')) out.push({ kind: 'cancel', job, why: 'it failed; a new one is started' });
    else out.push({ kind: 'keep', job });
  }
  for (const { claim, ordinal } of claims) {
    if (ordinal < replicas) continue;
    // One Job per ordinal: another claim's Job of the same name is being cancelled first.
    if (jobs.some((j) => j.ordinal === ordinal)) continue;
    out.push({ kind: 'start', ordinal, claim });
  }
  return out;
}

async function remove(deps: WalDrainDeps, type: ResourceType, o: KubeObject): Promise<string | undefined> {
  const deleted = await deleteObject(deps.rest, type, o.metadata?.namespace ?? '', o.metadata?.name ?? '', o.metadata?.uid);
  if (!deleted.ok) return `deleting ${type.kind}/${o.metadata?.name ?? ''}: ${deleted.error.message}`;
  deps.cache.of(type).delete(o);
  return undefined;
}

/** Starts, finishes and cancels drain Jobs for a stack's departed gateway replicas. */
export async function drainDepartedReplicas(deps: WalDrainDeps, stack: Stack, about: KubeObject): Promise<WalDrainOutcome> {
  if (stack.spec.gateway.wal.volume !== 'PersistentVolumeClaim') return { keep: [], errors: [], recheckMs: undefined };
  const keep: string[] = [];
  const errors: string[] = [];
  let recheckMs: number | undefined;
  const log = deps.log.child({ task: 'wal-drain' });
  const gateway = childNames(stack.ref.name).gateway;
  for (const d of drainDecisions(stack, deps.cache)) {
    if (d.kind === 'keep') {
      keep.push(objectKey({ ...d.job, kind: 'Job' }));
      continue;
    }
    if (d.kind === 'cancel') {
      const failure = await remove(deps, resourceTypes.job, d.job);
      if (failure !== undefined) errors.push(failure);
      else {
        log.info('deleted drain Job', { job: d.job.metadata?.name, why: d.why });
        recheckMs = 1_000;
      }
      continue;
    }
    if (d.kind === 'finish') {
      // The claim first: were the Job deleted first and the claim's deletion to fail, the next reconcile would drain it again.
      const claimFailure = await remove(deps, resourceTypes.persistentVolumeClaim, d.claim);
      if (claimFailure !== undefined) {
        errors.push(claimFailure);
        keep.push(objectKey({ ...d.job, kind: 'Job' }));
        continue;
      }
      const jobFailure = await remove(deps, resourceTypes.job, d.job);
      if (jobFailure !== undefined) errors.push(jobFailure);
      log.info("drained a departed gateway replica's write-ahead log; deleted its claim", { claim: d.claim.metadata?.name });
      void recordEvent(deps.rest, about, 'Normal', 'WalDrained', `drained and deleted claim ${d.claim.metadata?.name ?? ''}`);
      continue;
    }
    // Start: only once the replica's pod is gone, since a stopping pod still drains (and writes) the same log.
    const pod = await getObject(deps.rest, resourceTypes.pod, stack.ref.namespace, `${gateway}-${d.ordinal}`);
    if (!pod.ok) {
      errors.push(`reading pod ${gateway}-${d.ordinal}: ${pod.error.message}`);
      continue;
    }
    if (pod.value !== undefined) {
      recheckMs = Math.min(recheckMs ?? podGoneRecheckMs, podGoneRecheckMs);
      continue;
    }
    const job = walDrainJob(stack, d.ordinal, d.claim.metadata?.name ?? '', d.claim.metadata?.uid ?? '');
    const applied = await applyObject(deps.rest, job);
    if (!applied.ok) {
      errors.push(`applying ${objectKey(job)}: ${applied.error.message}`);
      continue;
    }
    deps.cache.of(resourceTypes.job).set({ ...applied.value.object, apiVersion: job.apiVersion, kind: job.kind });
    keep.push(objectKey(job));
    log.info("started a drain Job for a departed gateway replica's write-ahead log", { claim: d.claim.metadata?.name, job: job.metadata?.name });
    void recordEvent(deps.rest, about, 'Normal', 'WalDrainStarted', `started ${objectKey(job)} for claim ${d.claim.metadata?.name ?? ''}`);
  }
  return { keep, errors, recheckMs };
}
