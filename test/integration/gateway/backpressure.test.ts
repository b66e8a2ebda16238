// The write-ahead log's bound (429 / RESOURCE_EXHAUSTED with retry info),
// and a failing ClickHouse: requests are still acknowledged into the log,
// the process is unready, and every acknowledged row is stored exactly once
// when ClickHouse takes writes again.
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { RetryInfo, RpcStatus } from '../../../gateway/wire/otlp-messages.ts';
import type { RowSink } from '../../../gateway/writer/row-sink.ts';
import { startTestGateway, keys, select } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { grpcExport, tracePath } from './support/grpc-client.ts';
import { post, protobufHeaders, statusOf, tracesJson, tracesProtobuf } from './support/payloads.ts';

/** A sink whose inserts wait until released; `started` resolves when the first insert is waiting. */
function gatedSink(real: RowSink): { sink: RowSink; release: () => void; started: Promise<void> } {
  let open: () => void = () => undefined;
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  const sink: RowSink = {
    insert: async (table, chunks, token) => {
      markStarted();
      await gate;
      return real.insert(table, chunks, token);
    },
  };
  return {
    sink,
    release: () => {
      open();
    },
    started,
  };
}

const manySpans = (prefix: string): { name: string }[] => Array.from({ length: 30 }, (_, i) => ({ name: `${prefix}-${i}-${'x'.repeat(40)}` }));

describe('gateway: backpressure and storage failures', function () {
  this.timeout(30_000);

  describe('write-ahead log over its bound', () => {
    let gw: TestGateway;
    let release: () => void = () => undefined;
    let insertStarted: Promise<void> = Promise.resolve();
    before(async () => {
      gw = await startTestGateway('queue', {
        // Room for the first small request, not for a second 30-span one while ClickHouse holds the first.
        writer: { maxLogBytes: 2000, maxBatchDelayMs: 0 },
        sink: (real) => {
          const gated = gatedSink(real);
          release = gated.release;
          insertStarted = gated.started;
          return gated.sink;
        },
      });
    });
    after(async () => {
      release();
      await gw.close();
    });

    it('answers 429 with Retry-After and RetryInfo, and RESOURCE_EXHAUSTED with RetryInfo over gRPC; logged requests are stored', async () => {
      const first = tracesJson({ 'tenant.id': 'q' }, [{ name: 'first' }, { name: 'first-2' }, { name: 'first-3' }]);
      expect((await post(`${gw.httpUrl}/v1/traces`, tracesProtobuf(first), protobufHeaders(keys.admin))).status).to.equal(200);
      await insertStarted; // its block is now held by ClickHouse, and still counts against the log's bound
      const refused = await post(`${gw.httpUrl}/v1/traces`, tracesProtobuf(tracesJson({ 'tenant.id': 'q' }, manySpans('second'))), protobufHeaders(keys.admin));
      expect(refused.status).to.equal(429);
      expect(refused.headers.get('retry-after')).to.equal('1');
      const status = statusOf(refused.body);
      expect(status.code).to.equal(8);
      expect(status.details).to.deep.equal(['type.googleapis.com/google.rpc.RetryInfo']);

      const viaGrpc = await grpcExport(gw.grpcUrl, tracePath, tracesProtobuf(tracesJson({ 'tenant.id': 'q' }, manySpans('third'))), keys.admin);
      expect(viaGrpc.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
      const [details] = viaGrpc.trailers?.get('grpc-status-details-bin') ?? [];
      const decoded = RpcStatus.decode(details as Buffer);
      expect(decoded.details[0]?.type_url).to.equal('type.googleapis.com/google.rpc.RetryInfo');
      expect(Number(RetryInfo.decode(decoded.details[0]?.value ?? new Uint8Array()).retryDelay?.seconds)).to.equal(1);

      release();
      const rows = await select<{ span_name: string }>(gw.store, `SELECT span_name FROM ${gw.store.database}.spans WHERE tenant_id = 'q' ORDER BY span_name`);
      expect(rows.map((r) => r.span_name)).to.deep.equal(['first', 'first-2', 'first-3']);
    });
  });

  describe('ClickHouse failing', () => {
    let gw: TestGateway;
    let retried: Promise<void> = Promise.resolve();
    before(async () => {
      gw = await startTestGateway('failing', {
        sink: (real) => {
          // An INSERT tried again after a failure: by then the gateway has reported the failure.
          let failures = 0;
          let markRetried: () => void = () => undefined;
          retried = new Promise((resolve) => {
            markRetried = resolve;
          });
          return {
            insert: async (table, chunks, token) => {
              if (failures > 0) markRetried();
              const result = await real.insert(table, chunks, token);
              if (!result.ok) failures++;
              return result;
            },
          };
        },
      });
    });
    after(async () => {
      await gw.close();
    });

    it('keeps acknowledging into the log while inserts fail, is unready meanwhile, and stores every acknowledged row once afterwards', async () => {
      await gw.store.client.command({ query: `RENAME TABLE ${gw.store.database}.spans TO ${gw.store.database}.spans_away` });
      const bodies = [1, 2, 3].map((i) => tracesProtobuf(tracesJson({ 'tenant.id': 'down' }, [{ name: `during-${i}` }])));
      const answers = await Promise.all(bodies.map((b) => post(`${gw.httpUrl}/v1/traces`, b, protobufHeaders(keys.admin))));
      expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200]);
      expect((await grpcExport(gw.grpcUrl, tracePath, bodies[0] ?? Buffer.alloc(0), keys.admin)).code).to.equal(grpc.status.OK);
      await retried;
      expect(gw.readiness.reasons()).to.deep.equal(['waiting for ClickHouse accepting writes']);

      await gw.store.client.command({ query: `RENAME TABLE ${gw.store.database}.spans_away TO ${gw.store.database}.spans` });
      const rows = await select<{ span_name: string; n: string }>(
        gw.store,
        `SELECT span_name, toString(count()) AS n FROM ${gw.store.database}.spans WHERE tenant_id = 'down' GROUP BY span_name ORDER BY span_name`,
      );
      expect(rows).to.deep.equal([
        { span_name: 'during-1', n: '2' },
        { span_name: 'during-2', n: '1' },
        { span_name: 'during-3', n: '1' },
      ]);
      expect(gw.readiness.isReady()).to.equal(true);
    });
  });
});
