// Reconciles one ObservabilityStack: read it, build its desired children,
// server-side apply them, prune children no longer desired, observe the
// workloads from the apply answers, and write status. Level-triggered: it
// always starts from the current state, so any event may simply re-run it.
// Reads come from the watch-fed cache; the API server only sees writes.
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../../src/log/logger.ts';
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';
import { secretKeys } from '../desired/credentials-secret.ts';
import type { GeneratedCredentials } from '../desired/credentials-secret.ts';
import { desiredObjects, objectKey } from '../desired/desired-state.ts';
import type { Manifest } from '../desired/manifest-types.ts';
import { managedByValue, stackLabel } from '../desired/object-meta.ts';
import { applyObject, deleteObject, patchStatus, recordEvent } from '../kube/cluster-objects.ts';
import type { ClusterCache } from '../kube/cluster-cache.ts';
import type { KubeObject, KubeRest } from '../kube/kube-rest.ts';
import { ownedTypes, resourceTypes, typeOfKind } from '../kube/resource-types.ts';
import { stackFromObject } from '../stack/stack-spec.ts';
import type { Stack } from '../stack/stack-spec.ts';
import { readConditions } from '../status/conditions.ts';
import { stackStatus } from '../status/stack-status.ts';
import type { JobState, WorkloadState } from '../status/stack-status.ts';
import type { Handled, ObjectKey } from './key-queue.ts';
import { legacyGatewayKept } from './legacy-gateway.ts';
import { handoverManager, replicaHandover } from './replica-handover.ts';
import { drainDepartedReplicas } from './wal-drain.ts';

export interface StackReconcilerDeps {
  readonly rest: KubeRest;
  readonly cache: ClusterCache;
  /** What the last apply of each child sent and got back ("namespace/Kind/name"), kept across reconciles. */
  readonly lastApplied: Map<string, { readonly desired: string; readonly resourceVersion: string }>;
  readonly log: Logger;
  readonly now: () => Date;
  /** Called after each successful reconcile of a stack that wants tenant mirroring. */
  readonly onReconciled?: (stack: Stack) => void;
}

/** A full resync even without events, so lost events cannot leave a stack behind for long. */
const resyncMs = 5 * 60_000;

const newSecret = (): string => randomBytes(32).toString('base64url');

function decode(secret: KubeObject | undefined, key: string): string | undefined {
  const data = (secret?.['data'] ?? {}) as Record<string, string>;
  const value = data[key];
  return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
}

/** Keeps stored generated values; draws new ones only where none is stored. */
function credentialsFor(deps: StackReconcilerDeps, stack: Stack): GeneratedCredentials {
  const stored = deps.cache.secrets.get(`${stack.ref.name}-credentials`, stack.ref.namespace);
  const keep = (key: Exclude<keyof GeneratedCredentials, 'adminKey'>): string => decode(stored, secretKeys[key]) ?? newSecret();
  return {
    adminKey: decode(stored, secretKeys.adminKey) ?? newSecret(),
    clickhousePassword: keep('clickhousePassword'),
    clickhouseDdlPassword: keep('clickhouseDdlPassword'),
    interserverPassword: keep('interserverPassword'),
    clusterSecret: keep('clusterSecret'),
    keeperPassword: keep('keeperPassword'),
  };
}

/** The names of the Secrets a stack's spec names (API keys, external ClickHouse, the /metrics key), each once. */
export function referencedSecretNames(stack: Stack): string[] {
  const names = [
    stack.spec.apiKeys.secretName,
    stack.spec.clickhouse.mode === 'external' ? stack.spec.clickhouse.external.secretRef.name : undefined,
    stack.spec.metrics.keySecretRef?.name,
  ].filter((n): n is string => n !== undefined);
  return [...new Set(names)];
}

/** Checksum of the Secrets the user names (API keys, external ClickHouse); a missing one is an error. */
function referencedSecretsChecksum(deps: StackReconcilerDeps, stack: Stack): Result<string, string> {
  const names = referencedSecretNames(stack);
  const hash = createHash('sha256');
  for (const name of names) {
    const secret = deps.cache.secrets.get(name, stack.ref.namespace);
    if (secret === undefined) return fail(`Secret ${name} named by the stack does not exist`);
    hash.update(name).update(JSON.stringify(secret['data'] ?? {}));
  }
  return ok(names.length === 0 ? '' : hash.digest('hex'));
}

function workloadState(applied: KubeObject): WorkloadState {
  const spec = (applied['spec'] ?? {}) as { replicas?: number };
  const status = (applied['status'] ?? {}) as { readyReplicas?: number; updatedReplicas?: number; observedGeneration?: number };
  const current = (status.observedGeneration ?? 0) >= (applied.metadata?.generation ?? 0);
  return { key: objectKey(applied), desired: spec.replicas ?? 1, ready: status.readyReplicas ?? 0, updated: current ? (status.updatedReplicas ?? 0) : 0 };
}

