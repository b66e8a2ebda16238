// stop(): stop accepting, answer in-flight requests after flushing their rows.
import { expect } from 'chai';
import { startTestGateway, keys, select } from './support/gateway-harness.ts';
import { post, protobufHeaders, tracesJson, tracesProtobuf } from './support/payloads.ts';

describe('gateway: graceful stop', function () {
  this.timeout(30_000);

  it('flushes a pending batch, answers its request 200, and refuses new connections', async () => {
    // A long delay and a high row bound: the rows would wait a minute if stop() did not flush them.
    const gw = await startTestGateway('shutdown', { writer: { maxBatchDelayMs: 60_000, maxBatchRows: 1_000_000 } });
    try {
      const pending = post(`${gw.httpUrl}/v1/traces`, tracesProtobuf(tracesJson({ 'tenant.id': 'bye' }, [{ name: 'last-words' }])), protobufHeaders(keys.admin));
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      await gw.stop();
      expect(Date.now() - started).to.be.below(5000);
      expect((await pending).status).to.equal(200);
      const rows = await select<{ span_name: string }>(gw.store, `SELECT span_name FROM ${gw.store.database}.spans WHERE tenant_id = 'bye'`);
      expect(rows).to.deep.equal([{ span_name: 'last-words' }]);
      const refused = await fetch(`${gw.httpUrl}/healthz`).then(() => 'answered', () => 'refused');
      expect(refused).to.equal('refused');
    } finally {
      await gw.close();
    }
  });
});
