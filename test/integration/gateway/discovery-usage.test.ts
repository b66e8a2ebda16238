// Tenant discovery and usage counters come from schema v1's materialized
// views on the tables the gateway writes: check they see gateway rows.
import { expect } from 'chai';
import { startTestGateway, keys, select } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { logsProtobuf, metricsProtobuf, post, protobufHeaders, tracesJson, tracesProtobuf } from './support/payloads.ts';

describe('gateway: tenant discovery and usage', function () {
  this.timeout(30_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway('usage');
  });
  after(async () => {
    await gw.close();
  });

  it('records new tenants and counts spans, log records (with bytes) and data points per tenant and UTC day', async () => {
    const ok = (p: Promise<{ status: number }>): Promise<void> =>
      p.then((r) => {
        expect(r.status).to.equal(200);
      });
    await ok(post(`${gw.httpUrl}/v1/traces`, tracesProtobuf(tracesJson({ 'tenant.id': 'u1' }, [{ name: 'a' }, { name: 'b' }])), protobufHeaders(keys.admin)));
    await ok(post(`${gw.httpUrl}/v1/traces`, tracesProtobuf(tracesJson({ 'tenant.id': 'u1' }, [{ name: 'c' }])), protobufHeaders(keys.admin)));
    await ok(post(`${gw.httpUrl}/v1/logs`, logsProtobuf({ 'tenant.id': 'u2' }, [{ body: 'hello', attrs: { ab: 'cd' } }]), protobufHeaders(keys.admin)));
    await ok(post(`${gw.httpUrl}/v1/metrics`, metricsProtobuf({}, [{ 'tenant.id': 'u1' }, { 'tenant.id': 'u2' }]), protobufHeaders(keys.admin)));
    const tenants = await select<{ tenant_id: string }>(gw.store, `SELECT tenant_id FROM ${gw.store.database}.tenants GROUP BY tenant_id ORDER BY tenant_id`);
    expect(tenants.map((t) => t.tenant_id)).to.deep.equal(['u1', 'u2']);
    const usage = await select<{ tenant_id: string; spans: string; log_records: string; log_bytes: string; metric_points: string; today: number }>(
      gw.store,
      `
      SELECT tenant_id, toString(sum(spans)) AS spans, toString(sum(log_records)) AS log_records, toString(sum(log_bytes)) AS log_bytes,
             toString(sum(metric_points)) AS metric_points, max(day = toDate(now(), 'UTC')) AS today
      FROM ${gw.store.database}.usage_daily GROUP BY tenant_id ORDER BY tenant_id`,
    );
    // u2's log: body "hello" (5) + resource attribute tenant.id=u2 (9 + 2) + record attribute ab=cd (2 + 2) = 20 bytes.
    expect(usage).to.deep.equal([
      { tenant_id: 'u1', spans: '3', log_records: '0', log_bytes: '0', metric_points: '1', today: 1 },
      { tenant_id: 'u2', spans: '0', log_records: '1', log_bytes: '20', metric_points: '1', today: 1 },
    ]);
  });
});
