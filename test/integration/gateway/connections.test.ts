// Connection hygiene on real listeners (issue 12): slowloris headers and
// bodies are closed within their timeouts, a flood of connections on one
// port leaves the others answering, the in-flight byte budget answers 429 /
// RESOURCE_EXHAUSTED while a small request of another tenant succeeds, and
// a bad key is refused before its body is read — on OTLP/HTTP and OTLP/gRPC,
// with the API beside them as in target `all`. Timeouts are set short here;
// every wait is for an event (a socket's 'close', a response).
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect as connectHttp2 } from 'node:http2';
import type { ClientHttp2Session, IncomingHttpHeaders } from 'node:http2';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { startApi } from '../../../api/api.ts';
import { startGatewayWith } from '../../../gateway/gateway.ts';
import { clickHouseRowSink } from '../../../gateway/writer/clickhouse-row-sink.ts';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { decodeConfig } from '../../../src/config/config.ts';
import type { RunningComponent } from '../../../src/target/component.ts';
import { slowloris } from '../../../support/slowloris.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { testProcessContext } from '../../support/process-context.ts';
import { grpcExport, tracePath } from './support/grpc-client.ts';
import { protobufHeaders, statusOf, tracesJson, tracesProtobuf } from './support/payloads.ts';

const keys = { a: 'conn-tenant-a-key-0123456789', b: 'conn-tenant-b-key-0123456789', reader: 'conn-reader-key-0123456789' } as const;
const keyText = JSON.stringify([
  { key: keys.a, scopes: ['ingest'], tenants: ['a'] },
  { key: keys.b, scopes: ['ingest'], tenants: ['b'] },
  { key: keys.reader, scopes: ['read'], tenants: ['*'] },
]);

const headersTimeoutMs = 300;
const bodyTimeoutMs = 600;
const maxConnections = 24;
const inflightLimit = 1024 * 1024;
/** Node checks its headers timeout on a timer (a quarter of it here); the rest is scheduling slack on a busy machine. */
const slack = 1500;

/** The listeners of target `all` on one store, configured the way the process decodes them. */
async function startAll(
  store: Store,
  dataDir: string,
): Promise<{ gateway: RunningComponent; api: RunningComponent; registry: Registry; stopSettings: () => void }> {
  const decoded = decodeConfig('all', {
    TENANTRY_DATA_DIR: dataDir,
    TENANTRY_MAX_CONNECTIONS: String(maxConnections),
    TENANTRY_HEADERS_TIMEOUT_MS: String(headersTimeoutMs),
    TENANTRY_BODY_TIMEOUT_MS: String(bodyTimeoutMs),
    TENANTRY_MAX_INFLIGHT_BYTES: String(inflightLimit),
    TENANTRY_MAX_REQUEST_BYTES: String(inflightLimit),
    TENANTRY_BATCH_MAX_DELAY_MS: '5',
  });
  if (!decoded.ok || decoded.value.target !== 'all') throw new Error(decoded.ok ? 'wrong target' : decoded.error.join('; '));
  const parsed = parseKeys(keyText, 'test keys');
  if (!parsed.ok) throw new Error(parsed.error);
  const registry = new Registry();
  const config = decoded.value;
  const { ctx, stop: stopSettings } = await testProcessContext(store, {
    keys: parsed.value,
    registry,
    queries: config.queries,
    batchDelayMs: config.gateway.writer.maxBatchDelayMs,
  });
  const gateway = await startGatewayWith(ctx, { ...config.gateway, otlpHttpPort: 0, otlpGrpcPort: 0 }, clickHouseRowSink(store));
  const api = await startApi(ctx, { ...config.api, port: 0 });
  return { gateway, api, registry, stopSettings };
}

/** POSTs on a connection of its own, closed after the answer: the connection counts of these tests stay exact. */
function post(url: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res
        .on('data', (c: Buffer) => {
          chunks.push(c);
        })
        .on('end', () => {
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
        });
    });
    req.on('error', reject).end(body);
  });
}

