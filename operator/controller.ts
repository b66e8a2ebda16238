// Wires watches to the caches and the work queues: stacks, Tenants, Secrets
// and every owned kind are listed and watched (in each watched namespace, or
// all) into per-type stores; an event that can change an outcome enqueues the
// stack it concerns on the queue of the reconciler it matters to. Two typed
// queues, keyed by the stack's namespace and name: the stack reconciler and
// the tenant sync, each serial per key with backoff on failure. Workers start
// once every store has listed, so no reconcile acts on a half-filled cache.
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { BackoffPolicy } from '../src/backoff.ts';
import type { Clock } from '../src/clock.ts';
import type { Logger } from '../src/log/logger.ts';
import { ok } from '../src/result.ts';
import type { Result } from '../src/result.ts';
import { managedByValue } from './desired/object-meta.ts';
import { ClusterCache } from './kube/cluster-cache.ts';
import { runInformer } from './kube/informer.ts';
import type { CacheEvent } from './kube/informer.ts';
import type { KubeObject, KubeRest } from './kube/kube-rest.ts';
import { claimTypes, ownedTypes, resourceTypes } from './kube/resource-types.ts';
import type { ResourceType } from './kube/resource-types.ts';
import { KeyQueue, objectKeyId } from './reconcile/key-queue.ts';
import type { Handled, ObjectKey } from './reconcile/key-queue.ts';
import { isRelevantChange } from './reconcile/relevant-change.ts';
import { reconcileStack, referencedSecretNames } from './reconcile/stack-reconciler.ts';
import { stackFromObject } from './stack/stack-spec.ts';
import { registerStackConditions } from './status/stack-condition-metric.ts';
import type { TenantDirectory } from './tenants/tenant-directory.ts';
import { syncTenants } from './tenants/tenant-sync.ts';

/** Reconcile retries: a first retry soon, and at most a minute apart while a key keeps failing. */
const defaultBackoff: BackoffPolicy = { baseMs: 500, maxMs: 60_000 };

export interface ControllerOptions {
  readonly rest: KubeRest;
  readonly log: Logger;
  readonly registry: Registry;
  /** Namespaces to watch; empty means all namespaces. */
  readonly namespaces: readonly string[];
  readonly directoryFor: (apiUrl: string, adminKey: string) => TenantDirectory;
  readonly backoff?: BackoffPolicy;
  /** Workers per queue. */
  readonly concurrency?: number;
  readonly clock?: Clock;
}

export interface RunningController {
  /** Resolves once every watch has listed once (the caches are filled). */
  readonly synced: Promise<void>;
  stop(): Promise<void>;
}

function metric<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

const keyOf = (o: KubeObject): ObjectKey => ({ namespace: o.metadata?.namespace ?? '', name: o.metadata?.name ?? '' });

