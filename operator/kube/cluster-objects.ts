// The object operations the reconcilers use, on top of KubeRest: get (404 is
// "absent", not a failure), list, server-side apply with the one field
// manager, delete, status patches and Events.
import { randomBytes } from 'node:crypto';
import { mapValue, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';
import { fieldManager } from '../desired/object-meta.ts';
import type { KubeFailure, KubeList, KubeObject, KubeRest } from './kube-rest.ts';
import type { ResourceType } from './resource-types.ts';
import { collectionPath, objectPath, resourceTypes, typeOfKind } from './resource-types.ts';

export type Absent = undefined;

export async function getObject(rest: KubeRest, type: ResourceType, namespace: string, name: string): Promise<Result<KubeObject | Absent, KubeFailure>> {
  const r = await rest.call<KubeObject>({ method: 'GET', path: objectPath(type, namespace, name) });
  if (!r.ok && r.error.status === 404) return ok(undefined);
  return mapValue(r, (a) => a.body);
}

export async function listObjects(rest: KubeRest, type: ResourceType, namespace: string, labelSelector?: string): Promise<Result<KubeObject[], KubeFailure>> {
  const r = await rest.call<KubeList>({ method: 'GET', path: collectionPath(type, namespace), query: { labelSelector } });
  return mapValue(r, (a) => a.body.items);
}

/** What server-side apply answered: the object as stored, and whether this call created it. */
export interface Applied {
  readonly object: KubeObject;
  readonly created: boolean;
}

/** Server-side apply (force: the operator owns every field it sets). */
export async function applyObject(
  rest: KubeRest,
  object: { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } },
  manager: string = fieldManager,
): Promise<Result<Applied, KubeFailure>> {
  const type = typeOfKind(object.apiVersion, object.kind);
  if (type === undefined) throw new Error(`bug: no resource type for ${object.apiVersion ?? '?'} ${object.kind ?? '?'}`);
  const r = await rest.call<KubeObject>({
    method: 'PATCH',
    path: objectPath(type, object.metadata?.namespace ?? '', object.metadata?.name ?? ''),
    query: { fieldManager: manager, force: 'true' },
    body: object,
    contentType: 'application/apply-patch+yaml',
  });
  return mapValue(r, (a) => ({ object: a.body, created: a.status === 201 }));
}

export async function createObject(rest: KubeRest, type: ResourceType, namespace: string, object: KubeObject): Promise<Result<KubeObject, KubeFailure>> {
  return mapValue(await rest.call<KubeObject>({ method: 'POST', path: collectionPath(type, namespace), query: { fieldManager }, body: object }), (a) => a.body);
}

/** Deletes in the background (dependents such as a Job's pods follow). 404 counts as done. */
export async function deleteObject(rest: KubeRest, type: ResourceType, namespace: string, name: string, uid?: string): Promise<Result<undefined, KubeFailure>> {
  const r = await rest.call<unknown>({
    method: 'DELETE',
    path: objectPath(type, namespace, name),
    query: { propagationPolicy: 'Background' },
    ...(uid === undefined ? {} : { body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', preconditions: { uid } } }),
  });
  return r.ok || r.error.status === 404 ? ok(undefined) : r;
}

/** Merge-patches the status subresource. */
export async function patchStatus(
  rest: KubeRest,
  type: ResourceType,
  namespace: string,
  name: string,
  status: unknown,
): Promise<Result<KubeObject, KubeFailure>> {
  return mapValue(
    await rest.call<KubeObject>({
      method: 'PATCH',
      path: `${objectPath(type, namespace, name)}/status`,
      query: { fieldManager },
      body: { status },
      contentType: 'application/merge-patch+json',
    }),
    (a) => a.body,
  );
}

/** Records a core/v1 Event about an object; failures are ignored by callers (events are best effort). */
export async function recordEvent(
  rest: KubeRest,
  about: KubeObject,
  eventType: 'Normal' | 'Warning',
  reason: string,
  message: string,
): Promise<Result<KubeObject, KubeFailure>> {
  const namespace = about.metadata?.namespace ?? 'default';
  const now = new Date().toISOString();
  return mapValue(
    await rest.call<KubeObject>({
      method: 'POST',
      path: collectionPath(resourceTypes.event, namespace),
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: `${about.metadata?.name ?? 'object'}.${randomBytes(8).toString('hex')}`, namespace },
        involvedObject: {
          apiVersion: about.apiVersion,
          kind: about.kind,
          name: about.metadata?.name,
          namespace,
          uid: about.metadata?.uid,
          resourceVersion: about.metadata?.resourceVersion,
        },
        reason,
        message: message.slice(0, 1024),
        type: eventType,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        source: { component: fieldManager },
        reportingComponent: fieldManager,
        reportingInstance: fieldManager,
      },
    }),
    (a) => a.body,
  );
}