/** Resolves once the listener's open-connection gauge shows `count`. */
async function connectionsReach(registry: Registry, listener: string, count: number): Promise<void> {
  for (;;) {
    const gauge = await registry.getSingleMetricAsString('tenantry_listener_connections');
    if (gauge.includes(`listener="${listener}"} ${count}\n`) || gauge.endsWith(`listener="${listener}"} ${count}`)) return;
    await new Promise((resolve) => {
      setImmediate(resolve);
    });
  }
}

const spans = (tenant: string): Buffer => tracesProtobuf(tracesJson({ 'tenant.id': tenant }, [{ name: 'well-behaved' }]));

/** A connection that sends `head` and then whatever the test writes; resolves its first answer and its close. */
function rawRequest(port: number, head: string): { socket: Socket; answer: Promise<string>; closed: Promise<number> } {
  const socket = connect(port, '127.0.0.1');
  const opened = performance.now();
  let received = '';
  socket.setEncoding('latin1');
  socket.on('error', () => undefined);
  socket.write(head);
  const answer = new Promise<string>((resolve) => {
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (received.includes('\r\n\r\n')) resolve(received);
    });
    socket.on('close', () => {
      resolve(received);
    });
  });
  const closed = new Promise<number>((resolve) => {
    socket.on('close', () => {
      resolve(performance.now() - opened);
    });
  });
  return { socket, answer, closed };
}

const head = (key: string, extra: string): string =>
  `POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-protobuf\r\nAuthorization: Bearer ${key}\r\n${extra}\r\n`;

/** Writes `chunk` for as long as the socket is open and accepts it (a body that never ends). */
function sendForever(socket: Socket, chunk: Buffer): { written: () => number } {
  let written = 0;
  const pump = (): void => {
    while (!socket.destroyed && socket.writable) {
      written += chunk.length;
      if (!socket.write(chunk)) {
        socket.once('drain', pump);
        return;
      }
    }
  };
  pump();
  return { written: () => written };
}

/** Resolves once the gateway's in-flight gauge shows `bytes` (a reservation was made). */
async function inflightReaches(registry: Registry, bytes: number): Promise<void> {
  for (;;) {
    const gauge = await registry.getSingleMetricAsString('tenantry_gateway_inflight_request_bytes');
    if (new RegExp(` ${bytes}$`, 'm').test(gauge)) return;
    await new Promise((resolve) => {
      setImmediate(resolve);
    });
  }
}

/** Tenant a holds 900 KiB of the 1 MiB budget with a body it is slow to send. */
async function holdBudget(port: number, registry: Registry): Promise<ReturnType<typeof rawRequest>> {
  const holder = rawRequest(port, head(keys.a, `Content-Length: ${900 * 1024}\r\n`));
  holder.socket.write(Buffer.alloc(1024));
  await inflightReaches(registry, 900 * 1024);
  return holder;
}

