// OTLP/gRPC limits are per stream, not per connection (issue 35): a stream
// whose message stalls is answered DEADLINE_EXCEEDED and reset on its own,
// and the other calls on its channel go on; many concurrent exports on one
// channel are each answered OK or RESOURCE_EXHAUSTED (in-flight budget),
// never UNAVAILABLE because their connection was dropped.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as connectHttp2 } from 'node:http2';
import type { ClientHttp2Session, IncomingHttpHeaders } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { startGatewayWith } from '../../../gateway/gateway.ts';
import { clickHouseRowSink } from '../../../gateway/writer/clickhouse-row-sink.ts';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { testProcessContext } from '../../support/process-context.ts';
import { exportOn, tracePath } from './support/grpc-client.ts';
import type { GrpcReply } from './support/grpc-client.ts';
import { tracesJson, tracesProtobuf } from './support/payloads.ts';
import { gatewayConfig } from '../../../support/default-config.ts';

const key = 'grpc-streams-key-0123456789';
const stallTimeoutMs = 800;
const inflightLimit = 3 * 1024 * 1024;

const small = (): Buffer => tracesProtobuf(tracesJson({ 'tenant.id': 'streams' }, [{ name: 'beside-a-stalled-stream' }]));

/** A gRPC message prefix announcing `length` bytes. */
function prefix(length: number): Buffer {
  const b = Buffer.alloc(5);
  b.writeUInt32BE(length, 1);
  return b;
}

