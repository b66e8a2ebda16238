// Client input that was once answered 500 / INTERNAL: AnyValues nested 60
// (and 100,000) deep over OTLP/HTTP (protobuf and JSON) and gRPC, invalid
// UTF-8 inside a nested key-value list; and JSON that parses into ~70× its
// size. Each is now a per-item rejection or
// a 400 / INVALID_ARGUMENT naming the problem; nothing is a 5xx or INTERNAL,
// and a neighbour tenant sending at the same time keeps succeeding.
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { ExportTraceServiceResponse } from '../../../gateway/wire/otlp-messages.ts';
import { startTestGateway, keys, select } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { grpcExport, tracePath } from './support/grpc-client.ts';
import { keyValue, nestedKvlist, nestedKvlistJson, request, span, stringValue, tracesJsonWithValue } from './support/hostile-otlp.ts';
import { jsonHeaders, post, protobufHeaders, statusOf, tracePartialSuccess, tracesJson, tracesProtobuf } from './support/payloads.ts';

const tenant = (id: string): Buffer => keyValue('tenant.id', stringValue(id));
const deepSpanRejected = '1 spans rejected: 1 attribute value or body nested deeper than 16 levels (TENANTRY_MAX_VALUE_DEPTH)';

describe('gateway: hostile payloads', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway('hostile', { maxRequestBytes: 16 * 1024 * 1024 });
  });
  after(async () => {
    await gw.close();
  });

  const spanNames = async (t: string): Promise<string[]> =>
    (
      await select<{ span_name: string }>(gw.store, `SELECT span_name FROM ${gw.store.database}.spans WHERE tenant_id = {t:String} ORDER BY span_name`, { t })
    ).map((r) => r.span_name);

  /** tenant-a's own spans, sent while the hostile request is in flight; each must be a plain 200. */
  const neighbour = async (): Promise<void> => {
    const res = await post(
      `${gw.httpUrl}/v1/traces`,
      tracesProtobuf(tracesJson({ 'tenant.id': 'tenant-a' }, [{ name: 'neighbour' }])),
      protobufHeaders(keys.tenantA),
    );
    expect(res.status).to.equal(200);
    expect(tracePartialSuccess(res.body).rejected).to.equal(0);
  };

  /** A span with a value nested `levels` deep and a plain span, of tenant `t`, in protobuf. */
  const deepProtobuf = (t: string, levels: number): Buffer =>
    request([tenant(t)], [span('deep', [keyValue('deep', nestedKvlist(levels, stringValue('leaf')))]), span('plain')]);

  describe('values nested 60 deep', () => {
    it('rejects only the span holding one, over OTLP/HTTP protobuf', async () => {
      const [res] = await Promise.all([post(`${gw.httpUrl}/v1/traces`, deepProtobuf('deep-http', 60), protobufHeaders(keys.admin)), neighbour()]);
      expect(res.status).to.equal(200);
      expect(tracePartialSuccess(res.body)).to.deep.equal({ rejected: 1, message: deepSpanRejected });
      expect(await spanNames('deep-http')).to.deep.equal(['plain']);
    });

    it('rejects only the span holding one, over OTLP/HTTP JSON, at 60 and at 100,000 levels', async () => {
      for (const [t, levels] of [
        ['deep-json', 60],
        ['deeper-json', 100_000],
      ] as const) {
        const [res] = await Promise.all([
          post(`${gw.httpUrl}/v1/traces`, tracesJsonWithValue(t, nestedKvlistJson(levels)), jsonHeaders(keys.admin)),
          neighbour(),
        ]);
        expect(res.status).to.equal(200);
        expect(JSON.parse(res.body.toString())).to.deep.equal({ partialSuccess: { rejectedSpans: 1, errorMessage: deepSpanRejected } });
        expect(await spanNames(t)).to.deep.equal(['plain']);
      }
    });

    it('rejects only the span holding one, over gRPC', async () => {
      const [reply] = await Promise.all([grpcExport(gw.grpcUrl, tracePath, deepProtobuf('deep-grpc', 60), keys.admin), neighbour()]);
      expect(reply.code).to.equal(grpc.status.OK);
      const partial = ExportTraceServiceResponse.decode(reply.body ?? Buffer.alloc(0)).partialSuccess;
      expect({ rejected: Number(partial?.rejectedSpans), message: partial?.errorMessage }).to.deep.equal({ rejected: 1, message: deepSpanRejected });
      expect(await spanNames('deep-grpc')).to.deep.equal(['plain']);
    });

    it('rejects every span of a resource holding one', async () => {
      const body = request([tenant('deep-resource'), keyValue('deep', nestedKvlist(60, stringValue('leaf')))], [span('a'), span('b')]);
      const res = await post(`${gw.httpUrl}/v1/traces`, body, protobufHeaders(keys.admin));
      expect(res.status).to.equal(200);
      expect(tracePartialSuccess(res.body).rejected).to.equal(2);
      expect(await spanNames('deep-resource')).to.deep.equal([]);
    });
  });

  describe('invalid UTF-8', () => {
    const invalid = Buffer.from([0x61, 0xff, 0xfe, 0x62]);

    it('answers 400 INVALID_ARGUMENT naming the problem for invalid UTF-8 inside a nested key-value list, over HTTP and gRPC', async () => {
      const body = request([tenant('utf8')], [span('nested', [keyValue('list', nestedKvlist(2, stringValue(invalid)))])]);
      const [res] = await Promise.all([post(`${gw.httpUrl}/v1/traces`, body, protobufHeaders(keys.admin)), neighbour()]);
      expect(res.status).to.equal(400);
      expect(statusOf(res.body)).to.include({ code: 3 });
      expect(statusOf(res.body).message).to.match(/^invalid protobuf: invalid nested value: .*utf-8/i);
      const reply = await grpcExport(gw.grpcUrl, tracePath, body, keys.admin);
      expect(reply.code).to.equal(grpc.status.INVALID_ARGUMENT);
      expect(reply.details).to.match(/^invalid protobuf: invalid nested value/);
    });

    it('stores a top-level string that is not valid UTF-8 as its bytes, and a JSON body that is not as its decoded text', async () => {
      const protobuf = await post(
        `${gw.httpUrl}/v1/traces`,
        request([tenant('utf8-flat')], [span('flat', [keyValue('v', stringValue(invalid))])]),
        protobufHeaders(keys.admin),
      );
      expect(protobuf.status).to.equal(200);
      const [before, after] = tracesJsonWithValue('utf8-json', '{"stringValue":"HERE"}').split('HERE');
      const jsonRes = await post(
        `${gw.httpUrl}/v1/traces`,
        Buffer.concat([Buffer.from(before ?? ''), invalid, Buffer.from(after ?? '')]),
        jsonHeaders(keys.admin),
      );
      expect(jsonRes.status).to.equal(200);
      expect(await spanNames('utf8-flat')).to.deep.equal(['flat']);
      const [stored] = await select<{ v: string }>(
        gw.store,
        `SELECT span_attributes['deep'] AS v FROM ${gw.store.database}.spans WHERE tenant_id = 'utf8-json'`,
      );
      expect(stored?.v).to.equal('a\ufffd\ufffdb');
    });
  });

  describe('dense JSON', () => {
    it('answers 400 for an OTLP/JSON body of millions of empty objects (~1 GB once parsed) before parsing it', async () => {
      const body = `{"resourceSpans":[{"scopeSpans":[{"spans":[${Array(2_000_000).fill('{}').join(',')}]}]}]}`;
      const [res] = await Promise.all([post(`${gw.httpUrl}/v1/traces`, body, jsonHeaders(keys.admin)), neighbour()]);
      expect(res.status).to.equal(400);
      expect(JSON.parse(res.body.toString())).to.include({
        code: 3,
        message: `invalid OTLP/JSON: 2000006 objects and arrays in ${body.length} bytes, more than one per 8 bytes`,
      });
    });
  });

  // A suite of its own: mocha runs a suite's tests before its child suites.
  describe('afterwards', () => {
    it('answered none of it with a 5xx or INTERNAL, and stored every span of the neighbour', async () => {
      const requests = await gw.registry.getSingleMetricAsString('tenantry_gateway_requests_total');
      expect(requests).to.match(/status="200"/);
      expect(requests).not.to.match(/status="(5\d\d|INTERNAL|UNKNOWN)"/);
      expect(await spanNames('tenant-a')).to.have.length(6);
    });
  });
});
