// The official OpenTelemetry JS exporters, over every protocol, against the
// gateway on embedded ClickHouse: every signal lands under the right tenant
// with the right fields.
import { expect } from 'chai';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { startTestGateway, keys, select } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { makeLogs, makeMetrics, makeSpans, protocols, sendLogs, sendMetrics, sendSpans } from './support/otel-clients.ts';

interface SpanRow {
  tenant_id: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  span_name: string;
  span_kind: string;
  service_name: string;
  duration_ns: string;
  status_code: string;
  status_message: string;
  scope_name: string;
  scope_version: string;
  resource_attributes: Record<string, string>;
  span_attributes: Record<string, string>;
  event_names: string[];
  event_attributes: Record<string, string>[];
  link_span_ids: string[];
  link_attributes: Record<string, string>[];
  ts: string;
}

describe('gateway: official OTel exporters', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway('exporters');
  });
  after(async () => {
    await gw.close();
  });

  for (const protocol of protocols) {
    it(`stores spans sent over ${protocol} under the resource tenant, with every field`, async () => {
      const service = `svc-${protocol.replace('/', '-')}`;
      const spans = makeSpans({ 'service.name': service, 'tenant.id': 'tenant-a', 'host.name': 'h1' });
      const result = await sendSpans(protocol, { ...gw, key: keys.admin }, spans);
      expect(result.code, String(result.error)).to.equal(0);
      const rows = await select<SpanRow>(
        gw.store,
        `SELECT *, toString(toUnixTimestamp64Nano(timestamp)) AS ts, toString(duration_ns) AS duration_ns FROM ${gw.store.database}.spans WHERE service_name = {s:String} ORDER BY span_kind`,
        { s: service },
      );
      expect(rows).to.have.length(2);
      const [server, client] = [rows.find((r) => r.span_kind === 'SERVER'), rows.find((r) => r.span_kind === 'CLIENT')];
      const root = spans.find((s) => s.name === 'GET /checkout');
      expect(server).to.include({
        tenant_id: 'tenant-a',
        span_name: 'GET /checkout',
        parent_span_id: '',
        status_code: 'OK',
        scope_name: 'test-scope',
        scope_version: '1.2.3',
      });
      expect(server?.trace_id).to.equal(root?.spanContext().traceId);
      expect(server?.span_id).to.equal(root?.spanContext().spanId);
      expect(server?.ts).to.equal((BigInt(root?.startTime[0] ?? 0) * 1_000_000_000n + BigInt(root?.startTime[1] ?? 0)).toString());
      expect(Number(server?.duration_ns)).to.be.greaterThanOrEqual(0);
      expect(server?.resource_attributes).to.include({ 'service.name': service, 'host.name': 'h1', 'tenant.id': 'tenant-a' });
      expect(server?.span_attributes).to.deep.equal({ 'http.method': 'GET' });
      expect(server?.event_names).to.deep.equal(['cache miss']);
      expect(server?.event_attributes).to.deep.equal([{ 'cache.key': 'cart:1' }]);
      expect(client).to.include({ tenant_id: 'tenant-a', parent_span_id: server?.span_id, status_code: 'ERROR', status_message: 'connection reset' });
      expect(client?.link_span_ids).to.deep.equal([server?.span_id]);
      expect(client?.link_attributes).to.deep.equal([{ 'link.kind': 'follows' }]);
    });

    it(`stores log records sent over ${protocol}, tenant from the record attribute`, async () => {
      const service = `logsvc-${protocol.replace('/', '-')}`;
      const records = makeLogs({ 'service.name': service }, [
        { body: 'payment failed', attributes: { 'tenant.id': 'tenant-b', 'order.id': 42 }, severity: SeverityNumber.ERROR, severityText: 'ERROR' },
        { body: 'text only severity', attributes: { 'tenant.id': 7 }, severity: SeverityNumber.UNSPECIFIED, severityText: 'warning' },
        { body: 'with uid', attributes: { 'tenant.id': 'tenant-b', 'log.record.uid': 'uid-123' } },
      ]);
      const result = await sendLogs(protocol, { ...gw, key: keys.admin }, records);
      expect(result.code, String(result.error)).to.equal(0);
      const rows = await select<{
        tenant_id: string;
        body: string;
        severity_number: number;
        severity_text: string;
        log_id: string;
        scope_name: string;
        log_attributes: Record<string, string>;
      }>(
        gw.store,
        `SELECT tenant_id, body, severity_number, severity_text, log_id, scope_name, log_attributes FROM ${gw.store.database}.logs WHERE service_name = {s:String} ORDER BY body`,
        { s: service },
      );
      expect(rows.map((r) => [r.tenant_id, r.body, r.severity_number])).to.deep.equal([
        ['tenant-b', 'payment failed', 17],
        ['7', 'text only severity', 13],
        ['tenant-b', 'with uid', 9],
      ]);
      expect(rows[0]?.log_attributes).to.deep.equal({ 'tenant.id': 'tenant-b', 'order.id': '42' });
      expect(rows[0]?.scope_name).to.equal('log-scope');
      expect(rows[2]?.log_id).to.equal('uid-123');
      expect(rows[0]?.log_id).to.match(/^[0-9a-f]{30}$/);
      expect(rows[0]?.log_id).to.not.equal(rows[1]?.log_id);
    });

    it(`stores metric points sent over ${protocol}, per point tenant`, async () => {
      const service = `msvc-${protocol.replace('/', '-')}`;
      const metrics = await makeMetrics({ 'service.name': service }, [{ 'tenant.id': 'tenant-a' }, { 'tenant.id': 'tenant-c', route: '/x' }]);
      const result = await sendMetrics(protocol, { ...gw, key: keys.admin }, metrics);
      expect(result.code, String(result.error)).to.equal(0);
      const rows = await select<{
        tenant_id: string;
        metric_name: string;
        metric_type: string;
        temporality: string;
        is_monotonic: boolean;
        value: number;
        count: string;
        sum: number;
        bucket_counts: string[];
        unit: string;
        description: string;
      }>(
        gw.store,
        `SELECT tenant_id, metric_name, metric_type, toString(temporality) AS temporality, is_monotonic, value, toString(count) AS count, sum, arrayMap(x -> toString(x), bucket_counts) AS bucket_counts, unit, description
          FROM ${gw.store.database}.metrics WHERE service_name = {s:String} ORDER BY metric_name, tenant_id`,
        { s: service },
      );
      expect(rows.map((r) => `${r.metric_name}/${r.tenant_id}/${r.metric_type}`)).to.deep.equal([
        'latency/tenant-a/histogram',
        'latency/tenant-c/histogram',
        'queue.depth/tenant-a/sum',
        'queue.depth/tenant-c/sum',
        'requests/tenant-a/sum',
        'requests/tenant-c/sum',
        'temperature/tenant-a/gauge',
        'temperature/tenant-c/gauge',
      ]);
      const requests = rows.find((r) => r.metric_name === 'requests');
      expect(requests).to.include({ temporality: 'cumulative', is_monotonic: true, value: 5, unit: '1', description: 'requests served' });
      expect(rows.find((r) => r.metric_name === 'queue.depth')).to.include({ is_monotonic: false, value: -2 });
      const latency = rows.find((r) => r.metric_name === 'latency');
      expect(latency).to.include({ count: '2', sum: 262 });
      expect(latency?.bucket_counts.reduce((a, b) => a + Number(b), 0)).to.equal(2);
      expect(rows.find((r) => r.metric_name === 'temperature')).to.include({ value: 21.5 });
    });
  }
});
