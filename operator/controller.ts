// Wires watches to the work queue: stacks, tenants and every owned kind are
// watched (in each watched namespace, or all); an event enqueues the key of
// the stack it concerns; the queue runs the stack reconciler and the tenant
// sync, serially per key, with backoff on failure.
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { Logger } from '../src/log/logger.ts';
import { managedByValue } from './desired/object-meta.ts';
import type { KubeObject, KubeRest } from './kube/kube-rest.ts';
import { runResourceWatch } from './kube/resource-watch.ts';
import type { WatchEventType } from './kube/resource-watch.ts';
import { ownedTypes, resourceTypes } from './kube/resource-types.ts';
import type { ResourceType } from './kube/resource-types.ts';
import { defaultBackoff } from './reconcile/backoff.ts';
import type { BackoffPolicy } from './reconcile/backoff.ts';
import { KeyQueue } from './reconcile/key-queue.ts';
import type { HandlerResult } from './reconcile/key-queue.ts';
import { reconcileStack } from './reconcile/stack-reconciler.ts';
import type { TenantDirectory } from './tenants/tenant-directory.ts';
import { syncTenants } from './tenants/tenant-sync.ts';

export interface ControllerOptions {
  readonly rest: KubeRest;
  readonly log: Logger;
  readonly registry: Registry;
  /** Namespaces to watch; empty means all namespaces. */
  readonly namespaces: readonly string[];
  readonly directoryFor: (apiUrl: string, adminKey: string) => TenantDirectory;
  readonly backoff?: BackoffPolicy;
  readonly concurrency?: number;
}

export interface RunningController {
  /** Resolves once every watch has listed once. */
  readonly synced: Promise<void>;
  stop(): Promise<void>;
}

const stackKey = (ns: string, name: string): string => `stack:${ns}/${name}`;
const tenantsKey = (ns: string, name: string): string => `tenants:${ns}/${name}`;

function parseKey(key: string): { kind: string; namespace: string; name: string } {
  const [kind = '', rest = ''] = key.split(/:(.*)/s);
  const [namespace = '', name = ''] = rest.split(/\/(.*)/s);
  return { kind, namespace, name };
}

function metric<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

/** Starts watches and workers; they run until stop(). */
export function startController(o: ControllerOptions): RunningController {
  const backoff = o.backoff ?? defaultBackoff;
  const reconciles = metric(o.registry, 'tenantry_operator_reconciles_total', () => new Counter({ name: 'tenantry_operator_reconciles_total', help: 'Reconciles by task and result', labelNames: ['task', 'result'], registers: [o.registry] }));
  const duration = metric(o.registry, 'tenantry_operator_reconcile_duration_seconds', () => new Histogram({ name: 'tenantry_operator_reconcile_duration_seconds', help: 'Reconcile duration by task', labelNames: ['task'], registers: [o.registry] }));
  const restarts = metric(o.registry, 'tenantry_operator_watch_restarts_total', () => new Counter({ name: 'tenantry_operator_watch_restarts_total', help: 'Watch restarts by kind and reason (closed, gone = 410 relist, error = backoff)', labelNames: ['kind', 'reason'], registers: [o.registry] }));
  const depth = metric(o.registry, 'tenantry_operator_queue_depth', () => new Gauge({ name: 'tenantry_operator_queue_depth', help: 'Keys waiting or running', registers: [o.registry] }));

  const now = (): Date => new Date();
  const queue: KeyQueue = new KeyQueue(async (key): Promise<HandlerResult> => {
    const { kind, namespace, name } = parseKey(key);
    if (kind === 'stack') {
      return reconcileStack({ rest: o.rest, log: o.log, now, onReconciled: (stack) => { if (stack.spec.tenantSync.enabled) queue.addUnlessScheduled(tenantsKey(namespace, name)); } }, namespace, name);
    }
    if (kind === 'tenants') return syncTenants({ rest: o.rest, log: o.log, now, directoryFor: o.directoryFor }, namespace, name);
    return { ok: true };
  }, backoff, o.concurrency ?? 4, {
    onResult: (key, result, ms) => {
      const task = parseKey(key).kind;
      reconciles.inc({ task, result: result.ok ? 'success' : 'error' });
      if (!result.ok) o.log.warn('reconcile failed; retrying with backoff', { key, error: result.message });
      duration.observe({ task }, ms / 1000);
      depth.set(queue.depth);
    },
  });

  // Status-only updates do not change metadata.generation; ignoring them keeps our own status writes from re-triggering us.
  const generations = new Map<string, number>();
  const specChanged = (type: WatchEventType, obj: KubeObject): boolean => {
    const uid = obj.metadata?.uid ?? '';
    if (type === 'DELETED') { generations.delete(uid); return true; }
    const generation = obj.metadata?.generation ?? 0;
    const changed = generations.get(uid) !== generation;
    generations.set(uid, generation);
    return changed || type === 'LISTED';
  };

  const onStack = (type: WatchEventType, obj: KubeObject): void => {
    if (!specChanged(type, obj)) return;
    const ns = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    queue.add(stackKey(ns, name));
    queue.add(tenantsKey(ns, name));
  };
  const onTenant = (type: WatchEventType, obj: KubeObject): void => {
    if (!specChanged(type, obj)) return;
    const stack = (obj['spec'] as { stackRef?: { name?: string } } | undefined)?.stackRef?.name;
    if (stack === undefined) return;
    const ns = obj.metadata?.namespace ?? '';
    queue.add(tenantsKey(ns, stack));
    if (type !== 'MODIFIED') queue.add(stackKey(ns, stack));
  };
  const onOwned = (_type: WatchEventType, obj: KubeObject): void => {
    const owner = obj.metadata?.ownerReferences?.find((r) => r.controller === true && r.kind === resourceTypes.stack.kind);
    if (owner !== undefined) queue.add(stackKey(obj.metadata?.namespace ?? '', owner.name));
  };

  const abort = new AbortController();
  const namespaces = o.namespaces.length === 0 ? [''] : o.namespaces;
  const watches: Array<{ type: ResourceType; selector?: string; on: (t: WatchEventType, obj: KubeObject) => void }> = [
    { type: resourceTypes.stack, on: onStack },
    { type: resourceTypes.tenant, on: onTenant },
    ...ownedTypes.map((type) => ({ type, selector: `app.kubernetes.io/managed-by=${managedByValue}`, on: onOwned })),
  ];
  const listed: Array<Promise<void>> = [];
  const running: Array<Promise<void>> = [];
  for (const namespace of namespaces) {
    for (const w of watches) {
      let markListed: () => void = () => undefined;
      listed.push(new Promise<void>((resolve) => { markListed = resolve; }));
      running.push(runResourceWatch({
        rest: o.rest, type: w.type, namespace, ...(w.selector === undefined ? {} : { labelSelector: w.selector }),
        onObject: w.on, onListed: () => { markListed(); },
        onRestart: (reason) => { restarts.inc({ kind: w.type.kind, reason }); },
        backoff: { baseMs: backoff.baseMs, maxMs: Math.min(backoff.maxMs, 30_000) }, log: o.log, signal: abort.signal,
      }));
    }
  }
  o.log.info('operator watching', { namespaces: o.namespaces.length === 0 ? 'all' : o.namespaces });
  return {
    synced: Promise.all(listed).then(() => undefined),
    stop: async () => {
      abort.abort();
      await Promise.all(running);
      await queue.stop();
    },
  };
}
