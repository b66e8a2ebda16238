// Mirrors one stack's tenants as Tenant resources and pushes declared state:
// list the stack's tenants through its API (admin key), push the stack's
// spec.tenantDefaults when the API holds others, push every declared
// spec.displayName that the API does not hold (GitOps wins, and a declared
// Tenant for an unknown id creates the record), create a Tenant for each id
// not yet mirrored, push each Tenant's spec.limits/spec.retention when the
// API's 'tenant'-source values differ (an empty set removes them), and write
// each Tenant's status (stored name, effective settings and their sources,
// sync time, Synced).
// Kubernetes objects are read from the watch-fed cache; writes go to the API
// server and their answers into the cache.
import type { Logger } from '../../src/log/logger.ts';
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';
import { adminKeyLocation } from '../desired/credentials-secret.ts';
import { managedByValue, ownerReference, stackLabel } from '../desired/object-meta.ts';
import { createObject, patchStatus, recordEvent } from '../kube/cluster-objects.ts';
import type { ClusterCache } from '../kube/cluster-cache.ts';
import type { KubeObject, KubeRest } from '../kube/kube-rest.ts';
import { resourceTypes } from '../kube/resource-types.ts';
import type { Handled, ObjectKey } from '../reconcile/key-queue.ts';
import { stackFromObject } from '../stack/stack-spec.ts';
import type { Stack } from '../stack/stack-spec.ts';
import { mergeConditions, readConditions } from '../status/conditions.ts';
import { stackEndpoints } from '../status/stack-status.ts';
import { describeValues, settingsStatus, settingValuesOf } from './declared-settings.ts';
import { pushDeclaredSettings, pushTenantDefaults } from './settings-push.ts';
import type { StoredTenant, TenantDirectory } from './tenant-directory.ts';
import { tenantObjectName } from './tenant-name.ts';

export interface TenantSyncDeps {
  readonly rest: KubeRest;
  readonly cache: ClusterCache;
  readonly log: Logger;
  readonly now: () => Date;
  readonly directoryFor: (apiUrl: string, adminKey: string) => TenantDirectory;
  /** Called when a sync created Tenants (the stack's tenant count changed). */
  readonly onMirrored?: (stack: ObjectKey) => void;
}

interface TenantSpec {
  stackRef?: { name?: string };
  tenantId?: string;
  displayName?: string;
  limits?: unknown;
  retention?: unknown;
}

const specOf = (o: KubeObject): TenantSpec => o['spec'] ?? {};
const asTenant = (o: KubeObject): KubeObject => ({ ...o, apiVersion: resourceTypes.tenant.apiVersion, kind: resourceTypes.tenant.kind });

function adminKey(deps: TenantSyncDeps, stack: Stack): Result<string, string> {
  const where = adminKeyLocation(stack);
  const secret = deps.cache.secrets.get(where.secretName, stack.ref.namespace);
  const encoded = ((secret?.['data'] ?? {}) as Record<string, string>)[where.key];
  if (encoded === undefined) return fail(`Secret ${where.secretName} has no key ${where.key} (the admin key)`);
  return ok(Buffer.from(encoded, 'base64').toString('utf8'));
}

/** When the API cannot be reached, says so on each Tenant (once: unchanged conditions are not rewritten). */
async function markUnsynced(deps: TenantSyncDeps, namespace: string, stackName: string, message: string): Promise<void> {
  for (const tenant of deps.cache.tenants.list(namespace).filter((o) => specOf(o).stackRef?.name === stackName)) {
    const previous = readConditions(tenant['status']);
    const synced = previous.find((c) => c.type === 'Synced');
    if (synced?.status === 'False' && synced.reason === 'ApiUnavailable') continue;
    const generation = tenant.metadata?.generation ?? 0;
    const conditions = mergeConditions(previous, [{ type: 'Synced', status: 'False', reason: 'ApiUnavailable', message }], generation, deps.now());
    const r = await patchStatus(deps.rest, resourceTypes.tenant, namespace, tenant.metadata?.name ?? '', { conditions });
    if (r.ok) deps.cache.tenants.set(asTenant(r.value));
  }
}

