// Memory of one request inside a real `tenantry all` process: a 1 MiB
// resource attribute over 1,000 minimal spans (once 11 s and RSS 1.0 →
// 4.6 GB, every row copying the resource) stays within 256 MiB of peak RSS
// growth over OTLP/HTTP protobuf and JSON and gRPC, with the attribute
// truncated and every span stored; a neighbour tenant keeps succeeding. The
// limits' settings reach the converters, and the hostile payloads of
// hostile-payloads.test.ts leave no error-level log line.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { ExportTraceServiceRequest } from '../../../gateway/wire/otlp-messages.ts';
import { grpcExport, tracePath } from './support/grpc-client.ts';
import { keyValue, nestedKvlist, nestedKvlistJson, request, span, stringValue, tracesJsonWithValue } from './support/hostile-otlp.ts';
import { jsonHeaders, post, protobufHeaders, tracePartialSuccess, tracesJson, tracesProtobuf } from './support/payloads.ts';
import { processKey, queryDataDir, residentBytes, startTenantry } from './support/tenantry-process.ts';
import type { TenantryProcess } from './support/tenantry-process.ts';

const neighbourKey = 'neighbour-key-0123456789';
const MiB = 1024 * 1024;

/** The peak resident memory of a process (VmHWM), or its current RSS from /metrics where /proc is not there. */
async function peakResidentBytes(p: TenantryProcess): Promise<number> {
  try {
    const status = readFileSync(`/proc/${p.child.pid ?? 0}/status`, 'utf8');
    const kib = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1];
    if (kib !== undefined) return Number(kib) * 1024;
  } catch {
    // not Linux: fall through
  }
  return residentBytes(p.httpUrl);
}

/** Stops the process (SIGTERM: the log goes to ClickHouse) and waits for it to exit. */
async function stop(p: TenantryProcess): Promise<void> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
  await p.exited;
}

describe('gateway: memory of one request, in the tenantry process', function () {
  this.timeout(120_000);
  let dataDir: string;
  let tenantry: TenantryProcess;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tenantry-memory-'));
    tenantry = await startTenantry(dataDir, {
      TENANTRY_API_KEYS: JSON.stringify([
        { key: processKey, scopes: ['ingest', 'read', 'admin'], tenants: ['*'] },
        { key: neighbourKey, scopes: ['ingest'], tenants: ['neighbour'] },
      ]),
    });
  });
  after(async () => {
    await stop(tenantry);
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The neighbour's ordinary spans, `times` requests one after the other, each a plain 200. */
  const neighbour = async (times: number): Promise<void> => {
    for (let i = 0; i < times; i++) {
      const res = await post(
        `${tenantry.httpUrl}/v1/traces`,
        tracesProtobuf(tracesJson({ 'tenant.id': 'neighbour' }, [{ name: 'n' }])),
        protobufHeaders(neighbourKey),
      );
      expect(res.status).to.equal(200);
      expect(tracePartialSuccess(res.body).rejected).to.equal(0);
    }
  };

  it('keeps peak RSS growth under 256 MiB for a 1 MiB resource attribute × 1,000 spans, over HTTP protobuf and JSON and gRPC', async () => {
    const big = 'a'.repeat(MiB);
    const spans = (protocol: string): Buffer[] => Array.from({ length: 1000 }, (_, i) => span(`${protocol}-${i}`));
    const body = (protocol: string): Buffer => request([keyValue('tenant.id', stringValue('memory')), keyValue('big', stringValue(big))], spans(protocol));
    const json = JSON.stringify(ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body('json')), { longs: String, bytes: String }));
    await neighbour(1); // warm: converters, the write-ahead log, ClickHouse
    const before = await peakResidentBytes(tenantry);
    const started = performance.now();
    const [protobuf, jsonRes, grpcReply] = await Promise.all([
      post(`${tenantry.httpUrl}/v1/traces`, body('protobuf'), protobufHeaders(processKey)),
      post(`${tenantry.httpUrl}/v1/traces`, json, jsonHeaders(processKey)),
      grpcExport(tenantry.grpcUrl, tracePath, body('grpc'), processKey, { 'grpc.max_send_message_length': 16 * MiB }),
      neighbour(5),
    ]);
    const seconds = (performance.now() - started) / 1000;
    const growth = (await peakResidentBytes(tenantry)) - before;
    const truncated = 'truncated: 1 attribute values to 16384 bytes (TENANTRY_MAX_ATTRIBUTE_VALUE_BYTES)';
    expect(protobuf.status).to.equal(200);
    expect(tracePartialSuccess(protobuf.body)).to.deep.equal({ rejected: 0, message: truncated });
    expect(jsonRes.status).to.equal(200);
    expect(grpcReply.code).to.equal(grpc.status.OK);
    console.log(`      three 1 MiB × 1,000-span requests: peak RSS +${(growth / MiB).toFixed(0)} MiB, ${seconds.toFixed(1)} s`);
    expect(growth).to.be.below(256 * MiB);
    await stop(tenantry);
    const [stored] = await queryDataDir<{ n: string; longest: string }>(
      dataDir,
      "SELECT toString(count()) AS n, toString(max(length(resource_attributes['big']))) AS longest FROM tenantry.spans WHERE tenant_id = 'memory'",
    );
    expect(stored).to.deep.equal({ n: '3000', longest: '16384' });
    const [neighbours] = await queryDataDir<{ n: string }>(dataDir, "SELECT toString(count()) AS n FROM tenantry.spans WHERE tenant_id = 'neighbour'");
    expect(neighbours?.n).to.equal('6');
  });
});

