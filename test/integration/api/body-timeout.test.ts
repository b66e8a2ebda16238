// A request body that stalls on the API port is cut at the configured body
// timeout (TENANTRY_BODY_TIMEOUT_MS, counted from the end of the headers):
// 408 in the error envelope, the connection closed, and one JSON log line
// naming the request, with nothing else written to stdout or stderr. The
// listener's own backstop (headers plus body timeout), should it cut a body
// first, is one JSON line too, not Koa's stack on stderr.
import { connect } from 'node:net';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { Readiness } from '../../../src/ops/readiness.ts';
import { listen } from '../../../src/ops/ops-listener.ts';
import { startApiWith } from '../../../api/api.ts';
import { createApp } from '../../../api/app.ts';
import { httpMetrics } from '../../../api/http/http-metrics.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { testProcessContext } from '../../support/process-context.ts';
import { failingRunner } from './support/store-faults.ts';
import { fixedSettings } from '../../../support/fixed-settings.ts';

const key = 'body-timeout-key-0123456789';
const bodyTimeoutMs = 600;
/** Timers, the event loop and a loaded 2-core machine. */
const slack = 400;

interface Cut {
  readonly elapsedMs: number;
  readonly answer: string;
}

const form = 'application/x-www-form-urlencoded';

/** Sends the headers and half of a JSON body (or a form), then nothing; resolves when the server closes the connection. */
function halfBody(port: number, path: string, type = 'application/json'): Promise<Cut> {
  const body =
    type === form
      ? new URLSearchParams({ query: 'x'.repeat(64), start: '1', end: '2', step: '1' }).toString()
      : JSON.stringify({ startTime: 1, endTime: 2, query: 'x'.repeat(64) });
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let started = 0;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      resolve({ elapsedMs: performance.now() - started, answer });
    });
    socket.on('connect', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\nx-scope-orgid: acme\r\ncontent-type: ${type}\r\n` +
          `content-length: ${body.length}\r\n\r\n${body.slice(0, body.length / 2)}`,
      );
      started = performance.now();
    });
  });
}

/** Runs `run` with everything written to stdout and stderr caught, and answers what was. */
async function printedDuring(run: () => Promise<void>): Promise<string> {
  const printed: string[] = [];
  const originals = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  const capture = (chunk: unknown): boolean => {
    printed.push(String(chunk));
    return true;
  };
  process.stdout.write = capture;
  process.stderr.write = capture;
  try {
    await run();
  } finally {
    process.stdout.write = originals.out;
    process.stderr.write = originals.err;
  }
  return printed.join('');
}

describe('api body timeout', () => {
  let store: Store;
  before(async () => {
    store = await migratedStore('bodytimeout');
  });
  after(async () => {
    await store.close();
  });

  it('cuts a stalled body at the body timeout with a 408 and one JSON log line, nothing else printed', async () => {
    const keys = parseKeys(JSON.stringify([{ key, scopes: ['read'], tenants: ['*'] }]), 'test');
    if (!keys.ok) throw new Error(keys.error);
    // Two on one route, two on a compatibility API (its form bodies go through the shared body reader, as /v1's JSON does).
    const paths = ['/v1/tenants/acme/logs', '/v1/tenants/acme/logs', '/prometheus/api/v1/query', '/prometheus/api/v1/query_range'];
    const types = ['application/json', 'application/json', 'application/json', form];
    const lines: string[] = [];
    const allLogged = Promise.withResolvers<undefined>();
    const log = createLogger('debug', {}, (line) => {
      lines.push(line);
      if (lines.length >= paths.length) allLogged.resolve(undefined);
    });
    const proc = await testProcessContext(store, { keys: keys.value, log });
    const api = await startApiWith(
      proc.ctx,
      { port: 0, queryTimeoutMs: 1000, pageMaxBytes: 1_048_576, listener: { maxConnections: undefined, headersTimeoutMs: 5000, bodyTimeoutMs } },
      failingRunner(new Error('not reached'), 1000, log),
    );
    let cuts: Cut[] = [];
    // Anything else the process prints (Koa's default error printer writes stacks to stderr) is caught.
    const printed = await printedDuring(async () => {
      try {
        cuts = await Promise.all(paths.map((path, i) => halfBody(api.ports['api'] ?? 0, path, types[i])));
        // The log lines are written as the answers go out: wait for one per cut.
        await allLogged.promise;
        // What must not happen (a stack printed after the answer) has no event: give a late printer 200 ms to show itself.
        await new Promise((r) => setTimeout(r, 200));
      } finally {
        await api.stop();
        proc.stop();
      }
    });
    expect(cuts).to.have.length(paths.length);
    for (const [i, cut] of cuts.entries()) {
      expect(cut.elapsedMs).to.be.within(bodyTimeoutMs - 50, bodyTimeoutMs + slack);
      expect(cut.answer).to.match(/^HTTP\/1\.1 408 /);
      expect(cut.answer.toLowerCase()).to.contain('connection: close');
      expect(cut.answer).to.contain(`${bodyTimeoutMs} ms`);
      const requestId = /x-request-id: ([0-9a-f-]+)/i.exec(cut.answer)?.[1];
      if (paths[i]?.startsWith('/v1/') === true) {
        const body = JSON.parse(cut.answer.slice(cut.answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string; requestId: string } };
        expect(body.error.code).to.equal('request_timeout');
        expect(body.error.requestId).to.equal(requestId);
      }
      const about = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['requestId'] === requestId);
      expect(about, lines.join('\n')).to.have.length(1);
      expect(about[0]).to.include({ level: 'warn', path: paths[i], bodyTimeoutMs });
    }
    expect(lines, lines.join('\n')).to.have.length(paths.length);
    expect(printed, 'printed outside the logger').to.equal('');
  });

  it("logs one JSON line, and prints no stack, when the listener's backstop cuts a body the app still waits for", async () => {
    const keys = parseKeys(JSON.stringify([{ key, scopes: ['read'], tenants: ['*'] }]), 'test');
    if (!keys.ok) throw new Error(keys.error);
    const lines: string[] = [];
    const firstLogged = Promise.withResolvers<undefined>();
    const log = createLogger('debug', {}, (line) => {
      lines.push(line);
      firstLogged.resolve(undefined);
    });
    // The app's own deadline far away, the listener's short: only the backstop can cut.
    const app = createApp({
      schema: { database: 'tenantry', cluster: undefined },
      runner: failingRunner(new Error('not reached'), 1000, log),
      now: () => 0n,
      pageMaxBytes: 1_048_576,
      settings: fixedSettings(),
      keys: keys.value,
      log,
      metrics: httpMetrics(new Registry()),
      bodyTimeoutMs: 3_600_000,
    });
    const koa = app.callback();
    const http = await listen({
      handler: (req, res) => {
        void koa(req, res);
      },
      readiness: new Readiness([]),
      registry: new Registry(),
      log,
      host: '127.0.0.1',
      port: 0,
      name: 'api',
      limits: { maxConnections: undefined, headersTimeoutMs: 200, bodyTimeoutMs: 200 },
    });
    let cut: Cut | undefined;
    const printed = await printedDuring(async () => {
      try {
        cut = await halfBody(http.port, '/v1/tenants/acme/logs');
        // The cut's log line is written as the listener answers: wait for it.
        await firstLogged.promise;
      } finally {
        await http.close();
      }
    });
    expect(cut?.answer).to.match(/^HTTP\/1\.1 408 /);
    expect(lines, lines.join('\n')).to.have.length(1);
    expect(JSON.parse(lines[0] ?? '{}')).to.include({ level: 'warn', path: '/v1/tenants/acme/logs', code: 'ERR_HTTP_REQUEST_TIMEOUT' });
    expect(printed, 'printed outside the logger').to.equal('');
  });
});
