// The list/watch loop against a scripted fake API server on loopback: a 410
// ERROR event makes it relist, a closed watch resumes from the last
// resourceVersion, an unreachable server is retried with backoff.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { silentLogger } from '../../../../src/log/logger.ts';
import { KubeRest } from '../../../../operator/kube/kube-rest.ts';
import { runResourceWatch } from '../../../../operator/kube/resource-watch.ts';
import { resourceTypes } from '../../../../operator/kube/resource-types.ts';

interface Script {
  list: number;
  watches: string[];
  failFirstLists: number;
}

function fakeApi(script: Script): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('watch') !== 'true') {
      script.list++;
      if (script.list <= script.failFirstLists) {
        res.writeHead(503).end('{"reason":"ServiceUnavailable","message":"starting"}');
        return;
      }
      const rv = String(100 * script.list);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ metadata: { resourceVersion: rv }, items: [{ metadata: { name: `listed-${rv}`, namespace: 'ns', resourceVersion: rv } }] }));
      return;
    }
    const from = url.searchParams.get('resourceVersion') ?? '';
    script.watches.push(from);
    res.writeHead(200, { 'content-type': 'application/json' });
    const n = script.watches.length;
    if (n === 1) {
      // An event, then the server closes the watch normally (after a second, like a timeout).
      res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', namespace: 'ns', resourceVersion: '101' } } }) + '\n');
      // Deliberate: a close right after opening counts as a failure; this one must look like a server timeout.
      setTimeout(() => {
        res.end();
      }, 1100);
    } else if (n === 2) {
      res.end(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } }) + '\n');
    } else {
      res.write(JSON.stringify({ type: 'MODIFIED', object: { metadata: { name: 'b', namespace: 'ns', resourceVersion: '201' } } }) + '\n');
    }
  });
}

function restFor(port: number): KubeRest {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new KubeRest(kc);
}

describe('operator list/watch loop', function () {
  this.timeout(10_000);

  it('resumes a closed watch from its resourceVersion and relists after 410 Gone', async () => {
    const script: Script = { list: 0, watches: [], failFirstLists: 1 };
    const server = fakeApi(script);
    await new Promise<void>((r) => {
      server.listen(0, '127.0.0.1', r);
    });
    const abort = new AbortController();
    const seen: string[] = [];
    const restarts: string[] = [];
    const done = runResourceWatch({
      rest: restFor((server.address() as AddressInfo).port),
      type: resourceTypes.stack,
      namespace: 'ns',
      onObject: (type, o) => {
        seen.push(`${type} ${o.metadata?.name ?? ''}`);
        if (o.metadata?.name === 'b') abort.abort();
      },
      onRestart: (reason) => {
        restarts.push(reason);
      },
      backoff: { baseMs: 10, maxMs: 20 },
      log: silentLogger,
      signal: abort.signal,
    });
    await done;
    server.closeAllConnections();
    await new Promise<void>((r) => {
      server.close(() => {
        r();
      });
    });
    expect(restarts).to.deep.equal(['error', 'closed', 'gone']);
    expect(script.list).to.equal(3);
    // Watch 1 from the first good list (200), watch 2 resumed from the event (101), watch 3 from the relist (300).
    expect(script.watches).to.deep.equal(['200', '101', '300']);
    expect(seen).to.deep.equal(['LISTED listed-200', 'ADDED a', 'LISTED listed-300', 'MODIFIED b']);
  });
});
