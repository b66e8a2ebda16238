// Bodies of zero bytes (protobuf field number 0, which no message has) are
// undecodable on every ingest path: 400 on OTLP/HTTP, INVALID_ARGUMENT on
// OTLP/gRPC, 400 on remote write, never an empty request answered 200 / 204.
// And what they cost is charged: with a small ingest limit, one such body
// puts its sender in debt, so its next request is refused 429 before its
// body is read: the tenant of a key bound to one tenant, the tenant remote
// write names, or the key itself when no tenant is known (a key of several
// tenants). The charge shows in the tenant's rejected usage.
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import { builtInDefaults, resolveEffective } from '../../../src/tenant/settings/tenant-settings.ts';
import type { TenantSettingsView } from '../../../src/tenant/settings/tenant-settings.ts';
import { grpcExport, logsPath, tracePath } from './support/grpc-client.ts';
import { keys, startTestGateway } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { gzipZeros } from './support/gzip-zeros.ts';
import { post, protobufHeaders, statusOf, tracesJson, tracesProtobuf } from './support/payloads.ts';
import { encodeWriteRequest, pushRemoteWrite, remoteWriteHeaders, snappyBlock } from '../../../support/remote-write-request.ts';

const MiB = 1024 * 1024;
const gzipHeaders = (key: string): Record<string, string> => ({ ...protobufHeaders(key), 'content-encoding': 'gzip' });
const bearer = (key: string, extra: Record<string, string> = {}): Record<string, string> => remoteWriteHeaders({ authorization: `Bearer ${key}`, ...extra });
const spansOf = (tenant: string): Buffer => tracesProtobuf(tracesJson({ 'tenant.id': tenant }, [{ name: 'after-zeros' }]));
const series = (name: string): Buffer =>
  snappyBlock(encodeWriteRequest([{ labels: { __name__: name, job: 'j' }, samples: [{ value: 1, timestampMs: Date.now() - 1000 }] }]));

