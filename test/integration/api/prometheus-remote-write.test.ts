// Remote write in through the real gateway, PromQL out through the real API,
// on one store: the series model both sides agree on (name as sent,
// job/instance, other labels, stale markers kept bit-exact and ending a
// series, metadata served).
import { expect } from 'chai';
import { field, keys, startHarness } from './support/api-harness.ts';
import type { Harness } from './support/api-harness.ts';
import { keys as gatewayKeys, startTestGateway } from '../gateway/support/gateway-harness.ts';
import type { TestGateway } from '../gateway/support/gateway-harness.ts';
import { encodeWriteRequest, metadataType, pushRemoteWrite, remoteWriteHeaders, snappyBlock, withStaleMarkers } from '../../../support/remote-write-request.ts';

const T0 = Math.floor(Date.now() / 3_600_000) * 3600 - 3600;
const ms = (s: number): number => (T0 + s) * 1000;
/** Replaced by the stale marker's bits in the encoded request. */
const staleSentinel = 123456.789;

describe('api/prometheus over remote write', () => {
  let h: Harness;
  let gateway: TestGateway;
  const query = async (q: string, t: number): Promise<unknown> => {
    const reply = await h.call('GET', `/prometheus/api/v1/query?${new URLSearchParams({ query: q, time: String(T0 + t) }).toString()}`, { key: keys.readAcme });
    expect(reply.status, reply.text).to.equal(200);
    return field(reply.body, 'data', 'result');
  };

  before(async () => {
    h = await startHarness('prometheus_rw');
    gateway = await startTestGateway('prometheus_rw_gw', { store: h.store });
    const job = { job: 'node', instance: 'h1:9100' };
    const body = encodeWriteRequest(
      [
        {
          labels: { __name__: 'node_requests_total', ...job, code: '200' },
          samples: [0, 15, 30, 45, 60].map((s, i) => ({ value: i * 15, timestampMs: ms(s) })),
        },
        {
          labels: { __name__: 'node_temp_celsius', ...job, zone: 'a' },
          samples: [
            { value: 20, timestampMs: ms(0) },
            { value: 21, timestampMs: ms(15) },
            { value: staleSentinel, timestampMs: ms(30) },
          ],
        },
      ],
      [{ type: metadataType.counter, family: 'node_requests_total', help: 'Requests.', unit: '' }],
    );
    const pushed = await pushRemoteWrite(
      gateway.httpUrl,
      snappyBlock(withStaleMarkers(body, staleSentinel)),
      remoteWriteHeaders({ authorization: `Bearer ${gatewayKeys.admin}`, 'x-scope-orgid': 'acme' }),
    );
    expect(pushed.status, pushed.text).to.be.oneOf([200, 204]);
    await gateway.flush();
  });
  after(async () => {
    await gateway.stop();
    await h.close();
  });

  it('serves remote-written series under their own names and labels', async () => {
    expect(await query('node_requests_total', 60)).to.deep.equal([
      { metric: { __name__: 'node_requests_total', code: '200', instance: 'h1:9100', job: 'node' }, value: [T0 + 60, '60'] },
    ]);
    // Window (0, 60]: 45 over the 45 s from 15 to 60, extrapolated 15 s to the start: 1/s, computed as
    // Prometheus 3 does (45 × ((60 / 45) / 60)), whose last bit is 0.9999999999999999.
    expect(await query('rate(node_requests_total{job="node"}[1m])', 60)).to.deep.equal([
      { metric: { code: '200', instance: 'h1:9100', job: 'node' }, value: [T0 + 60, '0.9999999999999999'] },
    ]);
  });

  it('ends a series at its stale marker, kept bit-exact through the gateway', async () => {
    expect(await query('node_temp_celsius', 20)).to.have.length(1);
    expect(await query('node_temp_celsius', 30)).to.deep.equal([]);
    expect(await query('count_over_time(node_temp_celsius[1m])', 40)).to.deep.equal([
      { metric: { instance: 'h1:9100', job: 'node', zone: 'a' }, value: [T0 + 40, '2'] },
    ]);
  });

  it('serves the metadata remote write sent', async () => {
    const reply = await h.call('GET', '/prometheus/api/v1/metadata?metric=node_requests_total', { key: keys.readAcme });
    expect(field(reply.body, 'data')).to.deep.equal({ node_requests_total: [{ type: 'counter', help: 'Requests.', unit: '' }] });
  });
});
