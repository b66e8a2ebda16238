// The stores of every type the operator watches, one per resource type,
// shared by the watches that fill them and the reconcilers that read them.
import { ObjectStore } from './object-store.ts';
import { claimTypes, ownedTypes, resourceTypes } from './resource-types.ts';
import type { ResourceType } from './resource-types.ts';

/** One ObjectStore per watched type: stacks, Tenants, every owned kind and the gateways' claims. */
export class ClusterCache {
  readonly #stores = new Map<string, ObjectStore>();

  constructor() {
    for (const type of [resourceTypes.stack, resourceTypes.tenant, ...ownedTypes, ...claimTypes]) this.#stores.set(type.plural, new ObjectStore());
  }

  /** The store of a watched type. */
  of(type: ResourceType): ObjectStore {
    const store = this.#stores.get(type.plural);
    if (store === undefined) throw new Error(`bug: ${type.kind} is not watched`);
    return store;
  }

  get stacks(): ObjectStore {
    return this.of(resourceTypes.stack);
  }
  get tenants(): ObjectStore {
    return this.of(resourceTypes.tenant);
  }
  get secrets(): ObjectStore {
    return this.of(resourceTypes.secret);
  }
}
