// Messages grpc-js refuses itself, before any handler or interceptor sees
// them (gateway/receivers/otlp-grpc-receiver.ts, header), are charged to
// their sender as OTLP/HTTP charges a refused body: a message over
// grpc.max_receive_message_length by its length prefix is charged the bytes
// the gateway received of it; one that inflates past the limit is charged the
// limit it was inflated to. With a small ingest limit, a key bound to one
// tenant is then refused before its next message is read, and the charge is
// the tenant's rejected usage (reason body_too_large). The refused call's
// stream alone is reset: the channel serves its next call.
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import { builtInDefaults, resolveEffective } from '../../../src/tenant/settings/tenant-settings.ts';
import type { TenantSettingsView } from '../../../src/tenant/settings/tenant-settings.ts';
import { exportOn, grpcExport, tracePath } from './support/grpc-client.ts';
import type { GrpcReply } from './support/grpc-client.ts';
import { keys, startTestGateway } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { tracesJson, tracesProtobuf } from './support/payloads.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const limit = 256 * KiB;
const spans = (): Buffer => tracesProtobuf(tracesJson({ 'tenant.id': 'tenant-a' }, [{ name: 'after-refusal' }]));
/** Every tenant may send 64 KiB at once and 1 KiB a second after. */
const limits = resolveEffective({ api: { limits: { ingestBytesPerSecond: KiB, ingestBurstBytes: 64 * KiB } } }, builtInDefaults);
const settings: TenantSettingsView = { effective: () => limits, generation: 0 };

async function rejectedBytes(gw: TestGateway): Promise<number> {
  const rs = await gw.store.client.query({
    query: `SELECT sum(bytes) AS bytes FROM ${queryTable(gw.store, 'usage_rejected_daily')} WHERE tenant_id = 'tenant-a' AND reason = 'body_too_large'`,
    format: 'JSONEachRow',
  });
  const [row] = await rs.json<{ bytes: string | number }>();
  return Number(row?.bytes ?? 0);
}

/** Exports small spans until one is refused before its message is read (the charge lands when the refused stream closes), within `timeoutMs`. */
async function refusedForDebt(gw: TestGateway, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reply = await grpcExport(gw.grpcUrl, tracePath, spans(), keys.tenantA);
    if (reply.code === grpc.status.RESOURCE_EXHAUSTED) return reply.details;
    expect(reply.code, reply.details).to.equal(grpc.status.OK);
    if (Date.now() > deadline) throw new Error(`still accepted after ${timeoutMs} ms: the refused message was not charged`);
    // The charge lands inside the gateway when the refused stream closes, with no event a client can see: poll, bounded above.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('gateway: gRPC messages grpc-js refuses itself are charged to their sender', function () {
  this.timeout(60_000);

  describe('a message that inflates past the size limit', () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway('grpc_refused_inflated', { settings, maxRequestBytes: limit });
    });
    after(async () => {
      await gw.close();
    });

    it('is charged the limit it was inflated to: RESOURCE_EXHAUSTED, then the tenant is refused before its next message', async () => {
      expect((await grpcExport(gw.grpcUrl, tracePath, spans(), keys.tenantA)).code).to.equal(grpc.status.OK);
      // 4 MiB of zeros, gzipped by the client to a few KiB: grpc-js inflates it up to the limit, then refuses it.
      const bomb = await grpcExport(gw.grpcUrl, tracePath, Buffer.alloc(4 * MiB), keys.tenantA, {
        'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip,
      });
      expect(bomb.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
      expect(bomb.details).to.contain('decompresses to a size larger than');
      expect(await refusedForDebt(gw, 5000)).to.match(/^tenant "tenant-a" is over its ingest limit/);
      await gw.stop();
      expect(await rejectedBytes(gw)).to.equal(limit);
    });
  });

  describe('a message over the size limit by its length prefix', () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway('grpc_refused_prefix', { settings, maxRequestBytes: limit });
    });
    after(async () => {
      await gw.close();
    });

    it('is charged the bytes received of it; its stream alone is reset and the channel serves the next call', async () => {
      const client = new grpc.Client(gw.grpcUrl.replace(/^http:\/\//, ''), grpc.credentials.createInsecure());
      const call = (body: Buffer): Promise<GrpcReply> => exportOn(client, tracePath, body, keys.admin);
      try {
        const refused = await call(Buffer.alloc(MiB));
        expect(refused.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
        expect(refused.details).to.match(/^Received message larger than max/);
        const next = await call(tracesProtobuf(tracesJson({ 'tenant.id': 'tenant-b' }, [{ name: 'same-channel' }])));
        expect(next.code, 'the same channel').to.equal(grpc.status.OK);
      } finally {
        client.close();
      }
      const tenantBound = await grpcExport(gw.grpcUrl, tracePath, Buffer.alloc(MiB), keys.tenantA);
      expect(tenantBound.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
      await gw.stop();
      // Charged what arrived before the reset: something, and not the megabyte the prefix announced.
      const charged = await rejectedBytes(gw);
      console.log(`      charged ${charged} bytes of a refused 1 MiB message`);
      expect(charged).to.be.greaterThan(0).and.below(MiB);
    });
  });
});
