// The gRPC health service on the OTLP/gRPC port (issue 35), asked by a real
// gRPC client without a key: NOT_SERVING until the process is ready, SERVING
// while it is, NOT_SERVING once it drains (and a Watch then ends, so the
// server's shutdown is not held by it); the service "liveness" is SERVING
// throughout (for liveness probes); unknown services are NOT_FOUND.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import { startGatewayWith } from '../../../gateway/gateway.ts';
import type { RunningGateway } from '../../../gateway/gateway.ts';
import { clickHouseRowSink } from '../../../gateway/writer/clickhouse-row-sink.ts';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { Readiness } from '../../../src/ops/readiness.ts';
import type { ProcessContext } from '../../../src/target/process-context.ts';
import { migratedStore } from '../../support/embedded-store.ts';
import { testProcessContext } from '../../support/process-context.ts';
import { healthCheck, healthWatch } from './support/grpc-health-client.ts';
import { gatewayConfig } from '../../../support/default-config.ts';

const traceService = 'opentelemetry.proto.collector.trace.v1.TraceService';

describe('OTLP/gRPC port: grpc.health.v1.Health (issue 35)', function () {
  this.timeout(60_000);
  let store: Store;
  let gateway: RunningGateway | undefined;
  let logDir: string;
  let readiness: Readiness;
  let proc: ProcessContext | undefined;
  let address: string;

  before(async () => {
    store = await migratedStore('grpc_health');
    const parsed = parseKeys(JSON.stringify([{ key: 'grpc-health-key-0123456789', scopes: ['ingest'], tenants: ['*'] }]), 'test keys');
    if (!parsed.ok) throw new Error(parsed.error);
    logDir = mkdtempSync(join(tmpdir(), 'tenantry-wal-'));
    // A condition the test holds: the process is not ready until it says so.
    readiness = new Readiness(['held by the test']);
    proc = await testProcessContext(store, { keys: parsed.value, readiness });
    gateway = await startGatewayWith(
      proc.ctx,
      gatewayConfig({
        maxRequestBytes: 1024 * 1024,
        writer: { logDir, maxBatchRows: 50_000, maxBatchBytes: 16 * 1024 * 1024, maxBatchDelayMs: 5, maxLogBytes: 64 * 1024 * 1024 },
      }),
      clickHouseRowSink(store),
    );
    address = `127.0.0.1:${gateway.ports['otlpGrpc'] ?? 0}`;
  });

  after(async () => {
    await gateway?.stop();
    proc?.stop();
    await store.close();
    rmSync(logDir, { recursive: true, force: true });
  });

  it('follows readiness, unauthenticated: NOT_SERVING before ready, SERVING when ready, NOT_SERVING once draining; Watch streams each change and ends', async () => {
    expect(await healthCheck(address)).to.equal('NOT_SERVING');
    expect(await healthCheck(address, traceService)).to.equal('NOT_SERVING');
    expect(await healthCheck(address, 'no.such.Service')).to.equal(grpc.status.NOT_FOUND);
    expect(await healthCheck(address, 'liveness')).to.equal('SERVING');

    const watch = healthWatch(address);
    expect(await watch.next()).to.equal('NOT_SERVING');
    readiness.done('held by the test');
    expect(await watch.next()).to.equal('SERVING');
    expect(await healthCheck(address)).to.equal('SERVING');
    expect(await healthCheck(address, traceService)).to.equal('SERVING');

    // Storage refusing writes makes the process unready, and the port says so.
    readiness.unready('storage');
    expect(await watch.next()).to.equal('NOT_SERVING');
    readiness.done('storage');
    expect(await watch.next()).to.equal('SERVING');

    const unknown = healthWatch(address, 'no.such.Service');
    expect(await unknown.next()).to.equal('SERVICE_UNKNOWN');

    readiness.beginShutdown();
    expect(await watch.next()).to.equal('NOT_SERVING');
    expect(await watch.ended).to.equal(grpc.status.OK);
    expect(await unknown.ended).to.equal(grpc.status.OK);
    expect(await healthCheck(address)).to.equal('NOT_SERVING');
    expect(await healthCheck(address, 'liveness')).to.equal('SERVING');
    // Nothing the health service holds keeps the port from closing.
    await gateway?.stop();
    proc?.stop();
    gateway = undefined;
  });
});
