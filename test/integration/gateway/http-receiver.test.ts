// OTLP/HTTP answers: auth, media types, encodings, decoding, tenant rules
// with partial success, and limits, read back from embedded ClickHouse.
import { expect } from 'chai';
import { startTestGateway, keys, select } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import {
  gzip,
  jsonHeaders,
  logsProtobuf,
  metricsProtobuf,
  post,
  protobufHeaders,
  statusOf,
  tracePartialSuccess,
  tracesJson,
  tracesProtobuf,
} from './support/payloads.ts';

describe('gateway: OTLP/HTTP', function () {
  this.timeout(30_000);
  let gw: TestGateway;
  const limit = 64 * 1024;
  before(async () => {
    gw = await startTestGateway('http', { maxRequestBytes: limit });
  });
  after(async () => {
    await gw.close();
  });

  const spansOf = async (traceId: string): Promise<{ tenant_id: string; span_name: string }[]> =>
    select(gw.store, `SELECT tenant_id, span_name FROM ${gw.store.database}.spans WHERE trace_id = {t:String} ORDER BY span_name`, {
      t: traceId.toLowerCase(),
    });

  describe('authentication', () => {
    const body = tracesProtobuf(tracesJson({ 'tenant.id': 'a' }, [{ name: 's' }]));
    it('answers 401 with a google.rpc.Status for a missing key', async () => {
      const res = await post(`${gw.httpUrl}/v1/traces`, body, { 'content-type': 'application/x-protobuf' });
      expect(res.status).to.equal(401);
      expect(res.headers.get('content-type')).to.equal('application/x-protobuf');
      expect(statusOf(res.body)).to.include({ code: 16 });
    });
    it('answers 401 for an unknown key, in JSON for a JSON request', async () => {
      const res = await post(`${gw.httpUrl}/v1/traces`, '{}', jsonHeaders('not-a-key-0123456789'));
      expect(res.status).to.equal(401);
      expect(JSON.parse(res.body.toString())).to.include({ code: 16, message: 'unknown API key' });
    });
    it('answers 403 for a key without the ingest scope', async () => {
      const res = await post(`${gw.httpUrl}/v1/traces`, body, protobufHeaders(keys.readOnly));
      expect(res.status).to.equal(403);
      expect(statusOf(res.body).code).to.equal(7);
    });
    it('accepts the key in x-api-key', async () => {
      const res = await post(`${gw.httpUrl}/v1/logs`, logsProtobuf({ 'tenant.id': 'xkey' }, [{ body: 'hello' }]), {
        'content-type': 'application/x-protobuf',
        'x-api-key': keys.admin,
      });
      expect(res.status).to.equal(200);
    });
  });

  describe('media types and decoding', () => {
    it('answers 415 for an unsupported content type', async () => {
      const res = await post(`${gw.httpUrl}/v1/traces`, 'x', { 'content-type': 'text/plain', authorization: `Bearer ${keys.admin}` });
      expect(res.status).to.equal(415);
    });
    it('answers 415 for an unsupported content encoding', async () => {
      const res = await post(`${gw.httpUrl}/v1/traces`, 'x', { ...protobufHeaders(keys.admin), 'content-encoding': 'br' });
      expect(res.status).to.equal(415);
    });
    it('answers 400 INVALID_ARGUMENT for undecodable protobuf and JSON', async () => {
      const proto = await post(`${gw.httpUrl}/v1/traces`, Buffer.from([0x0a, 0xff, 0xff, 0xff]), protobufHeaders(keys.admin));
      expect(proto.status).to.equal(400);
      expect(statusOf(proto.body).code).to.equal(3);
      const json = await post(`${gw.httpUrl}/v1/traces`, '{"resourceSpans": [', jsonHeaders(keys.admin));
      expect(json.status).to.equal(400);
      const badId = await post(`${gw.httpUrl}/v1/traces`, JSON.stringify(tracesJson({ 'tenant.id': 'a' }, [{ name: 's' }], 'XYZ')), jsonHeaders(keys.admin));
      expect(badId.status).to.equal(400);
    });
    it('answers 405 for GET and 404 for an unknown path', async () => {
      expect((await fetch(`${gw.httpUrl}/v1/traces`)).status).to.equal(405);
      expect((await post(`${gw.httpUrl}/v1/profiles`, 'x', protobufHeaders(keys.admin))).status).to.equal(404);
    });
    it('accepts an empty request with an empty response', async () => {
      const res = await post(`${gw.httpUrl}/v1/traces`, Buffer.alloc(0), protobufHeaders(keys.admin));
      expect(res.status).to.equal(200);
      expect(res.body.length).to.equal(0);
      const json = await post(`${gw.httpUrl}/v1/metrics`, '{}', jsonHeaders(keys.admin));
      expect(json.status).to.equal(200);
      expect(JSON.parse(json.body.toString())).to.deep.equal({});
    });
    it('reads OTLP/JSON with upper-case hex ids and unknown fields', async () => {
      const request = tracesJson({ 'tenant.id': 'json-tenant' }, [{ name: 'upper' }]) as {
        resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[];
      };
      const span = request.resourceSpans[0]?.scopeSpans[0]?.spans[0] ?? {};
      const traceId = String(span['traceId']).toUpperCase();
      span['traceId'] = traceId;
      span['spanId'] = 'ABCDEF0123456789';
      span['someFutureField'] = { nested: true };
      (request as Record<string, unknown>)['unknownTopLevel'] = 1;
      const res = await post(`${gw.httpUrl}/v1/traces`, JSON.stringify(request), jsonHeaders(keys.admin));
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/json');
      const rows = await select<{ span_id: string; tenant_id: string }>(
        gw.store,
        `SELECT span_id, tenant_id FROM ${gw.store.database}.spans WHERE trace_id = {t:String}`,
        { t: traceId.toLowerCase() },
      );
      expect(rows).to.deep.equal([{ span_id: 'abcdef0123456789', tenant_id: 'json-tenant' }]);
    });
    it('stores lone UTF-16 surrogates of OTLP/JSON as U+FFFD and duplicate attribute keys without failing the batch', async () => {
      const json = tracesJson({ 'tenant.id': 'odd-text' }, [{ name: 'a\ud800b', attrs: { k: '\udc00' } }]) as {
        resourceSpans: { scopeSpans: { spans: Record<string, unknown>[] }[] }[];
      };
      const span = json.resourceSpans[0]?.scopeSpans[0]?.spans[0] ?? {};
      (span['attributes'] as unknown[]).push({ key: 'k', value: { stringValue: 'again' } });
      const res = await post(`${gw.httpUrl}/v1/traces`, JSON.stringify(json), jsonHeaders(keys.admin));
      expect(res.status).to.equal(200);
      const rows = await select<{ span_name: string }>(gw.store, `SELECT span_name FROM ${gw.store.database}.spans WHERE tenant_id = 'odd-text'`);
      expect(rows).to.deep.equal([{ span_name: 'a\ufffdb' }]);
    });

    it('reads gzip bodies in both encodings', async () => {
      const json = tracesJson({ 'tenant.id': 'gz' }, [{ name: 'zipped' }]);
      const a = await post(`${gw.httpUrl}/v1/traces`, gzip(tracesProtobuf(json)), { ...protobufHeaders(keys.admin), 'content-encoding': 'gzip' });
      expect(a.status).to.equal(200);
      const other = tracesJson({ 'tenant.id': 'gz' }, [{ name: 'zipped-json' }]);
      const b = await post(`${gw.httpUrl}/v1/traces`, gzip(JSON.stringify(other)), { ...jsonHeaders(keys.admin), 'content-encoding': 'gzip' });
      expect(b.status).to.equal(200);
      expect(
        await spansOf(String((json['resourceSpans'] as { scopeSpans: { spans: { traceId: string }[] }[] }[])[0]?.scopeSpans[0]?.spans[0]?.traceId)),
      ).to.deep.equal([{ tenant_id: 'gz', span_name: 'zipped' }]);
      const bad = await post(`${gw.httpUrl}/v1/traces`, Buffer.from('not gzip at all'), { ...protobufHeaders(keys.admin), 'content-encoding': 'gzip' });
      expect(bad.status).to.equal(400);
    });
  });

  describe('tenant resolution and partial success', () => {
    it('lets the resource tenant.id win over the item attribute', async () => {
      const json = tracesJson({ 'tenant.id': 'resource-t' }, [{ name: 'a', attrs: { 'tenant.id': 'item-t' } }]);
      const res = await post(`${gw.httpUrl}/v1/traces`, tracesProtobuf(json), protobufHeaders(keys.admin));
      expect(res.status).to.equal(200);
      expect(tracePartialSuccess(res.body)).to.deep.equal({ rejected: 0, message: '' });
      const traceId = JSON.stringify(json).match(/"traceId":"([0-9a-f]+)"/)?.[1] ?? '';
      expect(await spansOf(traceId)).to.deep.equal([{ tenant_id: 'resource-t', span_name: 'a' }]);
    });

    it('rejects items without a valid tenant with exact counts and reasons, and stores the rest under their tenants', async () => {
      const long = 'x'.repeat(151);
      const json = tracesJson({ 'service.name': 'mixed' }, [
        { name: 'ok-string', attrs: { 'tenant.id': "Ab0._~!*'()-" } },
        { name: 'ok-int', attrs: { 'tenant.id': 42 } },
        { name: 'ok-150', attrs: { 'tenant.id': 'y'.repeat(150) } },
        { name: 'missing' },
        { name: 'bool', attrs: { 'tenant.id': true } },
        { name: 'double', attrs: { 'tenant.id': { double: 1.5 } } },
        { name: 'empty', attrs: { 'tenant.id': '' } },
        { name: 'dot', attrs: { 'tenant.id': '.' } },
        { name: 'dotdot', attrs: { 'tenant.id': '..' } },
        { name: 'slash', attrs: { 'tenant.id': 'a/b' } },
        { name: 'too-long', attrs: { 'tenant.id': long } },
        { name: 'unicode', attrs: { 'tenant.id': 'é' } },
      ]);
      const res = await post(`${gw.httpUrl}/v1/traces`, tracesProtobuf(json), protobufHeaders(keys.admin));
      expect(res.status).to.equal(200);
      const partial = tracePartialSuccess(res.body);
      expect(partial.rejected).to.equal(9);
      expect(partial.message).to.include('9 spans rejected');
      expect(partial.message).to.include('1 no tenant.id attribute');
      expect(partial.message).to.include('2 tenant.id is neither a string nor an integer');
      expect(partial.message).to.include('6 tenant.id is not 1-150 bytes');
      const traceId = JSON.stringify(json).match(/"traceId":"([0-9a-f]+)"/)?.[1] ?? '';
      expect(await spansOf(traceId)).to.deep.equal([
        { tenant_id: 'y'.repeat(150), span_name: 'ok-150' },
        { tenant_id: '42', span_name: 'ok-int' },
        { tenant_id: "Ab0._~!*'()-", span_name: 'ok-string' },
      ]);
    });

    it('rejects, through partial success, items of tenants a key may not write; many tenants per request', async () => {
      const json = tracesJson({}, [
        { name: 'mine-1', attrs: { 'tenant.id': 'tenant-a' } },
        { name: 'theirs', attrs: { 'tenant.id': 'tenant-b' } },
        { name: 'mine-2', attrs: { 'tenant.id': 'tenant-a' } },
      ]);
      const res = await post(`${gw.httpUrl}/v1/traces`, JSON.stringify(json), jsonHeaders(keys.tenantA));
      expect(res.status).to.equal(200);
      const body = JSON.parse(res.body.toString()) as { partialSuccess: { rejectedSpans: number; errorMessage: string } };
      expect(body.partialSuccess.rejectedSpans).to.equal(1);
      expect(body.partialSuccess.errorMessage).to.include('may not write to tenant "tenant-b"');
      const traceId = JSON.stringify(json).match(/"traceId":"([0-9a-f]+)"/)?.[1] ?? '';
      expect(await spansOf(traceId)).to.deep.equal([
        { tenant_id: 'tenant-a', span_name: 'mine-1' },
        { tenant_id: 'tenant-a', span_name: 'mine-2' },
      ]);
    });

    it('reports rejected log records and data points', async () => {
      const logs = await post(
        `${gw.httpUrl}/v1/logs`,
        logsProtobuf({}, [{ body: 'kept', attrs: { 'tenant.id': 'l1' } }, { body: 'lost' }]),
        protobufHeaders(keys.admin),
      );
      expect(logs.status).to.equal(200);
      const { ExportLogsServiceResponse, ExportMetricsServiceResponse } = await import('../../../gateway/wire/otlp-messages.ts');
      expect(Number(ExportLogsServiceResponse.decode(logs.body).partialSuccess?.rejectedLogRecords)).to.equal(1);
      const metrics = await post(`${gw.httpUrl}/v1/metrics`, metricsProtobuf({ 'tenant.id': '..' }, [{ 'tenant.id': 'ok' }, {}]), protobufHeaders(keys.admin));
      expect(Number(ExportMetricsServiceResponse.decode(metrics.body).partialSuccess?.rejectedDataPoints)).to.equal(2);
    });
  });

  describe('body limit', () => {
    const bodyOfSize = (size: number): Buffer => {
      // A valid request padded with an unknown field (number 15, length-delimited) to exactly `size` bytes.
      const base = tracesProtobuf(tracesJson({ 'tenant.id': 'limit' }, [{ name: 'edge' }]));
      const padding = size - base.length - 4;
      const header = Buffer.from([0x7a, 0x80 | (padding & 0x7f), 0x80 | ((padding >> 7) & 0x7f), (padding >> 14) & 0x7f]);
      return Buffer.concat([base, header, Buffer.alloc(padding)]);
    };
    it('accepts a body of exactly the limit and refuses one byte more with 413', async () => {
      expect((await post(`${gw.httpUrl}/v1/traces`, bodyOfSize(limit), protobufHeaders(keys.admin))).status).to.equal(200);
      const over = await post(`${gw.httpUrl}/v1/traces`, bodyOfSize(limit + 1), protobufHeaders(keys.admin));
      expect(over.status).to.equal(413);
      expect(statusOf(over.body).code).to.equal(8);
      expect(over.headers.get('retry-after')).to.equal(null);
    });
    it('applies the limit after decompression', async () => {
      expect((await post(`${gw.httpUrl}/v1/traces`, gzip(bodyOfSize(limit)), { ...protobufHeaders(keys.admin), 'content-encoding': 'gzip' })).status).to.equal(
        200,
      );
      const over = await post(`${gw.httpUrl}/v1/traces`, gzip(bodyOfSize(limit + 1)), { ...protobufHeaders(keys.admin), 'content-encoding': 'gzip' });
      expect(over.status).to.equal(413);
    });
  });
});
