// stop(): stop accepting, answer in-flight requests once their rows are
// logged, and move the log into ClickHouse before resolving.
import { expect } from 'chai';
import { startTestGateway, keys } from './support/gateway-harness.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { post, protobufHeaders, tracesJson, tracesProtobuf } from './support/payloads.ts';

/** A SELECT that does not wait for the gateway's log: the point is that stop() already inserted it. */
async function rawSelect<T>(store: Store, query: string): Promise<T[]> {
  return (await store.client.query({ query, format: 'JSONEachRow' })).json<T>();
}

describe('gateway: graceful stop', function () {
  this.timeout(30_000);

  it('inserts what the log holds, answers its request 200, and refuses new connections', async () => {
    // A long delay and a high row bound: the rows would wait a minute in the log if stop() did not insert them.
    const gw = await startTestGateway('shutdown', { writer: { maxBatchDelayMs: 60_000, maxBatchRows: 1_000_000 } });
    try {
      const answered = await post(
        `${gw.httpUrl}/v1/traces`,
        tracesProtobuf(tracesJson({ 'tenant.id': 'bye' }, [{ name: 'last-words' }])),
        protobufHeaders(keys.admin),
      );
      expect(answered.status).to.equal(200);
      const started = Date.now();
      await gw.stop();
      expect(Date.now() - started).to.be.below(5000);
      const rows = await rawSelect<{ span_name: string }>(gw.store, `SELECT span_name FROM ${gw.store.database}.spans WHERE tenant_id = 'bye'`);
      expect(rows).to.deep.equal([{ span_name: 'last-words' }]);
      const refused = await fetch(`${gw.httpUrl}/healthz`).then(
        () => 'answered',
        () => 'refused',
      );
      expect(refused).to.equal('refused');
    } finally {
      await gw.close();
    }
  });
});