async function writeTenantStatus(deps: TenantSyncDeps, tenant: KubeObject, stored: StoredTenant | undefined, problem: string | undefined): Promise<void> {
  const spec = specOf(tenant);
  const generation = tenant.metadata?.generation ?? 0;
  const declared = describeValues(settingValuesOf(spec));
  const held = [
    spec.displayName === undefined ? 'mirrored from the API' : 'stored name equals spec.displayName',
    ...(declared === 'nothing' ? [] : [`the API holds the declared ${declared}`]),
  ].join('; ');
  const synced =
    problem === undefined
      ? { type: 'Synced', status: 'True' as const, reason: 'Synced', message: held }
      : { type: 'Synced', status: 'False' as const, reason: 'SyncFailed', message: problem };
  const status = {
    observedGeneration: generation,
    ...(stored === undefined ? {} : { storedName: stored.name }),
    ...(stored?.settings === undefined ? {} : settingsStatus(stored.settings)),
    lastSyncTime: deps.now().toISOString(),
    conditions: mergeConditions(readConditions(tenant['status']), [synced], generation, deps.now()),
  };
  const r = await patchStatus(deps.rest, resourceTypes.tenant, tenant.metadata?.namespace ?? '', tenant.metadata?.name ?? '', status);
  if (r.ok) deps.cache.tenants.set(asTenant(r.value));
  else if (r.error.status !== 404) deps.log.warn('cannot write Tenant status', { tenant: tenant.metadata?.name, error: r.error.message });
}

/** Pushes the stack's spec.tenantDefaults when the API holds others; returns the problem, if any. */
async function syncTenantDefaults(deps: TenantSyncDeps, directory: TenantDirectory, stackObject: KubeObject, stack: Stack): Promise<string | undefined> {
  const log = deps.log.child({ stack: `${stack.ref.namespace}/${stack.ref.name}`, task: 'tenant-sync' });
  const pushed = await pushTenantDefaults(directory, stack.spec.tenantDefaults);
  if (!pushed.ok) {
    log.warn('cannot push spec.tenantDefaults', { error: pushed.error });
    void recordEvent(deps.rest, stackObject, 'Warning', 'TenantDefaultsFailed', pushed.error);
    return pushed.error;
  }
  if (pushed.value.pushed) {
    const now = describeValues(stack.spec.tenantDefaults);
    const was = describeValues(pushed.value.was);
    log.info('pushed spec.tenantDefaults to the API', { declared: now, was });
    void recordEvent(deps.rest, stackObject, 'Normal', 'TenantDefaultsSynced', `tenant defaults set to ${now} (the API held ${was})`);
  }
  return undefined;
}