function bearer(): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${key}`);
  return metadata;
}

/** One unary Export on `client` with the test's key. */
const exportSmall = (client: grpc.Client, body: Buffer): Promise<GrpcReply> => exportOn(client, tracePath, body, key);

/** A raw HTTP/2 Export call on `session` whose answer (trailers-only, or trailers) and close are observed. */
function rawCall(session: ClientHttp2Session): { stream: ReturnType<ClientHttp2Session['request']>; status: Promise<number>; closed: Promise<number> } {
  const stream = session.request({ ':method': 'POST', ':path': tracePath, 'content-type': 'application/grpc', te: 'trailers', authorization: `Bearer ${key}` });
  stream.on('error', () => undefined);
  // Read the (empty) response body: a stream whose readable side is never consumed emits no 'close'.
  stream.resume();
  const status = new Promise<number>((resolve) => {
    stream.on('response', (h: IncomingHttpHeaders) => {
      if (h['grpc-status'] !== undefined) resolve(Number(h['grpc-status']));
    });
    stream.on('trailers', (h: IncomingHttpHeaders) => {
      resolve(Number(h['grpc-status']));
    });
  });
  const closed = new Promise<number>((resolve) => {
    stream.on('close', () => {
      resolve(stream.rstCode);
    });
  });
  return { stream, status, closed };
}

/** A gateway with the given body timeout and a 3 MiB in-flight budget; stop() also removes its log. */
async function startGateway(store: Store, bodyTimeoutMs: number): Promise<{ address: string; stop: () => Promise<void> }> {
  const parsed = parseKeys(JSON.stringify([{ key, scopes: ['ingest'], tenants: ['streams'] }]), 'test keys');
  if (!parsed.ok) throw new Error(parsed.error);
  const logDir = mkdtempSync(join(tmpdir(), 'tenantry-wal-'));
  const proc = await testProcessContext(store, { keys: parsed.value });
  const gateway = await startGatewayWith(
    proc.ctx,
    gatewayConfig({
      maxRequestBytes: 2 * 1024 * 1024,
      maxInflightBytes: inflightLimit,
      listener: { maxConnections: undefined, headersTimeoutMs: 5000, bodyTimeoutMs },
      writer: { logDir, maxBatchRows: 50_000, maxBatchBytes: 16 * 1024 * 1024, maxBatchDelayMs: 5, maxLogBytes: 256 * 1024 * 1024 },
    }),
    clickHouseRowSink(store),
  );
  return {
    address: `127.0.0.1:${gateway.ports['otlpGrpc'] ?? 0}`,
    stop: async () => {
      await gateway.stop();
      proc.stop();
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}

describe('OTLP/gRPC per-stream limits (issue 35)', function () {
  this.timeout(120_000);
  let store: Store;
  let gateway: { address: string; stop: () => Promise<void> };
  let address: string;

  before(async () => {
    store = await migratedStore('grpc_streams');
    gateway = await startGateway(store, stallTimeoutMs);
    address = gateway.address;
  });

  after(async () => {
    await gateway.stop();
    await store.close();
  });

  it('resets only the stalled stream (RST_STREAM NO_ERROR after DEADLINE_EXCEEDED); the next call on the same connection succeeds', async () => {
    const session = connectHttp2(`http://${address}`);
    session.on('error', () => undefined);
    try {
      const stalled = rawCall(session);
      // A message announced and never finished: the client keeps the stream open and sends nothing more.
      stalled.stream.write(prefix(100_000));
      expect(await stalled.status).to.equal(grpc.status.DEADLINE_EXCEEDED);
      expect(await stalled.closed).to.equal(0);
      expect(session.destroyed).to.equal(false);
      const next = rawCall(session);
      const body = small();
      next.stream.end(Buffer.concat([prefix(body.length), body]));
      expect(await next.status).to.equal(grpc.status.OK);
    } finally {
      session.destroy();
    }
  });

  it('keeps a channel with one stalled stream serving its other calls, before and after the stall is answered', async () => {
    const client = new grpc.Client(address, grpc.credentials.createInsecure());
    try {
      expect((await exportSmall(client, small())).code).to.equal(grpc.status.OK);
      let stalledEnded = false;
      // A client-streaming call that never sends its message: grpc-js sends the headers at once, then nothing.
      const stalled = new Promise<grpc.status>((resolve) => {
        client.makeClientStreamRequest(
          tracePath,
          (b: Buffer) => b,
          (b: Buffer) => b,
          bearer(),
          (error) => {
            stalledEnded = true;
            resolve(error?.code ?? grpc.status.OK);
          },
        );
      });
      const codes: grpc.status[] = [];
      // Exports run on the channel throughout the stall and for a while after its answer, when a dropped connection would fail them.
      const loop = async (): Promise<void> => {
        while (!stalledEnded) codes.push((await exportSmall(client, small())).code);
        const until = performance.now() + 1500;
        while (performance.now() < until) codes.push((await exportSmall(client, small())).code);
      };
      await Promise.all([loop(), loop(), loop(), loop()]);
      expect(await stalled).to.equal(grpc.status.DEADLINE_EXCEEDED);
      expect(codes.length).to.be.above(4);
      expect(codes.filter((c) => c !== grpc.status.OK).map((c) => grpc.status[c])).to.deep.equal([]);
      expect(client.getChannel().getConnectivityState(false)).to.equal(grpc.connectivityState.READY);
    } finally {
      client.close();
    }
  });

  describe('with a body timeout longer than the burst', () => {
    let roomy: { address: string; stop: () => Promise<void> };
    before(async () => {
      roomy = await startGateway(store, 20_000);
    });
    after(async () => {
      await roomy.stop();
    });

    it('answers each of 120 concurrent 256 KiB exports on one channel OK or RESOURCE_EXHAUSTED, none UNAVAILABLE, each on its own stream', async () => {
      const client = new grpc.Client(roomy.address, grpc.credentials.createInsecure());
      try {
        const spans = Array.from({ length: 1200 }, (_, i) => ({ name: `span-${i}-${'x'.repeat(160)}` }));
        const big = tracesProtobuf(tracesJson({ 'tenant.id': 'streams' }, spans));
        expect(big.length).to.be.within(200 * 1024, 400 * 1024);
        const results = await Promise.all(Array.from({ length: 120 }, () => exportSmall(client, big)));
        const tally: Record<string, number> = {};
        for (const r of results) tally[grpc.status[r.code]] = (tally[grpc.status[r.code]] ?? 0) + 1;
        expect(
          Object.keys(tally).filter((k) => k !== 'OK' && k !== 'RESOURCE_EXHAUSTED'),
          JSON.stringify(tally),
        ).to.deep.equal([]);
        expect(tally['OK'] ?? 0, JSON.stringify(tally)).to.be.above(0);
        // Refusals were per stream: the channel kept its one connection.
        expect(client.getChannel().getConnectivityState(false)).to.equal(grpc.connectivityState.READY);
      } finally {
        client.close();
      }
    });
  });
});
