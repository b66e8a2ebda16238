// The writer's queue bound (429 / RESOURCE_EXHAUSTED with retry info) and a
// failing ClickHouse (503 / UNAVAILABLE, nothing acknowledged).
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { RetryInfo, RpcStatus } from '../../../gateway/wire/otlp-messages.ts';
import type { RowSink } from '../../../gateway/writer/row-sink.ts';
import { startTestGateway, keys, select } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { grpcExport, tracePath } from './support/grpc-client.ts';
import { post, protobufHeaders, statusOf, tracesJson, tracesProtobuf } from './support/payloads.ts';

/** A sink whose inserts wait until released. */
function gatedSink(real: RowSink): { sink: RowSink; release: () => void } {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => { open = resolve; });
  return { sink: { insert: async (table, chunks) => { await gate; return real.insert(table, chunks); } }, release: () => { open(); } };
}

describe('gateway: backpressure and storage failures', function () {
  this.timeout(30_000);

  describe('queue over its bound', () => {
    let gw: TestGateway;
    let release: () => void = () => undefined;
    before(async () => {
      gw = await startTestGateway('queue', {
        writer: { maxQueueBytes: 100, maxBatchDelayMs: 0 },
        sink: (real) => { const gated = gatedSink(real); release = gated.release; return gated.sink; },
      });
    });
    after(async () => { release(); await gw.close(); });

    it('answers 429 with Retry-After and RetryInfo, and RESOURCE_EXHAUSTED with RetryInfo over gRPC; queued requests still succeed', async () => {
      const first = tracesJson({ 'tenant.id': 'q' }, [{ name: 'first' }, { name: 'first-2' }, { name: 'first-3' }]);
      const pending = post(`${gw.httpUrl}/v1/traces`, tracesProtobuf(first), protobufHeaders(keys.admin));
      await new Promise((r) => setTimeout(r, 100));
      const refused = await post(`${gw.httpUrl}/v1/traces`, tracesProtobuf(tracesJson({ 'tenant.id': 'q' }, [{ name: 'second' }, { name: 'second-2' }, { name: 'second-3' }])), protobufHeaders(keys.admin));
      expect(refused.status).to.equal(429);
      expect(refused.headers.get('retry-after')).to.equal('1');
      const status = statusOf(refused.body);
      expect(status.code).to.equal(8);
      expect(status.details).to.deep.equal(['type.googleapis.com/google.rpc.RetryInfo']);

      const viaGrpc = await grpcExport(gw.grpcUrl, tracePath, tracesProtobuf(tracesJson({ 'tenant.id': 'q' }, [{ name: 'third' }, { name: 'third-2' }, { name: 'third-3' }])), keys.admin);
      expect(viaGrpc.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
      const [details] = viaGrpc.trailers?.get('grpc-status-details-bin') ?? [];
      const decoded = RpcStatus.decode(details as Buffer);
      expect(decoded.details[0]?.type_url).to.equal('type.googleapis.com/google.rpc.RetryInfo');
      expect(Number(RetryInfo.decode(decoded.details[0]?.value ?? new Uint8Array()).retryDelay?.seconds)).to.equal(1);

      release();
      expect((await pending).status).to.equal(200);
      const rows = await select<{ span_name: string }>(gw.store, `SELECT span_name FROM ${gw.store.database}.spans WHERE tenant_id = 'q' ORDER BY span_name`);
      expect(rows.map((r) => r.span_name)).to.deep.equal(['first', 'first-2', 'first-3']);
    });
  });

  describe('ClickHouse failing', () => {
    let gw: TestGateway;
    before(async () => { gw = await startTestGateway('failing'); });
    after(async () => { await gw.close(); });

    it('answers 503 / UNAVAILABLE and acknowledges nothing while inserts fail', async () => {
      await gw.store.client.command({ query: `RENAME TABLE ${gw.store.database}.spans TO ${gw.store.database}.spans_away` });
      const bodies = [1, 2, 3].map((i) => tracesProtobuf(tracesJson({ 'tenant.id': 'down' }, [{ name: `during-${i}` }])));
      const answers = await Promise.all(bodies.map((b) => post(`${gw.httpUrl}/v1/traces`, b, protobufHeaders(keys.admin))));
      expect(answers.map((a) => a.status)).to.deep.equal([503, 503, 503]);
      expect(statusOf(answers[0]?.body ?? Buffer.alloc(0)).code).to.equal(14);
      expect((await grpcExport(gw.grpcUrl, tracePath, bodies[0] ?? Buffer.alloc(0), keys.admin)).code).to.equal(grpc.status.UNAVAILABLE);

      await gw.store.client.command({ query: `RENAME TABLE ${gw.store.database}.spans_away TO ${gw.store.database}.spans` });
      const rows = await select<{ n: string }>(gw.store, `SELECT toString(count()) AS n FROM ${gw.store.database}.spans WHERE tenant_id = 'down'`);
      expect(rows).to.deep.equal([{ n: '0' }]);
      expect((await post(`${gw.httpUrl}/v1/traces`, bodies[0] ?? Buffer.alloc(0), protobufHeaders(keys.admin))).status).to.equal(200);
    });
  });
});
