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

/** Runs until `signal` aborts. */
export async function runInformer(o: InformerOptions): Promise<void> {
  let listed = new Set<string>();
  const inScope = (obj: KubeObject): boolean => o.namespace === '' || obj.metadata?.namespace === o.namespace;
  const id = (obj: KubeObject): string => `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
  await runResourceWatch({
    ...o,
    onObject: (type, object) => {
      if (type === 'LISTED') listed.add(id(object));
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