/** Syncs the tenants of stack `namespace/name`; resyncs after the stack's interval. */
export async function syncTenants(deps: TenantSyncDeps, { namespace, name }: ObjectKey): Promise<Result<Handled, string>> {
  const log = deps.log.child({ stack: `${namespace}/${name}`, task: 'tenant-sync' });
  const got = deps.cache.stacks.get(name, namespace);
  if (got === undefined || got.metadata?.deletionTimestamp !== undefined) return ok({});
  const stackObject: KubeObject = { ...got, apiVersion: resourceTypes.stack.apiVersion, kind: resourceTypes.stack.kind };
  const stack = stackFromObject(got);
  if (!stack.spec.tenantSync.enabled) return ok({});
  const resync = stack.spec.tenantSync.intervalSeconds * 1000;

  const key = adminKey(deps, stack);
  if (!key.ok) {
    await markUnsynced(deps, namespace, name, key.error);
    return fail(key.error);
  }
  const directory = deps.directoryFor(stack.spec.tenantSync.apiUrl ?? stackEndpoints(stack).api, key.value);
  const listedTenants = await directory.list();
  if (!listedTenants.ok) {
    await markUnsynced(deps, namespace, name, listedTenants.error);
    return fail(listedTenants.error);
  }
  const stored = new Map(listedTenants.value.map((t) => [t.id, t]));
  const stackProblem = await syncTenantDefaults(deps, directory, stackObject, stack);

  const objects = deps.cache.tenants.list(namespace);
  const holders = new Map(objects.map((o) => [o.metadata?.name ?? '', specOf(o).tenantId ?? '']));
  const mine = objects.filter((o) => specOf(o).stackRef?.name === name);
  const mirrored = new Set(mine.map((o) => specOf(o).tenantId));
  const problems = new Map<string, string>();

  // Declared names first: GitOps wins over renames made through the API.
  for (const tenant of mine) {
    const { tenantId, displayName } = specOf(tenant);
    if (tenantId === undefined) continue;
    const current = stored.get(tenantId);
    const wanted = displayName ?? (current === undefined ? '' : undefined);
    if (wanted === undefined || current?.name === wanted) continue;
    const renamed = await directory.rename(tenantId, wanted);
    if (!renamed.ok) {
      problems.set(tenantId, renamed.error);
      continue;
    }
    stored.set(tenantId, renamed.value);
    log.info(current === undefined ? 'created tenant record from a declared Tenant' : 'pushed spec.displayName to the API', {
      tenant: tenantId,
      name: wanted,
      was: current?.name,
    });
    void recordEvent(
      deps.rest,
      { ...tenant, apiVersion: resourceTypes.tenant.apiVersion, kind: resourceTypes.tenant.kind },
      'Normal',
      current === undefined ? 'TenantCreated' : 'NameSynced',
      `tenant ${tenantId} name set to ${JSON.stringify(wanted)}${current === undefined ? '' : ` (was ${JSON.stringify(current.name)})`}`,
    );
  }

  // Ids the API knows that no Tenant mirrors yet.
  const created: KubeObject[] = [];
  for (const tenant of stored.values()) {
    if (mirrored.has(tenant.id)) continue;
    const objectName = tenantObjectName(name, tenant.id, (n) => holders.get(n));
    const r = await createObject(deps.rest, resourceTypes.tenant, namespace, {
      apiVersion: resourceTypes.tenant.apiVersion,
      kind: resourceTypes.tenant.kind,
      metadata: {
        name: objectName,
        namespace,
        labels: { [stackLabel]: name, 'app.kubernetes.io/managed-by': managedByValue, 'app.kubernetes.io/part-of': 'tenantry' },
        ownerReferences: [ownerReference(stack.ref)],
      },
      spec: { stackRef: { name }, tenantId: tenant.id },
    });
    if (!r.ok) {
      log.warn('cannot create Tenant', { tenant: tenant.id, object: objectName, error: r.error.message });
      problems.set(tenant.id, r.error.message);
      continue;
    }
    holders.set(objectName, tenant.id);
    deps.cache.tenants.set(asTenant(r.value));
    created.push(r.value);
    log.info('mirrored tenant', { tenant: tenant.id, object: objectName });
    void recordEvent(deps.rest, stackObject, 'Normal', 'TenantMirrored', `tenant ${tenant.id} mirrored as Tenant ${objectName}`);
  }

  // Declared settings, also of the Tenants just created: one re-created after its deletion
  // declares nothing, so the values its predecessor declared are removed.
  for (const tenant of [...mine, ...created]) {
    const id = specOf(tenant).tenantId;
    if (id === undefined || problems.has(id)) continue;
    const declared = settingValuesOf(specOf(tenant));
    const pushed = await pushDeclaredSettings(directory, id, declared, stored.get(id));
    if (!pushed.ok) {
      problems.set(id, pushed.error);
      continue;
    }
    if (!pushed.value.pushed) continue;
    stored.set(id, pushed.value.now);
    const message = `tenant ${id}: declared ${describeValues(declared)} (the API held ${describeValues(pushed.value.was)})`;
    log.info('pushed declared settings to the API', { tenant: id, declared: describeValues(declared), was: describeValues(pushed.value.was) });
    void recordEvent(deps.rest, asTenant(tenant), 'Normal', 'SettingsSynced', message);
  }

  for (const tenant of [...mine, ...created]) {
    const id = specOf(tenant).tenantId ?? '';
    await writeTenantStatus(deps, tenant, stored.get(id), problems.get(id));
  }
  if (created.length > 0) deps.onMirrored?.({ namespace, name });
  if (stackProblem !== undefined) problems.set('spec.tenantDefaults', stackProblem);
  if (problems.size > 0) return fail([...problems.entries()].map(([id, m]) => `${id}: ${m}`).join('; '));
  return ok({ resyncAfterMs: resync });
}
