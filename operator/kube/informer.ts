// A watch-fed store for one resource type in one namespace (or all): the
// list/watch loop (resource-watch.ts) fills the store, every change is passed
// on with the copy it replaced, and a relist (after 410 Gone or an outage)
// reports the objects deleted while the watch was away as DELETED.
import type { KubeObject } from './kube-rest.ts';
import type { ObjectStore } from './object-store.ts';
import { runResourceWatch } from './resource-watch.ts';
import type { WatchEventType, WatchOptions } from './resource-watch.ts';

export interface CacheEvent {
  readonly type: WatchEventType;
  readonly object: KubeObject;
  /** The stored copy before this event; undefined for an object new to the store. */
  readonly previous: KubeObject | undefined;
}

export interface InformerOptions extends Omit<WatchOptions, 'onObject' | 'onListed'> {
  readonly store: ObjectStore;
  readonly onEvent: (event: CacheEvent) => void;
  /** Called after every successful (re)list, once the store holds it. */
  readonly onSynced: () => void;
}

/**
 * Whether the store holds a newer copy of the same object. resourceVersions are
 * opaque to clients in general; kube-apiserver's are etcd revisions (decimal
 * integers), and anything else counts as not older.
 */
function isOlderThanStored(store: ObjectStore, object: KubeObject): boolean {
  const stored = store.get(object.metadata?.name ?? '', object.metadata?.namespace);
  const a = stored?.metadata?.resourceVersion ?? '';
  const b = object.metadata?.resourceVersion ?? '';
  return stored?.metadata?.uid === object.metadata?.uid && /^\d+$/.test(a) && /^\d+$/.test(b) && BigInt(a) > BigInt(b);
}

/** Runs until `signal` aborts. */
export async function runInformer(o: InformerOptions): Promise<void> {
  let listed = new Set<string>();
  const inScope = (obj: KubeObject): boolean => o.namespace === '' || obj.metadata?.namespace === o.namespace;
  const id = (obj: KubeObject): string => `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
  await runResourceWatch({
    ...o,
    onObject: (type, object) => {
      if (type === 'LISTED') listed.add(id(object));
      // The reconcilers store their writes' answers; a watch event or list older than such an answer must not roll it back.
      if (type !== 'DELETED' && isOlderThanStored(o.store, object)) return;
      const previous = type === 'DELETED' ? o.store.delete(object) : o.store.set(object);
      o.onEvent({ type, object, previous });
    },
    onListed: () => {
      for (const gone of o.store.list(o.namespace).filter((obj) => inScope(obj) && !listed.has(id(obj)))) {
        o.store.delete(gone);
        o.onEvent({ type: 'DELETED', object: gone, previous: gone });
      }
      listed = new Set();
      o.onSynced();
    },
  });
}