describe('gateway: connection hygiene', function () {
  this.timeout(20_000);
  let store: Store;
  let dataDir: string;
  let all: Awaited<ReturnType<typeof startAll>>;
  let httpPort: number;
  let grpcUrl: string;
  let apiPort: number;

  before(async () => {
    store = await migratedStore('connections');
    dataDir = mkdtempSync(join(tmpdir(), 'tenantry-conn-'));
    all = await startAll(store, dataDir);
    httpPort = all.gateway.ports['otlpHttp'] ?? 0;
    grpcUrl = `127.0.0.1:${all.gateway.ports['otlpGrpc'] ?? 0}`;
    apiPort = all.api.ports['api'] ?? 0;
  });
  after(async () => {
    await all.api.stop();
    await all.gateway.stop();
    all.stopSettings();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('OTLP/HTTP', () => {
    it('answers 408 and closes a connection whose headers never end, within the headers timeout', async () => {
      const result = await slowloris({ host: '127.0.0.1', port: httpPort, mode: 'headers', intervalMs: 50, limitMs: 10_000 });
      expect(result.closedByServer).to.equal(true);
      expect(result.response).to.match(/^HTTP\/1\.1 408 /);
      expect(result.closedAfterMs).to.be.within(headersTimeoutMs - 50, headersTimeoutMs + slack);
    });

    it('closes a connection that never sends a byte within the headers timeout', async () => {
      const result = await slowloris({ host: '127.0.0.1', port: httpPort, mode: 'silent', limitMs: 10_000 });
      expect(result.closedByServer).to.equal(true);
      expect(result.closedAfterMs).to.be.within(headersTimeoutMs - 50, headersTimeoutMs + slack);
    });

    it('answers 408 and closes an authenticated chunked body that never ends, within the body timeout, while another tenant is served', async () => {
      const slow = slowloris({
        host: '127.0.0.1',
        port: httpPort,
        mode: 'body',
        headers: { authorization: `Bearer ${keys.a}` },
        intervalMs: 50,
        limitMs: 10_000,
      });
      const other = await post(`http://127.0.0.1:${httpPort}/v1/traces`, spans('b'), protobufHeaders(keys.b));
      expect(other.status).to.equal(200);
      const result = await slow;
      expect(result.closedByServer).to.equal(true);
      expect(result.response).to.match(/^HTTP\/1\.1 408 /);
      expect(result.closedAfterMs).to.be.within(bodyTimeoutMs - 50, bodyTimeoutMs + slack);
      const metrics = await all.registry.getSingleMetricAsString('tenantry_listener_body_timeouts_total');
      expect(metrics).to.match(/listener="otlp-http"} [1-9]/);
    });

    it('answers 401 at once to an unknown key with a body that never ends, and closes without reading it', async () => {
      const req = rawRequest(httpPort, head('not-a-key-0123456789', 'Transfer-Encoding: chunked\r\n'));
      const pump = sendForever(req.socket, Buffer.from(`10000\r\n${'x'.repeat(0x10000)}\r\n`));
      const started = performance.now();
      const answer = await req.answer;
      expect(answer).to.match(/^HTTP\/1\.1 401 /);
      expect(performance.now() - started).to.be.below(1000);
      await req.closed;
      // Read and dropped after the answer: at most the linger budget (1 MiB) plus what the socket buffers held.
      expect(pump.written()).to.be.below(16 * 1024 * 1024);
    });

    it('answers 401 to an unknown key declaring a 1 GB body before its size is even considered', async () => {
      const req = rawRequest(httpPort, head('not-a-key-0123456789', 'Content-Length: 1000000000\r\n'));
      sendForever(req.socket, Buffer.alloc(64 * 1024));
      expect(await req.answer).to.match(/^HTTP\/1\.1 401 /);
      await req.closed;
    });

    it('answers 429 with Retry-After, without reading, a request whose Content-Length the in-flight budget cannot hold, while a small request of another tenant succeeds', async () => {
      const holder = await holdBudget(httpPort, all.registry);
      const refused = rawRequest(httpPort, head(keys.a, `Content-Length: ${300 * 1024}\r\n`));
      const answer = await refused.answer;
      expect(answer).to.match(/^HTTP\/1\.1 429 /);
      expect(answer.toLowerCase()).to.include('retry-after: 1');
      refused.socket.destroy();
      const small = await post(`http://127.0.0.1:${httpPort}/v1/traces`, spans('b'), protobufHeaders(keys.b));
      expect(small.status).to.equal(200);
      // The holder's body never completes: the body timeout answers 408 and gives its bytes back.
      expect(await holder.answer).to.match(/^HTTP\/1\.1 408 /);
      await holder.closed;
      const after = await post(`http://127.0.0.1:${httpPort}/v1/traces`, spans('a'), protobufHeaders(keys.a));
      expect(after.status).to.equal(200);
    });

    it('counts a chunked body against the budget as it arrives: 429 once it passes what is left', async () => {
      const holder = await holdBudget(httpPort, all.registry);
      const req = rawRequest(httpPort, head(keys.b, 'Transfer-Encoding: chunked\r\n'));
      const chunk = Buffer.concat([Buffer.from('4000\r\n'), Buffer.alloc(0x4000), Buffer.from('\r\n')]);
      sendForever(req.socket, chunk);
      const answer = await req.answer;
      expect(answer).to.match(/^HTTP\/1\.1 429 /);
      await req.closed;
      holder.socket.destroy();
      await holder.closed;
      await inflightReaches(all.registry, 0);
    });

    it('at the cap, closes a new connection on arrival while the API, its ops paths and OTLP/gRPC keep answering, then reclaims the idle ones', async () => {
      await connectionsReach(all.registry, 'otlp-http', 0);
      // The flood: as many idle keep-alive connections as the cap allows, each after one unauthenticated request.
      const flood = await Promise.all(
        Array.from({ length: maxConnections }, async () => {
          const conn = rawRequest(httpPort, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
          expect(await conn.answer).to.match(/^HTTP\/1\.1 200 /);
          return conn;
        }),
      );
      expect((await fetch(`http://127.0.0.1:${apiPort}/healthz`)).status).to.equal(200);
      expect((await fetch(`http://127.0.0.1:${apiPort}/v1/tenants`, { headers: { authorization: `Bearer ${keys.reader}` } })).status).to.be.below(500);
      expect((await grpcExport(`http://${grpcUrl}`, tracePath, spans('b'), keys.b)).code).to.equal(grpc.status.OK);

      const extra = rawRequest(httpPort, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(await extra.answer).to.equal('');
      await extra.closed;
      expect(await all.registry.getSingleMetricAsString('tenantry_listener_connections_refused_total')).to.match(/listener="otlp-http"} [1-9]/);
      // Refusing it reclaimed the idle flood, so the port answers again at once.
      await Promise.all(flood.map((conn) => conn.closed));
      const again = await post(`http://127.0.0.1:${httpPort}/v1/traces`, spans('b'), protobufHeaders(keys.b));
      expect(again.status).to.equal(200);
    });

    it('never cuts a request being handled when it reclaims idle connections at the cap', async () => {
      const body = spans('a');
      const holder = rawRequest(httpPort, head(keys.a, `Content-Length: ${body.length}\r\n`));
      holder.socket.write(body.subarray(0, 10));
      await inflightReaches(all.registry, body.length);
      const flood = Array.from({ length: maxConnections + 4 }, () => rawRequest(httpPort, ''));
      await Promise.all(flood.map((conn) => conn.closed));
      // The holder's request survived the reclaim: it is answered once its body is complete.
      holder.socket.write(body.subarray(10));
      expect(await holder.answer).to.match(/^HTTP\/1\.1 200 /);
      holder.socket.destroy();
    });
  });

  describe('OTLP/gRPC', () => {
    let session: ClientHttp2Session | undefined;
    afterEach(() => {
      session?.destroy();
      session = undefined;
    });

    /** Opens an Export call on a raw HTTP/2 connection: its response headers (trailers-only answers carry grpc-status), and the stream. */
    function openCall(key: string): { headers: Promise<IncomingHttpHeaders>; stream: ReturnType<ClientHttp2Session['request']> } {
      session = connectHttp2(`http://${grpcUrl}`);
      session.on('error', () => undefined);
      const stream = session.request({
        ':method': 'POST',
        ':path': tracePath,
        'content-type': 'application/grpc',
        te: 'trailers',
        authorization: `Bearer ${key}`,
      });
      stream.on('error', () => undefined);
      const headers = new Promise<IncomingHttpHeaders>((resolve) => {
        stream.on('response', (h) => {
          if (h['grpc-status'] !== undefined) resolve(h);
        });
        stream.on('trailers', (h: IncomingHttpHeaders) => {
          resolve(h);
        });
      });
      return { headers, stream };
    }

    /** A gRPC message prefix announcing `length` bytes. */
    const prefix = (length: number): Buffer => {
      const b = Buffer.alloc(5);
      b.writeUInt32BE(length, 1);
      return b;
    };

    it('closes a connection that never sends the HTTP/2 preface within the headers timeout', async () => {
      const grpcPort = Number(grpcUrl.split(':')[1]);
      const result = await slowloris({ host: '127.0.0.1', port: grpcPort, mode: 'silent', limitMs: 10_000 });
      expect(result.closedByServer).to.equal(true);
      expect(result.closedAfterMs).to.be.within(headersTimeoutMs - 50, headersTimeoutMs + slack);
    });

    it('answers UNAUTHENTICATED on the metadata alone to an unknown key sending a message that never ends', async () => {
      const call = openCall('not-a-key-0123456789');
      call.stream.write(prefix(1_000_000));
      const trickle = setInterval(() => {
        call.stream.write(Buffer.alloc(1024));
      }, 20);
      const started = performance.now();
      const headers = await call.headers;
      clearInterval(trickle);
      expect(Number(headers['grpc-status'])).to.equal(grpc.status.UNAUTHENTICATED);
      expect(performance.now() - started).to.be.below(1000);
    });

    it('answers DEADLINE_EXCEEDED to a message that trickles past the body timeout and resets its stream, keeping the connection, while another tenant is served', async () => {
      const call = openCall(keys.a);
      const opened = session;
      call.stream.write(prefix(100_000));
      const trickle = setInterval(() => {
        if (call.stream.writable) call.stream.write(Buffer.alloc(16));
      }, 20);
      // Read the (empty) response body: a stream whose readable side is never consumed emits no 'close'.
      call.stream.resume();
      const streamClosed = new Promise<number>((resolve) => {
        call.stream.on('close', () => {
          resolve(call.stream.rstCode);
        });
      });
      const started = performance.now();
      const other = await grpcExport(`http://${grpcUrl}`, tracePath, spans('b'), keys.b);
      expect(other.code).to.equal(grpc.status.OK);
      const headers = await call.headers;
      expect(Number(headers['grpc-status'])).to.equal(grpc.status.DEADLINE_EXCEEDED);
      expect(performance.now() - started).to.be.within(bodyTimeoutMs - 50, bodyTimeoutMs + slack);
      // The server asks the client to stop sending that one request (RST_STREAM NO_ERROR); the connection stays open.
      expect(await streamClosed).to.equal(0);
      clearInterval(trickle);
      expect(opened?.destroyed).to.equal(false);
      expect(await all.registry.getSingleMetricAsString('tenantry_listener_body_timeouts_total')).to.match(/listener="otlp-grpc"} [1-9]/);
    });

    it('answers RESOURCE_EXHAUSTED with RetryInfo when the in-flight budget cannot hold the message, while a small one of another tenant succeeds', async () => {
      const holder = await holdBudget(httpPort, all.registry);
      const big = tracesProtobuf(
        tracesJson(
          { 'tenant.id': 'a' },
          Array.from({ length: 2000 }, (_, i) => ({ name: `span-${i}-${'x'.repeat(100)}` })),
        ),
      );
      expect(big.length).to.be.above(200 * 1024);
      const refused = await grpcExport(`http://${grpcUrl}`, tracePath, big, keys.a);
      expect(refused.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
      expect(refused.details).to.include('in flight');
      expect(refused.trailers?.get('grpc-status-details-bin')).to.have.length(1);
      const small = await grpcExport(`http://${grpcUrl}`, tracePath, spans('b'), keys.b);
      expect(small.code).to.equal(grpc.status.OK);
      holder.socket.destroy();
      await holder.closed;
    });
  });

  it('answers with google.rpc.Status bodies (401 in protobuf) that name the problem', async () => {
    const res = await post(`http://127.0.0.1:${httpPort}/v1/traces`, spans('a'), protobufHeaders('not-a-key-0123456789'));
    expect(res.status).to.equal(401);
    expect(statusOf(res.body)).to.include({ code: 16, message: 'unknown API key' });
  });
});
