// List-then-watch of one resource type in one namespace (or all), feeding
// every object seen to a callback. The watch resumes from the last
// resourceVersion when the server closes it, relists after 410 Gone, and
// reconnects with exponential backoff when the API server is unreachable.
import type { BackoffPolicy } from '../../src/backoff.ts';
import { backoffDelay } from '../../src/backoff.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { KubeList, KubeObject, KubeRest } from './kube-rest.ts';
import type { ResourceType } from './resource-types.ts';
import { collectionPath } from './resource-types.ts';

export type WatchEventType = 'LISTED' | 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchOptions {
  readonly rest: KubeRest;
  readonly type: ResourceType;
  readonly namespace: string;
  readonly labelSelector?: string;
  readonly onObject: (type: WatchEventType, object: KubeObject) => void;
  /** Called after every successful (re)list, e.g. to mark caches synced. */
  readonly onListed?: () => void;
  /** Called when the watch restarts: reason 'gone' (410, relist), 'error' (backoff) or 'closed' (resume). */
  readonly onRestart?: (reason: 'gone' | 'error' | 'closed') => void;
  readonly backoff: BackoffPolicy;
  readonly log: Logger;
  readonly signal: AbortSignal;
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });

/** Runs until `signal` aborts. */
export async function runResourceWatch(o: WatchOptions): Promise<void> {
  const path = collectionPath(o.type, o.namespace);
  const log = o.log.child({ watch: o.type.kind, namespace: o.namespace === '' ? '*' : o.namespace });
  let resourceVersion: string | undefined;
  let failures = 0;
  const aborted = (): boolean => o.signal.aborted;
  while (!aborted()) {
    if (resourceVersion === undefined) {
      const listed = await o.rest.call<KubeList>({ method: 'GET', path, query: { labelSelector: o.labelSelector } });
      if (!listed.ok) {
        failures++;
        const delay = backoffDelay(o.backoff, failures);
        log.warn('list failed; retrying', { status: listed.error.status, error: listed.error.message, retryInMs: delay });
        o.onRestart?.('error');
        await sleep(delay, o.signal);
        continue;
      }
      resourceVersion = listed.value.body.metadata?.resourceVersion ?? '';
      for (const item of listed.value.body.items) o.onObject('LISTED', { ...item, apiVersion: o.type.apiVersion, kind: o.type.kind });
      o.onListed?.();
    }
    const watchStarted = Date.now();
    const end = await o.rest.watch(
      path,
      { labelSelector: o.labelSelector, resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: '300' },
      (event) => {
        const rv = event.object.metadata?.resourceVersion;
        if (rv !== undefined) resourceVersion = rv;
        failures = 0;
        if (event.type !== 'BOOKMARK') o.onObject(event.type === 'ERROR' ? 'MODIFIED' : event.type, event.object);
      },
      o.signal,
    );
    if (aborted()) return;
    // A normal close (server timeout) resumes at once; one right after opening is treated as a failure.
    if (end.kind === 'closed' && Date.now() - watchStarted > 1000) {
      o.onRestart?.('closed');
      continue;
    }
    if (end.kind === 'failed' && end.status === 410) {
      log.info('watch expired (410 Gone); relisting');
      resourceVersion = undefined;
      o.onRestart?.('gone');
      continue;
    }
    failures++;
    const delay = backoffDelay(o.backoff, failures);
    log.warn(
      'watch failed; reconnecting',
      end.kind === 'failed' ? { status: end.status, error: end.message, retryInMs: delay } : { error: 'closed at once', retryInMs: delay },
    );
    o.onRestart?.('error');
    // After an outage the server may have compacted past our version: relist to be safe (level-triggered anyway).
    resourceVersion = undefined;
    await sleep(delay, o.signal);
  }
}