/**
 * A failed migrate Job is deleted this long after it failed, and the next
 * reconcile creates it again under the same name (its pod template cannot
 * change): a migrate run that gave up waiting for the cluster, or met a
 * transient error, is retried without anyone deleting it by hand. The pause
 * keeps the failure visible in status (Degraded, MigrationFailed) for a while.
 */
export const failedJobRetryMs = 60_000;

/** When the Job's Failed condition became true, or undefined. */
function failedAt(applied: KubeObject | undefined): number | undefined {
  const conditions = ((applied?.['status'] ?? {}) as { conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }> }).conditions;
  const failed = conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
  return failed === undefined ? undefined : Date.parse(failed.lastTransitionTime ?? '') || 0;
}

function jobState(name: string, applied: KubeObject | undefined): JobState {
  const status = (applied?.['status'] ?? {}) as { succeeded?: number; conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
  const failed = status.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
  return {
    name,
    exists: applied !== undefined,
    succeeded: (status.succeeded ?? 0) > 0,
    failed: failed !== undefined,
    failureMessage: failed === undefined ? undefined : [failed.reason, failed.message].filter(Boolean).join(': '),
  };
}

/**
 * Server-side applies a child, unless the cached copy is exactly what the last
 * apply of the same desired object left (same resourceVersion): then nothing
 * can differ, and the cached copy is the live state. Anything else — a change
 * by someone else, a deleted child, a new desired object — is applied.
 */
async function applyUnlessCurrent(deps: StackReconcilerDeps, child: Manifest, log: Logger, about: KubeObject): Promise<Result<KubeObject, string>> {
  const type = typeOfKind(child.apiVersion, child.kind);
  if (type === undefined) throw new Error(`bug: no resource type for ${child.apiVersion} ${child.kind}`);
  const key = objectKey(child);
  const id = `${child.metadata?.namespace ?? ''}/${key}`;
  const desired = JSON.stringify(child);
  const cached = deps.cache.of(type).get(child.metadata?.name ?? '', child.metadata?.namespace);
  const last = deps.lastApplied.get(id);
  if (cached !== undefined && last?.desired === desired && last.resourceVersion === cached.metadata?.resourceVersion) return ok(cached);
  const handover = replicaHandover(child, cached);
  if (handover !== undefined) {
    const held = await applyObject(deps.rest, handover, handoverManager);
    if (!held.ok) return fail(held.error.message);
  }
  const applied = await applyObject(deps.rest, child);
  if (!applied.ok) return fail(applied.error.message);
  const live = { ...applied.value.object, apiVersion: child.apiVersion, kind: child.kind };
  deps.cache.of(type).set(live);
  deps.lastApplied.set(id, { desired, resourceVersion: live.metadata?.resourceVersion ?? '' });
  // Server-side apply answers 201 when it created the object.
  if (applied.value.created) {
    log.info('created child', { child: key });
    void recordEvent(deps.rest, about, 'Normal', 'Created', `created ${key}`);
  }
  return ok(live);
}

/** A child of this stack by its labels (what the old label-selected LIST returned). */
function labelledChild(o: KubeObject, stack: string): boolean {
  const labels = o.metadata?.labels ?? {};
  return labels['app.kubernetes.io/managed-by'] === managedByValue && labels[stackLabel] === stack;
}

async function prune(deps: StackReconcilerDeps, stack: Stack, keep: ReadonlySet<string>, log: Logger, about: KubeObject): Promise<string[]> {
  const errors: string[] = [];
  for (const type of ownedTypes) {
    for (const o of deps.cache
      .of(type)
      .list(stack.ref.namespace)
      .filter((c) => labelledChild(c, stack.ref.name))) {
      const key = `${type.kind}/${o.metadata?.name ?? ''}`;
      const ownedHere = o.metadata?.ownerReferences?.some((r) => r.controller === true && r.uid === stack.ref.uid) === true;
      if (keep.has(key) || !ownedHere) continue;
      const deleted = await deleteObject(deps.rest, type, stack.ref.namespace, o.metadata?.name ?? '', o.metadata?.uid);
      if (!deleted.ok) {
        errors.push(`deleting ${key}: ${deleted.error.message}`);
        continue;
      }
      deps.cache.of(type).delete(o);
      deps.lastApplied.delete(`${stack.ref.namespace}/${key}`);
      log.info('pruned child no longer desired', { child: key });
      void recordEvent(deps.rest, about, 'Normal', 'Pruned', `deleted ${key}, no longer desired`);
    }
  }
  return errors;
}

function countTenants(deps: StackReconcilerDeps, stack: Stack): number {
  return deps.cache.tenants
    .list(stack.ref.namespace)
    .filter((t) => (t['spec'] as { stackRef?: { name?: string } } | undefined)?.stackRef?.name === stack.ref.name).length;
}

/** Reconciles the stack `namespace/name`. */
export async function reconcileStack(deps: StackReconcilerDeps, { namespace, name }: ObjectKey): Promise<Result<Handled, string>> {
  const log = deps.log.child({ stack: `${namespace}/${name}` });
  const object = deps.cache.stacks.get(name, namespace);
  // Deleted: the garbage collector removes the children through their owner references.
  if (object === undefined || object.metadata?.deletionTimestamp !== undefined) return ok({});
  const about: KubeObject = { ...object, apiVersion: resourceTypes.stack.apiVersion, kind: resourceTypes.stack.kind };
  const stack = stackFromObject(object);

  const errors: string[] = [];
  const workloads: WorkloadState[] = [];
  let migration: JobState = { name: '', exists: false, succeeded: false, failed: false, failureMessage: undefined };
  let failedJob: { object: KubeObject; since: number } | undefined;
  let recheckMs: number | undefined;
  const credentials = credentialsFor(deps, stack);
  const referenced = referencedSecretsChecksum(deps, stack);
  if (!referenced.ok) errors.push(referenced.error);
  if (referenced.ok) {
    const desired = desiredObjects(stack, { credentials, referencedSecretsChecksum: referenced.value });
    for (const child of desired) {
      const key = objectKey(child);
      const live = await applyUnlessCurrent(deps, child, log, about);
      if (!live.ok) {
        errors.push(`applying ${key}: ${live.error}`);
        if (child.kind === 'Job') migration = jobState(child.metadata?.name ?? '', undefined);
        continue;
      }
      if (child.kind === 'Deployment' || child.kind === 'StatefulSet') workloads.push(workloadState({ ...live.value, kind: child.kind }));
      if (child.kind === 'Job') {
        migration = jobState(child.metadata?.name ?? '', live.value);
        failedJob = failedAt(live.value) === undefined ? undefined : { object: live.value, since: failedAt(live.value) ?? 0 };
      }
    }
    const drain = errors.length === 0 ? await drainDepartedReplicas(deps, stack, about) : undefined;
    if (drain !== undefined) {
      errors.push(...drain.errors);
      recheckMs = drain.recheckMs;
    }
    const keep = new Set([...desired.map(objectKey), ...(drain?.keep ?? []), ...legacyGatewayKept(deps.cache, stack)]);
    if (errors.length === 0) errors.push(...(await prune(deps, stack, keep, log, about)));
  }

  const applyError = errors.length === 0 ? undefined : errors.join('; ');
  const previous = readConditions(object['status']);
  const status = stackStatus(stack, { workloads, migration, applyError, tenantCount: countTenants(deps, stack) }, previous, deps.now());
  if (JSON.stringify(status) !== JSON.stringify(object['status'] ?? {})) {
    const patched = await patchStatus(deps.rest, resourceTypes.stack, namespace, name, status);
    if (patched.ok) deps.cache.stacks.set({ ...patched.value, apiVersion: resourceTypes.stack.apiVersion, kind: resourceTypes.stack.kind });
    else if (patched.error.status !== 404) errors.push(`writing status: ${patched.error.message}`);
    const wasReady = previous.find((c) => c.type === 'Ready');
    const ready = status.conditions.find((c) => c.type === 'Ready');
    if (ready !== undefined && (wasReady?.status !== ready.status || wasReady.reason !== ready.reason)) {
      void recordEvent(deps.rest, about, ready.status === 'True' ? 'Normal' : 'Warning', ready.reason, ready.message);
    }
  }
  let resyncAfterMs = Math.min(resyncMs, recheckMs ?? resyncMs);
  if (failedJob !== undefined && errors.length === 0) {
    const waited = deps.now().getTime() - failedJob.since;
    if (waited < failedJobRetryMs) resyncAfterMs = Math.min(resyncAfterMs, failedJobRetryMs - waited);
    else {
      const deleted = await deleteObject(deps.rest, resourceTypes.job, namespace, failedJob.object.metadata?.name ?? '', failedJob.object.metadata?.uid);
      if (!deleted.ok) errors.push(`deleting failed Job ${failedJob.object.metadata?.name ?? ''}: ${deleted.error.message}`);
      else {
        deps.cache.of(resourceTypes.job).delete(failedJob.object);
        log.info('deleted failed migrate Job to run it again', { job: failedJob.object.metadata?.name });
        void recordEvent(deps.rest, about, 'Normal', 'MigrationRetried', `deleted failed Job ${failedJob.object.metadata?.name ?? ''}; it is created again`);
        resyncAfterMs = 1_000;
      }
    }
  }
  if (errors.length > 0) return fail(errors.join('; '));
  deps.onReconciled?.(stack);
  return ok({ resyncAfterMs });
}
