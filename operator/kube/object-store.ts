// The informer cache: one store per watched resource type, filled by its
// list/watch loops and read by the reconcilers instead of the API server.
// It implements client-node's ObjectCache interface (get/list by namespace).
// Reconcilers also record the answers of their own writes (read-your-writes),
// so a reconcile that runs before the watch event of its previous write does
// not act on a stale copy (e.g. generate credentials a second time).
import type { ObjectCache } from '@kubernetes/client-node';
import type { KubeObject } from './kube-rest.ts';

/** Objects of one type by namespace and name. */
export class ObjectStore implements ObjectCache<KubeObject> {
  readonly #byNamespace = new Map<string, Map<string, KubeObject>>();

  /** One object, or undefined when the watches have not seen it. */
  get(name: string, namespace?: string): KubeObject | undefined {
    return this.#byNamespace.get(namespace ?? '')?.get(name);
  }

  /** Every object in a namespace, or in all when namespace is undefined or ''. */
  list(namespace?: string): readonly KubeObject[] {
    if (namespace === undefined || namespace === '') return [...this.#byNamespace.values()].flatMap((m) => [...m.values()]);
    return [...(this.#byNamespace.get(namespace)?.values() ?? [])];
  }

  /** Stores an object; returns the copy it replaces. */
  set(object: KubeObject): KubeObject | undefined {
    const namespace = object.metadata?.namespace ?? '';
    const name = object.metadata?.name ?? '';
    let objects = this.#byNamespace.get(namespace);
    if (objects === undefined) {
      objects = new Map();
      this.#byNamespace.set(namespace, objects);
    }
    const previous = objects.get(name);
    objects.set(name, object);
    return previous;
  }

  /** Removes an object; returns the copy removed. */
  delete(object: KubeObject): KubeObject | undefined {
    const namespace = object.metadata?.namespace ?? '';
    const objects = this.#byNamespace.get(namespace);
    const previous = objects?.get(object.metadata?.name ?? '');
    if (previous !== undefined && (object.metadata?.uid === undefined || previous.metadata?.uid === object.metadata.uid)) {
      objects?.delete(object.metadata?.name ?? '');
      if (objects?.size === 0) this.#byNamespace.delete(namespace);
      return previous;
    }
    return undefined;
  }
}