/** Starts watches and workers; they run until stop(). */
export function startController(o: ControllerOptions): RunningController {
  const backoff = o.backoff ?? defaultBackoff;
  const reconciles = metric(
    o.registry,
    'tenantry_operator_reconciles_total',
    () =>
      new Counter({
        name: 'tenantry_operator_reconciles_total',
        help: 'Reconciles by task and result',
        labelNames: ['task', 'result'],
        registers: [o.registry],
      }),
  );
  const duration = metric(
    o.registry,
    'tenantry_operator_reconcile_duration_seconds',
    () =>
      new Histogram({
        name: 'tenantry_operator_reconcile_duration_seconds',
        help: 'Reconcile duration by task',
        labelNames: ['task'],
        registers: [o.registry],
      }),
  );
  const restarts = metric(
    o.registry,
    'tenantry_operator_watch_restarts_total',
    () =>
      new Counter({
        name: 'tenantry_operator_watch_restarts_total',
        help: 'Watch restarts by kind and reason (closed, gone = 410 relist, error = backoff)',
        labelNames: ['kind', 'reason'],
        registers: [o.registry],
      }),
  );
  const depth = metric(
    o.registry,
    'tenantry_operator_queue_depth',
    () => new Gauge({ name: 'tenantry_operator_queue_depth', help: 'Keys waiting or running', registers: [o.registry] }),
  );

  const cache = new ClusterCache();
  const unregisterConditions = registerStackConditions(o.registry, () => cache.stacks.list());
  const abort = new AbortController();
  const now = (): Date => new Date();
  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => {
    markSynced = resolve;
  });

  const queueOf = (task: 'stack' | 'tenants', handler: (key: ObjectKey) => Promise<Result<Handled, string>>): KeyQueue<ObjectKey> =>
    new KeyQueue<ObjectKey>({
      // Stopped before the caches filled: nothing to do (a half-filled cache would mean fresh credentials).
      handler: async (key) => {
        await synced;
        return abort.signal.aborted ? ok({}) : handler(key);
      },
      idOf: objectKeyId,
      backoff,
      concurrency: o.concurrency ?? 4,
      ...(o.clock === undefined ? {} : { clock: o.clock }),
      onResult: (key, result, ms) => {
        reconciles.inc({ task, result: result.ok ? 'success' : 'error' });
        if (!result.ok) o.log.warn('reconcile failed; retrying with backoff', { task, key: objectKeyId(key), error: result.error });
        duration.observe({ task }, ms / 1000);
        depth.set(stacks.depth + tenants.depth);
      },
    });
  const lastApplied = new Map<string, { readonly desired: string; readonly resourceVersion: string }>();
  const stacks: KeyQueue<ObjectKey> = queueOf('stack', (key) =>
    reconcileStack(
      {
        rest: o.rest,
        cache,
        lastApplied,
        log: o.log,
        now,
        onReconciled: (stack) => {
          if (stack.spec.tenantSync.enabled) tenants.addUnlessScheduled(key);
        },
      },
      key,
    ),
  );
  const tenants: KeyQueue<ObjectKey> = queueOf('tenants', (key) =>
    syncTenants(
      {
        rest: o.rest,
        cache,
        log: o.log,
        now,
        directoryFor: o.directoryFor,
        onMirrored: (stack) => {
          stacks.add(stack);
        },
      },
      key,
    ),
  );

  const onStack = ({ type, object, previous }: CacheEvent): void => {
    if (!isRelevantChange(type, object, previous)) return;
    stacks.add(keyOf(object));
    tenants.add(keyOf(object));
  };
  const onTenant = ({ type, object, previous }: CacheEvent): void => {
    if (!isRelevantChange(type, object, previous)) return;
    // Only the tenant sync creates managed Tenants; it writes their status and queues one
    // stack reconcile for the new count itself. Its creations' events (which may arrive
    // before its POSTs return) would otherwise queue a reconcile per created Tenant.
    if (type === 'ADDED' && object.metadata?.labels?.['app.kubernetes.io/managed-by'] === managedByValue) return;
    const stack = (object['spec'] as { stackRef?: { name?: string } } | undefined)?.stackRef?.name;
    if (stack === undefined) return;
    const key = { namespace: object.metadata?.namespace ?? '', name: stack };
    tenants.add(key);
    // The stack's status counts its Tenants.
    if (type !== 'MODIFIED') stacks.add(key);
  };
  const onOwned = ({ type, object, previous }: CacheEvent): void => {
    if (!isRelevantChange(type, object, previous)) return;
    const owner = object.metadata?.ownerReferences?.find((r) => r.controller === true && r.kind === resourceTypes.stack.kind);
    if (owner !== undefined) {
      stacks.add({ namespace: object.metadata?.namespace ?? '', name: owner.name });
      return;
    }
    if (object.kind !== resourceTypes.secret.kind) return;
    // A Secret the user names in a stack (API keys, external ClickHouse): its content goes into the pods' checksum and holds the admin key.
    const namespace = object.metadata?.namespace ?? '';
    for (const stack of cache.stacks.list(namespace)) {
      if (!referencedSecretNames(stackFromObject(stack)).includes(object.metadata?.name ?? '')) continue;
      stacks.add(keyOf(stack));
      tenants.add(keyOf(stack));
    }
  };

  const namespaces = o.namespaces.length === 0 ? [''] : o.namespaces;
  const managedBy = `app.kubernetes.io/managed-by=${managedByValue}`;
  // Secrets unfiltered: the user's Secrets named by stacks are read from the cache too.
  const watches: Array<{ type: ResourceType; selector?: string; on: (e: CacheEvent) => void }> = [
    { type: resourceTypes.stack, on: onStack },
    { type: resourceTypes.tenant, on: onTenant },
    ...ownedTypes.map((type) => ({ type, on: onOwned, ...(type === resourceTypes.secret ? {} : { selector: managedBy }) })),
    // Claims only fill the cache: the StatefulSet's and the drain Jobs' events are what start a drain or end it.
    ...claimTypes.map((type) => ({ type, on: () => undefined, selector: managedBy })),
  ];
  const listed: Array<Promise<void>> = [];
  const running: Array<Promise<void>> = [];
  for (const namespace of namespaces) {
    for (const w of watches) {
      let markListed: () => void = () => undefined;
      listed.push(
        new Promise<void>((resolve) => {
          markListed = resolve;
        }),
      );
      running.push(
        runInformer({
          rest: o.rest,
          type: w.type,
          namespace,
          ...(w.selector === undefined ? {} : { labelSelector: w.selector }),
          store: cache.of(w.type),
          onEvent: w.on,
          onSynced: () => {
            markListed();
          },
          onRestart: (reason) => {
            restarts.inc({ kind: w.type.kind, reason });
          },
          backoff: { baseMs: backoff.baseMs, maxMs: Math.min(backoff.maxMs, 30_000) },
          log: o.log,
          signal: abort.signal,
        }),
      );
    }
  }
  void Promise.all(listed).then(() => {
    markSynced();
  });
  o.log.info('operator watching', { namespaces: o.namespaces.length === 0 ? 'all' : o.namespaces });
  return {
    synced,
    stop: async () => {
      unregisterConditions();
      abort.abort();
      markSynced();
      await Promise.all(running);
      await Promise.all([stacks.stop(), tenants.stop()]);
    },
  };
}
