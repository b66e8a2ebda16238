// OTLP/gRPC status codes and partial success.
import { connect } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { ExportTraceServiceResponse } from '../../../gateway/wire/otlp-messages.ts';
import { startTestGateway, keys, select } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { grpcExport, logsPath, tracePath } from './support/grpc-client.ts';
import { logsProtobuf, tracesJson, tracesProtobuf } from './support/payloads.ts';
import { makeSpans, sendSpans } from './support/otel-clients.ts';
import { gzipZeros } from './support/gzip-zeros.ts';

describe('gateway: OTLP/gRPC', function () {
  this.timeout(30_000);
  let gw: TestGateway;
  const limit = 64 * 1024;
  before(async () => {
    gw = await startTestGateway('grpc', { maxRequestBytes: limit });
  });
  after(async () => {
    await gw.close();
  });
  const body = tracesProtobuf(tracesJson({ 'tenant.id': 'g' }, [{ name: 's' }]));

  it('answers UNAUTHENTICATED without a key or with an unknown one', async () => {
    expect((await grpcExport(gw.grpcUrl, tracePath, body, undefined)).code).to.equal(grpc.status.UNAUTHENTICATED);
    expect((await grpcExport(gw.grpcUrl, tracePath, body, 'unknown-key-0123456789')).code).to.equal(grpc.status.UNAUTHENTICATED);
  });
  it('answers PERMISSION_DENIED for a key without ingest', async () => {
    expect((await grpcExport(gw.grpcUrl, tracePath, body, keys.readOnly)).code).to.equal(grpc.status.PERMISSION_DENIED);
  });
  it('answers INVALID_ARGUMENT for undecodable bytes', async () => {
    expect((await grpcExport(gw.grpcUrl, tracePath, Buffer.from([0x0a, 0xff, 0xff]), keys.admin)).code).to.equal(grpc.status.INVALID_ARGUMENT);
  });
  it('answers RESOURCE_EXHAUSTED over the size limit, also when the message is gzip-compressed', async () => {
    const big = Buffer.concat([body, Buffer.from([0x7a, 0x80, 0x80, 0x08]), Buffer.alloc(131072)]);
    expect((await grpcExport(gw.grpcUrl, tracePath, big, keys.admin)).code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
    const zipped = await grpcExport(gw.grpcUrl, tracePath, big, keys.admin, { 'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip });
    expect(zipped.code).to.equal(grpc.status.RESOURCE_EXHAUSTED);
  });
  it('reports partial success with exact counts', async () => {
    const json = tracesJson({}, [
      { name: 'mine', attrs: { 'tenant.id': 'tenant-a' } },
      { name: 'other', attrs: { 'tenant.id': 'tenant-z' } },
      { name: 'none' },
    ]);
    const reply = await grpcExport(gw.grpcUrl, tracePath, tracesProtobuf(json), keys.tenantA);
    expect(reply.code).to.equal(grpc.status.OK);
    const partial = ExportTraceServiceResponse.decode(reply.body ?? Buffer.alloc(0)).partialSuccess;
    expect(Number(partial?.rejectedSpans)).to.equal(2);
    expect(partial?.errorMessage).to.include('tenant-z');
    const traceId = JSON.stringify(json).match(/"traceId":"([0-9a-f]+)"/)?.[1] ?? '';
    const rows = await select<{ tenant_id: string; span_name: string }>(
      gw.store,
      `SELECT tenant_id, span_name FROM ${gw.store.database}.spans WHERE trace_id = {t:String}`,
      { t: traceId },
    );
    expect(rows).to.deep.equal([{ tenant_id: 'tenant-a', span_name: 'mine' }]);
  });
  it('serves the logs service and an empty request', async () => {
    const reply = await grpcExport(gw.grpcUrl, logsPath, logsProtobuf({ 'tenant.id': 'grpc-logs' }, [{ body: 'b' }]), keys.admin);
    expect(reply.code).to.equal(grpc.status.OK);
    expect((await grpcExport(gw.grpcUrl, tracePath, Buffer.alloc(0), keys.admin)).code).to.equal(grpc.status.OK);
  });
  it('accepts gzip from the official exporter', async () => {
    const spans = makeSpans({ 'service.name': 'grpc-gzip', 'tenant.id': 'zipped' });
    const result = await sendSpans('grpc', { ...gw, key: keys.admin }, spans, true);
    expect(result.code, String(result.error)).to.equal(0);
    const rows = await select<{ n: string }>(
      gw.store,
      `SELECT toString(count()) AS n FROM ${gw.store.database}.spans WHERE service_name = 'grpc-gzip' AND tenant_id = 'zipped'`,
    );
    expect(rows).to.deep.equal([{ n: '2' }]);
  });
});

describe('gateway: OTLP/gRPC gzip bomb', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway('grpc-bomb', { maxRequestBytes: 16 * 1024 * 1024 });
  });
  after(async () => {
    await gw.close();
  });

  it('answers a gzip-compressed 512 MiB message with RESOURCE_EXHAUSTED, inflating no more than the limit', async () => {
    const compressed = await gzipZeros(512 * 1024 * 1024);
    const frame = Buffer.alloc(5);
    frame[0] = 1;
    frame.writeUInt32BE(compressed.length, 1);
    const session = connect(gw.grpcUrl);
    const before = process.memoryUsage.rss();
    const started = Date.now();
    const status = await new Promise<string>((resolve, reject) => {
      const stream = session.request({
        ':method': 'POST',
        ':path': tracePath,
        'content-type': 'application/grpc',
        te: 'trailers',
        'grpc-encoding': 'gzip',
        authorization: `Bearer ${keys.admin}`,
      });
      let code = '';
      stream.on('response', (headers) => {
        code = String(headers['grpc-status'] ?? code);
      });
      stream.on('trailers', (trailers: Record<string, string | string[] | undefined>) => {
        code = String(trailers['grpc-status'] ?? code);
      });
      stream.on('close', () => {
        resolve(code);
      });
      stream.on('error', reject);
      stream.resume();
      stream.end(Buffer.concat([frame, compressed]));
    });
    session.close();
    expect(status).to.equal(String(grpc.status.RESOURCE_EXHAUSTED));
    expect(Date.now() - started).to.be.below(5000);
    expect(process.memoryUsage.rss() - before).to.be.below(128 * 1024 * 1024);
  });
});
