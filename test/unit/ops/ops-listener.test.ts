import { request } from 'node:http';
import { connect } from 'node:net';
import { expect } from 'chai';
import { Agent } from 'node:http';
import { Gauge, Registry } from 'prom-client';
import { createLogger } from '../../../src/log/logger.ts';
import { listen } from '../../../src/ops/ops-listener.ts';
import type { Listener } from '../../../src/ops/ops-listener.ts';
import { Readiness } from '../../../src/ops/readiness.ts';
import { slowloris } from '../../../support/slowloris.ts';

interface Reply {
  status: number;
  body: string;
}

function get(port: number, path: string, agent?: Agent): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (c: string) => {
          body += c;
        })
        .on('end', () => {
          resolve({ status: res.statusCode ?? 0, body });
        });
    });
    req.on('error', reject).end();
  });
}

describe('ops listener', () => {
  const readiness = new Readiness(['storage']);
  const log = createLogger('error', {}, () => undefined);
  let listener: Listener | undefined;
  afterEach(async () => {
    await listener?.close();
    listener = undefined;
  });

  it('answers the ops paths itself and hands every other path to the handler', async () => {
    const seen: string[] = [];
    listener = await listen({
      handler: (req, res) => {
        seen.push(req.url ?? '');
        res.end('app');
      },
      readiness,
      registry: new Registry(),
      log,
      host: '127.0.0.1',
      port: 0,
    });
    expect(await get(listener.port, '/healthz')).to.deep.equal({ status: 200, body: 'ok\n' });
    expect((await get(listener.port, '/readyz?verbose=1')).status).to.equal(503);
    expect((await get(listener.port, '/metrics')).status).to.equal(200);
    expect(await get(listener.port, '/v1/tenants?x=1')).to.deep.equal({ status: 200, body: 'app' });
    expect(seen).to.deep.equal(['/v1/tenants?x=1']);
  });

  it('answers 404 for other paths when there is no handler', async () => {
    listener = await listen({ readiness, registry: new Registry(), log, host: '127.0.0.1', port: 0 });
    expect(await get(listener.port, '/anything')).to.deep.equal({ status: 404, body: 'not found\n' });
  });

  it('answers 500 without details when a metrics collector throws', async () => {
    const registry = new Registry();
    new Gauge({
      name: 'broken',
      help: 'a collector that fails',
      registers: [registry],
      collect: () => {
        throw new Error('/secret/path');
      },
    });
    listener = await listen({ readiness, registry, log, host: '127.0.0.1', port: 0 });
    expect(await get(listener.port, '/metrics')).to.deep.equal({ status: 500, body: 'internal error\n' });
  });

  it('closes keep-alive connections that finish after close() began', async () => {
    const agent = new Agent({ keepAlive: true });
    let markStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      markStarted = resolve;
    });
    let release: () => void = () => undefined;
    const l = await listen({
      handler: (_req, res) => {
        release = () => {
          res.end('late');
        };
        markStarted();
      },
      readiness,
      registry: new Registry(),
      log,
      host: '127.0.0.1',
      port: 0,
    });
    const reply = get(l.port, '/slow', agent);
    await started;
    const closed = l.close();
    release();
    expect((await reply).body).to.equal('late');
    await closed; // resolves only once the kept-alive socket was closed too
    agent.destroy();
  });

  describe('limits', () => {
    const limits = { maxConnections: 3, headersTimeoutMs: 200, bodyTimeoutMs: 300 };

    it('answers 408 and closes a connection whose headers never end, and one that sends nothing, within the headers timeout', async () => {
      listener = await listen({ readiness, registry: new Registry(), log, host: '127.0.0.1', port: 0, limits });
      const [headers, silent] = await Promise.all([
        slowloris({ host: '127.0.0.1', port: listener.port, mode: 'headers', intervalMs: 20, limitMs: 5000 }),
        slowloris({ host: '127.0.0.1', port: listener.port, mode: 'silent', limitMs: 5000 }),
      ]);
      expect(headers.response).to.match(/^HTTP\/1\.1 408 /);
      for (const result of [headers, silent]) {
        expect(result.closedByServer).to.equal(true);
        expect(result.closedAfterMs).to.be.within(150, 200 + 1500);
      }
    });

    it('answers 408 to a body no handler reads in time (headers plus body timeout)', async () => {
      listener = await listen({ handler: () => undefined, readiness, registry: new Registry(), log, host: '127.0.0.1', port: 0, limits });
      const result = await slowloris({ host: '127.0.0.1', port: listener.port, mode: 'body', path: '/v1/anything', intervalMs: 20, limitMs: 5000 });
      expect(result.response).to.match(/^HTTP\/1\.1 408 /);
      expect(result.closedAfterMs).to.be.within(450, 500 + 1500);
    });

    it('closes a connection past the cap on arrival, counts it, and reclaims the idle ones', async () => {
      const registry = new Registry();
      listener = await listen({ readiness, registry, log, host: '127.0.0.1', port: 0, name: 'test', limits: { ...limits, headersTimeoutMs: 60_000 } });
      const port = listener.port;
      const open = (): { closed: Promise<void>; connected: Promise<unknown> } => {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        return {
          closed: new Promise((resolve) => {
            socket.on('close', () => {
              resolve();
            });
          }),
          connected: new Promise((resolve) => {
            socket.on('connect', resolve);
          }),
        };
      };
      const idle = [open(), open(), open()];
      await Promise.all(idle.map((c) => c.connected));
      for (;;) {
        if ((await registry.getSingleMetricAsString('tenantry_listener_connections')).includes('listener="test"} 3')) break;
        await new Promise((resolve) => {
          setImmediate(resolve);
        });
      }
      const extra = open();
      await extra.closed;
      // Refusing it closed the three idle (silent) connections long before their 60 s headers timeout.
      await Promise.all(idle.map((c) => c.closed));
      expect(await registry.getSingleMetricAsString('tenantry_listener_connections_refused_total')).to.include('listener="test"} 1');
      expect((await get(port, '/healthz')).status).to.equal(200);
    });
  });
});
