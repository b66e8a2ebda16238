// The watch-fed store against a scripted fake API server on loopback: it holds
// what was listed and watched, passes on each change with the copy it
// replaced, and a relist after 410 Gone reports what vanished meanwhile.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { silentLogger } from '../../../../src/log/logger.ts';
import { runInformer } from '../../../../operator/kube/informer.ts';
import type { CacheEvent } from '../../../../operator/kube/informer.ts';
import { KubeRest } from '../../../../operator/kube/kube-rest.ts';
import { ObjectStore } from '../../../../operator/kube/object-store.ts';
import { resourceTypes } from '../../../../operator/kube/resource-types.ts';

const item = (name: string, rv: string): unknown => ({ metadata: { name, namespace: 'ns', uid: name, resourceVersion: rv } });

/** Runs an informer against the scripted server until its second list, with `store` as it starts. */
async function runScript(store: ObjectStore): Promise<string[]> {
  let lists = 0;
  let watches = 0;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('watch') !== 'true') {
      lists++;
      const items = lists === 1 ? [item('x', '1'), item('y', '2')] : [item('y', '5')];
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ metadata: { resourceVersion: String(lists * 10) }, items }));
      return;
    }
    watches++;
    res.writeHead(200, { 'content-type': 'application/json' });
    if (watches === 1) {
      res.write(JSON.stringify({ type: 'MODIFIED', object: { kind: 'ObservabilityStack', ...(item('y', '3') as object) } }) + '\n');
      res.end(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old' } }) + '\n');
    }
  });
  await new Promise<void>((r) => {
    server.listen(0, '127.0.0.1', r);
  });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const abort = new AbortController();
  const events: string[] = [];
  let synced = 0;
  await runInformer({
    rest: new KubeRest(kc),
    type: resourceTypes.stack,
    namespace: 'ns',
    store,
    onEvent: (e: CacheEvent) => {
      events.push(`${e.type} ${e.object.metadata?.name ?? ''}@${e.object.metadata?.resourceVersion ?? ''} was ${e.previous?.metadata?.resourceVersion ?? '-'}`);
    },
    onSynced: () => {
      synced++;
      if (synced === 2) abort.abort();
    },
    backoff: { baseMs: 10, maxMs: 20 },
    log: silentLogger,
    signal: abort.signal,
  });
  server.closeAllConnections();
  await new Promise<void>((r) => {
    server.close(() => {
      r();
    });
  });
  return events;
}

describe('operator informer cache', function () {
  this.timeout(10_000);

  it('stores listed and watched objects, passes the previous copy, and turns a relist gap into DELETED', async () => {
    const store = new ObjectStore();
    expect(await runScript(store)).to.deep.equal(['LISTED x@1 was -', 'LISTED y@2 was -', 'MODIFIED y@3 was 2', 'LISTED y@5 was 3', 'DELETED x@1 was 1']);
    expect(store.list('ns').map((o) => o.metadata?.name)).to.deep.equal(['y']);
    expect(store.get('y', 'ns')?.kind).to.equal('ObservabilityStack');
    expect(store.list()).to.have.length(1);
  });

  it('never rolls back a newer copy a reconciler stored from its own write', async () => {
    const store = new ObjectStore();
    store.set({ kind: 'ObservabilityStack', metadata: { name: 'y', namespace: 'ns', uid: 'y', resourceVersion: '4' } });
    expect(await runScript(store)).to.deep.equal(['LISTED x@1 was -', 'LISTED y@5 was 4', 'DELETED x@1 was 1']);
    expect(store.get('y', 'ns')?.metadata?.resourceVersion).to.equal('5');
  });
});