describe('gateway: bodies of zero bytes', function () {
  this.timeout(60_000);

  describe('are undecodable on every path', () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway('zero_bodies');
    });
    after(async () => {
      await gw.close();
    });

    for (const signal of ['traces', 'logs', 'metrics'] as const) {
      it(`OTLP/HTTP ${signal}: 400 INVALID_ARGUMENT naming field number 0, plain and gzipped`, async () => {
        for (const [body, headers] of [
          [Buffer.alloc(4096), protobufHeaders(keys.admin)],
          [await gzipZeros(MiB), gzipHeaders(keys.admin)],
        ] as const) {
          const reply = await post(`${gw.httpUrl}/v1/${signal}`, body, headers);
          expect(reply.status).to.equal(400);
          const status = statusOf(reply.body);
          expect(status.code).to.equal(3);
          expect(status.message).to.match(/^invalid protobuf: field number 0 at byte 0/);
        }
      });
    }

    it('OTLP/gRPC: INVALID_ARGUMENT', async () => {
      for (const path of [tracePath, logsPath]) {
        const reply = await grpcExport(gw.grpcUrl, path, Buffer.alloc(4096), keys.admin);
        expect(reply.code).to.equal(grpc.status.INVALID_ARGUMENT);
        expect(reply.details).to.match(/field number 0/);
      }
    });

    it('remote write: 400', async () => {
      const reply = await pushRemoteWrite(gw.httpUrl, snappyBlock(Buffer.alloc(4096)), bearer(keys.tenantA));
      expect(reply.status).to.equal(400);
      expect(reply.text).to.match(/field number 0/);
    });
  });

  describe('are charged to their sender', () => {
    // Every tenant (and every key's own bucket) may send 64 KiB at once and 1 KiB a second after: one 1 MiB body is a debt of ~15 minutes.
    const limits = resolveEffective({ api: { limits: { ingestBytesPerSecond: 1024, ingestBurstBytes: 64 * 1024 } } }, builtInDefaults);
    const settings: TenantSettingsView = { effective: () => limits, generation: 0 };
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway('zero_bodies_charged', { settings });
    });
    after(async () => {
      await gw.close();
    });

    it('a key bound to one tenant: 400, then its tenant is over its limit (429 before the body)', async () => {
      expect((await post(`${gw.httpUrl}/v1/traces`, spansOf('tenant-a'), protobufHeaders(keys.tenantA))).status).to.equal(200);
      const zeros = await post(`${gw.httpUrl}/v1/traces`, await gzipZeros(MiB), gzipHeaders(keys.tenantA));
      expect(zeros.status).to.equal(400);
      const next = await post(`${gw.httpUrl}/v1/logs`, await gzipZeros(MiB), gzipHeaders(keys.tenantA));
      expect(next.status).to.equal(429);
      expect(Number(next.headers.get('retry-after'))).to.be.greaterThan(60);
      expect(statusOf(next.body).message).to.match(/^tenant "tenant-a" is over its ingest limit/);
    });

    it('remote write: the tenant X-Scope-OrgID names is charged, not the key', async () => {
      const headers = (tenant: string): Record<string, string> => bearer(keys.admin, { 'X-Scope-OrgID': tenant });
      expect((await pushRemoteWrite(gw.httpUrl, snappyBlock(Buffer.alloc(MiB)), headers('tenant-r'))).status).to.equal(400);
      const next = await pushRemoteWrite(gw.httpUrl, series('after_zeros'), headers('tenant-r'));
      expect(next.status).to.equal(429);
      expect(next.text).to.match(/^tenant "tenant-r" is over its ingest limit/);
      expect((await pushRemoteWrite(gw.httpUrl, series('other_tenant'), headers('tenant-s'))).status).to.equal(204);
    });

    it('a key of several tenants, no tenant known: the key is charged and refused, on gRPC and HTTP', async () => {
      const zeros = await grpcExport(gw.grpcUrl, tracePath, Buffer.alloc(MiB), keys.admin);
      expect(zeros.code).to.equal(grpc.status.INVALID_ARGUMENT);
      const next = await grpcExport(gw.grpcUrl, tracePath, spansOf('tenant-k'), keys.admin);
      expect(next.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
      expect(next.details).to.match(/^API key "key #1" is over the ingest limit of the bytes it sent for no tenant/);
      const http = await post(`${gw.httpUrl}/v1/traces`, spansOf('tenant-k'), protobufHeaders(keys.admin));
      expect(http.status).to.equal(429);
      expect(Number(http.headers.get('retry-after'))).to.be.greaterThan(60);
    });

    it("the charged bytes are the tenants' rejected usage (reason invalid_body)", async () => {
      await gw.stop();
      const rs = await gw.store.client.query({
        query: `SELECT tenant_id, signal, sum(items) AS items, sum(bytes) AS bytes FROM ${queryTable(gw.store, 'usage_rejected_daily')}
          WHERE reason = 'invalid_body' GROUP BY tenant_id, signal ORDER BY tenant_id`,
        format: 'JSONEachRow',
      });
      const rows = await rs.json<{ tenant_id: string; signal: string; items: string | number; bytes: string | number }>();
      expect(rows.map((r) => ({ ...r, items: Number(r.items), bytes: Number(r.bytes) }))).to.deep.equal([
        { tenant_id: 'tenant-a', signal: 'traces', items: 0, bytes: MiB },
        { tenant_id: 'tenant-r', signal: 'metrics', items: 0, bytes: MiB },
      ]);
    });
  });

  describe('a body refused while it was inflated', () => {
    const limits = resolveEffective({ api: { limits: { ingestBytesPerSecond: 1024, ingestBurstBytes: 64 * 1024 } } }, builtInDefaults);
    const settings: TenantSettingsView = { effective: () => limits, generation: 0 };
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway('zero_bodies_too_large', { settings, maxRequestBytes: 256 * 1024 });
    });
    after(async () => {
      await gw.close();
    });

    it('is charged what was inflated: 413, then 429, and counted as body_too_large', async () => {
      const bomb = await post(`${gw.httpUrl}/v1/traces`, await gzipZeros(4 * MiB), gzipHeaders(keys.tenantA));
      expect(bomb.status).to.equal(413);
      const next = await post(`${gw.httpUrl}/v1/traces`, spansOf('tenant-a'), protobufHeaders(keys.tenantA));
      expect(next.status).to.equal(429);
      await gw.stop();
      const rs = await gw.store.client.query({
        query: `SELECT sum(bytes) AS bytes FROM ${queryTable(gw.store, 'usage_rejected_daily')} WHERE tenant_id = 'tenant-a' AND reason = 'body_too_large'`,
        format: 'JSONEachRow',
      });
      const [row] = await rs.json<{ bytes: string | number }>();
      // The inflater stops within a chunk (64 KiB) past the limit.
      expect(Number(row?.bytes)).to.be.within(256 * 1024, 256 * 1024 + 64 * 1024);
    });
  });
});
