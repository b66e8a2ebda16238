// Stricter decoding end to end, on a real gateway: an OTLP/JSON span whose
// kind is no SpanKind is rejected through partial success while the others
// are stored; a negative time is a 400 that says "before 1970"; a remote
// write label name that is empty or holds a control character is a 400 and
// nothing of the request is stored.
import { expect } from 'chai';
import { keys, select, startTestGateway } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { jsonHeaders, post } from './support/payloads.ts';
import { encodeWriteRequest, pushRemoteWrite, remoteWriteHeaders, snappyBlock } from '../../../support/remote-write-request.ts';

const spans = (tenant: string, spec: readonly { name: string; kind: unknown; start?: unknown }[]): string =>
  JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'tenant.id', value: { stringValue: tenant } }] },
        scopeSpans: [
          {
            spans: spec.map((s, i) => ({
              traceId: '0102030405060708090a0b0c0d0e0f10',
              spanId: `000000000000000${i}`,
              name: s.name,
              kind: s.kind,
              startTimeUnixNano: s.start ?? String(BigInt(Date.now()) * 1_000_000n),
              endTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
            })),
          },
        ],
      },
    ],
  });

describe('gateway: stricter decoding', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway('strict_decoding');
  });
  after(async () => {
    await gw.close();
  });

  it('OTLP/JSON: spans of kind 99 and -1 are rejected through partial success, naming the value; the others are stored', async () => {
    const reply = await post(
      `${gw.httpUrl}/v1/traces`,
      spans('strict', [
        { name: 'ok', kind: 2 },
        { name: 'k99', kind: 99 },
        { name: 'km1', kind: -1 },
      ]),
      jsonHeaders(keys.admin),
    );
    expect(reply.status).to.equal(200);
    const body = JSON.parse(reply.body.toString()) as { partialSuccess?: { rejectedSpans?: string | number; errorMessage?: string } };
    expect(Number(body.partialSuccess?.rejectedSpans)).to.equal(2);
    expect(body.partialSuccess?.errorMessage).to.equal('2 spans rejected: 2 an enum value the OTLP definition does not have, e.g. span kind 99 (0 to 5)');
    const rows = await select<{ span_name: string }>(gw.store, `SELECT span_name FROM ${gw.store.database}.spans WHERE tenant_id = 'strict'`);
    expect(rows).to.deep.equal([{ span_name: 'ok' }]);
  });

  it('OTLP/JSON: a time of "-1" is a 400 saying before 1970', async () => {
    const reply = await post(`${gw.httpUrl}/v1/traces`, spans('strict-time', [{ name: 'neg', kind: 1, start: '-1' }]), jsonHeaders(keys.admin));
    expect(reply.status).to.equal(400);
    const status = JSON.parse(reply.body.toString()) as { message: string };
    expect(status.message).to.match(/"-1" is negative .*a time before 1970/);
    expect(status.message).not.to.match(/2262/);
  });

  it('remote write: an empty label name or one with a control character is a 400, nothing stored', async () => {
    const headers = remoteWriteHeaders({ authorization: `Bearer ${keys.tenantA}` });
    const t = Date.now() - 1000;
    for (const name of ['', 'bad\nname', 'del\u007f']) {
      const body = snappyBlock(
        encodeWriteRequest([
          { labels: { __name__: 'fine_series', job: 'j' }, samples: [{ value: 1, timestampMs: t }] },
          { labels: { __name__: 'bad_series', [name]: 'v' }, samples: [{ value: 1, timestampMs: t }] },
        ]),
      );
      const reply = await pushRemoteWrite(gw.httpUrl, body, headers);
      expect(reply.status, JSON.stringify(name)).to.equal(400);
      expect(reply.text).to.match(/label name (is empty|".*" contains a control character)/);
    }
    const rows = await select<{ n: string }>(gw.store, `SELECT count() AS n FROM ${gw.store.database}.metrics WHERE tenant_id = 'tenant-a'`);
    expect(Number(rows[0]?.n)).to.equal(0);
  });
});