describe('gateway: hostile payloads in the tenantry process', function () {
  this.timeout(60_000);
  let dataDir: string;
  let tenantry: TenantryProcess;
  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tenantry-hostile-'));
    tenantry = await startTenantry(dataDir, { TENANTRY_MAX_VALUE_DEPTH: '4', TENANTRY_MAX_SPAN_NAME_BYTES: '3' });
  });
  after(async () => {
    await stop(tenantry);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('applies the limits its settings give (TENANTRY_MAX_VALUE_DEPTH=4, TENANTRY_MAX_SPAN_NAME_BYTES=3)', async () => {
    const body = request(
      [keyValue('tenant.id', stringValue('settings'))],
      [span('five', [keyValue('v', nestedKvlist(5, stringValue('x')))]), span('four', [keyValue('v', nestedKvlist(4, stringValue('x')))])],
    );
    const res = await post(`${tenantry.httpUrl}/v1/traces`, body, protobufHeaders(processKey));
    expect(res.status).to.equal(200);
    expect(tracePartialSuccess(res.body)).to.deep.equal({
      rejected: 1,
      message:
        '1 spans rejected: 1 attribute value or body nested deeper than 4 levels (TENANTRY_MAX_VALUE_DEPTH); truncated: 1 span names to 3 bytes (TENANTRY_MAX_SPAN_NAME_BYTES)',
    });
  });

  it('answers values nested 60 deep and invalid UTF-8 without a 5xx and without an error-level log line', async () => {
    const deep = request([keyValue('tenant.id', stringValue('hostile'))], [span('deep', [keyValue('v', nestedKvlist(60, stringValue('x')))]), span('plain')]);
    const invalid = request(
      [keyValue('tenant.id', stringValue('hostile'))],
      [span('bad', [keyValue('v', nestedKvlist(2, stringValue(Buffer.from([0xff, 0xfe]))))])],
    );
    const answers = await Promise.all([
      post(`${tenantry.httpUrl}/v1/traces`, deep, protobufHeaders(processKey)).then((r) => r.status),
      post(`${tenantry.httpUrl}/v1/traces`, tracesJsonWithValue('hostile', nestedKvlistJson(60)), jsonHeaders(processKey)).then((r) => r.status),
      grpcExport(tenantry.grpcUrl, tracePath, deep, processKey).then((r) => grpc.status[r.code]),
      post(`${tenantry.httpUrl}/v1/traces`, invalid, protobufHeaders(processKey)).then((r) => r.status),
      grpcExport(tenantry.grpcUrl, tracePath, invalid, processKey).then((r) => grpc.status[r.code]),
    ]);
    expect(answers).to.deep.equal([200, 200, 'OK', 400, 'INVALID_ARGUMENT']);
    await stop(tenantry);
    expect(tenantry.output()).not.to.match(/"level":"error"/);
  });
});
