// The Tempo API's size limits, crossed through the real API on embedded
// ClickHouse: a trace of more spans than a lookup returns comes back with
// the first maxTraceSpans spans (v2 says PARTIAL, in JSON and protobuf), and
// a tag with more distinct values than a lookup returns gives maxTagValues.
import { expect } from 'chai';
import { maxTagValues } from '../../../api/compat/tempo/tag-queries.ts';
import { maxTraceSpans } from '../../../api/compat/tempo/trace-by-id.ts';
import { keys, startHarness } from '../api/support/api-harness.ts';
import type { Harness } from '../api/support/api-harness.ts';
import { decodeTraceV2 } from './support/tempo-client.ts';

describe('Tempo API limits', function () {
  this.timeout(180_000);
  let h: Harness;
  const big = 'b16'.padEnd(32, '0');
  const headers = { 'x-scope-orgid': 'acme' };

  before(async () => {
    h = await startHarness('tempo_limits');
    const db = h.store.database;
    // One trace of maxTraceSpans + 5 spans, and maxTagValues + 50 distinct values of span.k.
    await h.store.client.command({
      query: `INSERT INTO ${db}.spans (tenant_id, timestamp, trace_id, span_id, span_name, service_name, duration_ns)
        SELECT 'acme', now64(9) - toIntervalMillisecond(${maxTraceSpans + 5} - number), {t:String}, lower(hex(toFixedString(reinterpretAsString(number), 8))), 'op', 'svc', 1000
        FROM numbers(${maxTraceSpans + 5})`,
      query_params: { t: big },
    });
    await h.store.client.command({
      query: `INSERT INTO ${db}.spans (tenant_id, timestamp, trace_id, span_id, span_name, service_name, span_attributes)
        SELECT 'acme', now64(9) - toIntervalSecond(1), lower(hex(MD5(toString(number)))), 'aaaaaaaaaaaaaaaa', 'op', 'svc', map('k', concat('v', toString(number)))
        FROM numbers(${maxTagValues + 50})`,
    });
  });
  after(async () => {
    await h.close();
  });

  it(`returns the first ${maxTraceSpans} spans of a larger trace, and v2 says PARTIAL`, async () => {
    const v2 = await h.call('GET', `/tempo/api/v2/traces/${big}`, { headers });
    expect(v2.status).to.equal(200);
    const body = v2.body as { status?: string; message?: string; trace: { resourceSpans: { scopeSpans: { spans: unknown[] }[] }[] } };
    expect(body.status).to.equal('PARTIAL');
    expect(body.message).to.contain(String(maxTraceSpans));
    const count = body.trace.resourceSpans.flatMap((r) => r.scopeSpans).reduce((n, s) => n + s.spans.length, 0);
    expect(count).to.equal(maxTraceSpans);
    const response = await fetch(`${h.base}/tempo/api/v2/traces/${big}`, {
      headers: { ...headers, authorization: `Bearer ${keys.admin}`, accept: 'application/protobuf' },
    });
    const bytes = new Uint8Array(await response.arrayBuffer());
    const spans = (decodeTraceV2(bytes) as { scopeSpans: { spans: unknown[] }[] }[]).flatMap((r) => r.scopeSpans).reduce((n, s) => n + s.spans.length, 0);
    expect(spans).to.equal(maxTraceSpans);
    // After the Trace (field 1) and metrics (field 2): status = PARTIAL (field 3, varint 1), then the message (field 4).
    expect(Buffer.from(bytes).includes(Buffer.from([0x18, 0x01, 0x22]))).to.equal(true);
  });

  it(`returns at most ${maxTagValues} values of one tag`, async () => {
    const v2 = await h.call('GET', '/tempo/api/v2/search/tag/span.k/values', { headers });
    expect((v2.body as { tagValues: unknown[] }).tagValues).to.have.length(maxTagValues);
    const v1 = await h.call('GET', '/tempo/api/search/tag/k/values', { headers });
    expect((v1.body as { tagValues: unknown[] }).tagValues).to.have.length(maxTagValues);
  });
});
