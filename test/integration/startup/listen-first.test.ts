// Every port of a process answers while it starts (issue 35): the ports open
// before the store, the schema and the write-ahead log's replay, so /healthz
// is 200 and /readyz 503 on the HTTP ports, data requests 503 with
// Retry-After, the gRPC health service NOT_SERVING and exports UNAVAILABLE.
// Start-up is held where the test controls it: ClickHouse is a server of the
// test's that takes the process's first statement and never answers. A
// process that has started reports NOT_SERVING on a gRPC health Watch when
// SIGTERM begins its drain.
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { freePorts } from '../../../support/server-process.ts';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';
import { grpcExport, tracePath } from '../gateway/support/grpc-client.ts';
import { healthCheck, healthWatch } from '../gateway/support/grpc-health-client.ts';
import { protobufHeaders, tracesJson, tracesProtobuf } from '../gateway/support/payloads.ts';

const key = 'listen-first-key-0123456789';
const keysEnv = { TENANTRY_API_KEYS: JSON.stringify([{ key, scopes: ['ingest', 'read', 'admin'], tenants: ['*'] }]) };

/** A ClickHouse stand-in that holds every request unanswered; `first` resolves when the process sends its first statement. */
async function silentClickHouse(): Promise<{ url: string; first: Promise<void>; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let arrived: () => void = () => undefined;
  const first = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const server: Server = createServer(() => {
    arrived();
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    first,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}

async function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; retryAfter: string | null }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
  return { status: response.status, body: await response.text(), retryAfter: response.headers.get('retry-after') };
}

describe('start-up: every port answers before the process is ready (issue 35)', function () {
  this.timeout(90_000);
  let dataDir: string;
  let running: TenantryProcess | undefined;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tenantry-listen-first-'));
  });
  afterEach(async () => {
    await running?.stop('SIGKILL');
    running = undefined;
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers /healthz 200, /readyz 503, data 503 with Retry-After and gRPC health NOT_SERVING while start-up waits on ClickHouse', async () => {
    const clickhouse = await silentClickHouse();
    try {
      const ports = await freePorts(['otlpHttp', 'otlpGrpc', 'api']);
      running = startTenantry(
        ['all'],
        testEnvironment(dataDir, {
          ...keysEnv,
          TENANTRY_CLICKHOUSE_URL: clickhouse.url,
          TENANTRY_OTLP_HTTP_PORT: String(ports.otlpHttp),
          TENANTRY_OTLP_GRPC_PORT: String(ports.otlpGrpc),
          TENANTRY_API_PORT: String(ports.api),
        }),
      );
      const exited = running.exited.then((code) => {
        throw new Error(`the process exited (${String(code)}): ${running?.stderr() ?? ''}`);
      });
      // The process is inside its start-up from here on, and stays there: its statement is never answered.
      await Promise.race([clickhouse.first, exited]);
      for (const port of [ports.otlpHttp, ports.api]) {
        expect(await get(port, '/healthz')).to.deep.include({ status: 200, body: 'ok\n' });
        const ready = await get(port, '/readyz');
        expect(ready.status).to.equal(503);
        expect(ready.body).to.contain('waiting for schema');
        expect((await get(port, '/metrics')).status).to.equal(200);
      }
      const traces = tracesProtobuf(tracesJson({ 'tenant.id': 'early' }, [{ name: 'too-early' }]));
      const early = await fetch(`http://127.0.0.1:${ports.otlpHttp}/v1/traces`, { method: 'POST', headers: protobufHeaders(key), body: traces });
      await early.arrayBuffer();
      expect(early.status).to.equal(503);
      expect(early.headers.get('retry-after')).to.equal('1');
      const query = await get(ports.api, '/v1/tenants', { authorization: `Bearer ${key}` });
      expect(query.status).to.equal(503);
      expect(query.retryAfter).to.equal('1');
      expect(JSON.parse(query.body)).to.have.nested.property('error.code', 'unavailable');

      const grpcAddress = `127.0.0.1:${ports.otlpGrpc}`;
      expect(await healthCheck(grpcAddress)).to.equal('NOT_SERVING');
      const exported = await grpcExport(`http://${grpcAddress}`, tracePath, traces, key);
      expect(exported.code).to.equal(grpc.status.UNAVAILABLE);

      expect(running.lines.map((l) => l['msg']))
        .to.include('listening; starting')
        .and.not.include('tenantry started');
    } finally {
      await running?.stop('SIGKILL');
      await clickhouse.close();
    }
  });

  it('turns gRPC health SERVING once started and NOT_SERVING on SIGTERM, ending the Watch, then exits 0', async () => {
    running = startTenantry(['all'], testEnvironment(dataDir, keysEnv));
    const ports = await running.started();
    const address = `127.0.0.1:${ports['otlpGrpc'] ?? 0}`;
    expect(await healthCheck(address)).to.equal('SERVING');
    const watch = healthWatch(address);
    expect(await watch.next()).to.equal('SERVING');
    const stopped = running.stop('SIGTERM');
    expect(await watch.next()).to.equal('NOT_SERVING');
    expect(await watch.ended).to.equal(grpc.status.OK);
    expect(await stopped).to.equal(0);
  });
});
