// Per-item limits before the acknowledgement (docs/gateway.md, "Limits"),
// read back from embedded ClickHouse: a batch spread over 150 days stores
// what is within the retention and rejects the rest by partial success, every
// size limit truncates or drops as documented, a value nested too deep and a
// request whose rows outgrow it are rejected per item; a well-behaved
// neighbour tenant keeps succeeding all along.
import * as grpc from '@grpc/grpc-js';
import { expect } from 'chai';
import {
  ExportLogsServiceRequest,
  ExportLogsServiceResponse,
  ExportMetricsServiceRequest,
  ExportTraceServiceRequest,
} from '../../../gateway/wire/otlp-messages.ts';
import { startTestGateway, keys, select } from './support/gateway-harness.ts';
import type { TestGateway } from './support/gateway-harness.ts';
import { grpcExport, logsPath } from './support/grpc-client.ts';
import { jsonHeaders, post, protobufHeaders, tracePartialSuccess, tracesJson, tracesProtobuf } from './support/payloads.ts';

const dayMs = 86_400_000;
const ns = (offsetMs: number): string => (BigInt(Date.now() + offsetMs) * 1_000_000n).toString();
const str = (s: string): object => ({ stringValue: s });
const kv = (key: string, value: object): object => ({ key, value });
/** An AnyValue nesting `levels` levels of arrays. */
const nested = (levels: number): object => (levels === 0 ? str('x') : { arrayValue: { values: [nested(levels - 1)] } });
const encodeTraces = (request: object): Buffer => Buffer.from(ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(request)).finish());

describe('gateway: item limits', function () {
  this.timeout(120_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway('limits');
  });
  after(async () => {
    await gw.close();
  });

  const count = async (table: string, tenant: string): Promise<number> => {
    const [row] = await select<{ n: string }>(gw.store, `SELECT toString(count()) AS n FROM ${gw.store.database}.${table} WHERE tenant_id = {t:String}`, {
      t: tenant,
    });
    return Number(row?.n);
  };

  /** The neighbour: tenant-a, with its own key, sends ordinary spans `times` times; every answer must be a plain 200. */
  const neighbour = async (times: number): Promise<void> => {
    for (let i = 0; i < times; i++) {
      const res = await post(
        `${gw.httpUrl}/v1/traces`,
        tracesProtobuf(tracesJson({ 'tenant.id': 'tenant-a' }, [{ name: 'ok' }, { name: 'fine' }])),
        protobufHeaders(keys.tenantA),
      );
      expect(res.status).to.equal(200);
      expect(tracePartialSuccess(res.body)).to.deep.equal({ rejected: 0, message: '' });
    }
  };

  describe('timestamps storage accepts', () => {
    /** One item per day, 0 to 149 days (and a minute) back, plus one 5 minutes and one an hour ahead. */
    const offsets = [...Array.from({ length: 150 }, (_, d) => -d * dayMs - 60_000), 5 * 60_000, 3_600_000];

    it('stores the spans of a 150-day batch within the traces retention and rejects the others, while a neighbour keeps succeeding', async () => {
      const body = encodeTraces({
        resourceSpans: [
          {
            resource: { attributes: [kv('tenant.id', str('days-traces'))] },
            scopeSpans: [{ spans: offsets.map((offset, i) => ({ name: `s${i}`, startTimeUnixNano: ns(offset), endTimeUnixNano: ns(offset + 1) })) }],
          },
        ],
      });
      const [res] = await Promise.all([post(`${gw.httpUrl}/v1/traces`, body, protobufHeaders(keys.admin)), neighbour(5)]);
      expect(res.status).to.equal(200);
      const partial = tracePartialSuccess(res.body);
      // Days 0-29 and 5 minutes ahead are in; days 30-149 and an hour ahead are out.
      expect(partial.rejected).to.equal(121);
      expect(partial.message).to.match(
        /^121 spans rejected: 120 timestamp older than the traces retention of its tenant \(retention\.tracesDays\), e\.g\. \d{4}-.*; 1 timestamp more than 600 s in the future \(TENANTRY_MAX_FUTURE_SKEW_SECONDS\)/,
      );
      expect(await count('spans', 'days-traces')).to.equal(31);
      expect(await count('spans', 'tenant-a')).to.equal(10);
      expect(await gw.registry.getSingleMetricAsString('tenantry_gateway_rejected_items_total')).to.match(/signal="traces",reason="timestamp_too_old"} 120/);
    });

    it('keeps 90 days of metric points from OTLP/JSON and 30 days of log records from gRPC', async () => {
      const points = offsets.map((offset) => ({ timeUnixNano: ns(offset), asDouble: 1 }));
      const metrics = JSON.stringify(
        ExportMetricsServiceRequest.toObject(
          ExportMetricsServiceRequest.fromObject({
            resourceMetrics: [
              { resource: { attributes: [kv('tenant.id', str('days-metrics'))] }, scopeMetrics: [{ metrics: [{ name: 'g', gauge: { dataPoints: points } }] }] },
            ],
          }),
          { longs: String },
        ),
      );
      const logs = Buffer.from(
        ExportLogsServiceRequest.encode(
          ExportLogsServiceRequest.fromObject({
            resourceLogs: [
              {
                resource: { attributes: [kv('tenant.id', str('days-logs'))] },
                scopeLogs: [{ logRecords: offsets.map((offset) => ({ timeUnixNano: ns(offset), body: str('b') })) }],
              },
            ],
          }),
        ).finish(),
      );
      const [metricsRes, logsRes] = await Promise.all([
        post(`${gw.httpUrl}/v1/metrics`, metrics, jsonHeaders(keys.admin)),
        grpcExport(gw.grpcUrl, logsPath, logs, keys.admin),
        neighbour(3),
      ]);
      expect(metricsRes.status).to.equal(200);
      const metricsPartial = (JSON.parse(metricsRes.body.toString()) as { partialSuccess: { rejectedDataPoints: number; errorMessage: string } })
        .partialSuccess;
      expect(metricsPartial.rejectedDataPoints).to.equal(61);
      expect(metricsPartial.errorMessage).to.match(/metrics retention of its tenant \(retention\.metricsDays\)/);
      expect(logsRes.code).to.equal(grpc.status.OK);
      const logsPartial = ExportLogsServiceResponse.decode(logsRes.body ?? Buffer.alloc(0)).partialSuccess;
      expect(Number(logsPartial?.rejectedLogRecords)).to.equal(121);
      expect(await count('metrics', 'days-metrics')).to.equal(91);
      expect(await count('logs', 'days-logs')).to.equal(31);
    });
  });

  describe('sizes', () => {
    const attributes = (n: number, valueBytes = 1): object[] => Array.from({ length: n }, (_, i) => kv(`k${i}`, str('v'.repeat(valueBytes))));

    it('truncates names, keys and values and drops attributes, events and links beyond the defaults, counting each', async () => {
      const body = encodeTraces({
        resourceSpans: [
          {
            resource: { attributes: [kv('tenant.id', str('sizes'))] },
            scopeSpans: [
              {
                spans: [
                  {
                    name: 'n'.repeat(1025),
                    startTimeUnixNano: ns(0),
                    endTimeUnixNano: ns(1),
                    attributes: [kv('K'.repeat(1025), str('é'.repeat(8193))), ...attributes(128)],
                    events: Array.from({ length: 129 }, (_, i) => ({ name: `e${i}`, timeUnixNano: ns(0) })),
                    links: Array.from({ length: 129 }, (_, i) => ({ traceState: `l${i}` })),
                  },
                ],
              },
            ],
          },
        ],
      });
      const [res] = await Promise.all([post(`${gw.httpUrl}/v1/traces`, body, protobufHeaders(keys.admin)), neighbour(2)]);
      expect(res.status).to.equal(200);
      expect(tracePartialSuccess(res.body)).to.deep.equal({
        rejected: 0,
        message:
          'truncated: 1 attributes beyond 128 per list dropped (TENANTRY_MAX_ATTRIBUTES), 1 attribute keys to 1024 bytes (TENANTRY_MAX_ATTRIBUTE_KEY_BYTES), ' +
          '1 attribute values to 16384 bytes (TENANTRY_MAX_ATTRIBUTE_VALUE_BYTES), 1 span names to 1024 bytes (TENANTRY_MAX_SPAN_NAME_BYTES), ' +
          '1 events beyond 128 per span dropped (TENANTRY_MAX_SPAN_EVENTS), 1 links beyond 128 per span dropped (TENANTRY_MAX_SPAN_LINKS)',
      });
      const [row] = await select<Record<string, number>>(
        gw.store,
        `
        SELECT length(span_name) AS name, length(mapKeys(span_attributes)) AS attributes, length(mapKeys(span_attributes)[1]) AS key,
               length(mapValues(span_attributes)[1]) AS value, length(event_names) AS events, length(link_trace_states) AS links,
               dropped_attributes_count AS da, dropped_events_count AS de, dropped_links_count AS dl
        FROM ${gw.store.database}.spans WHERE tenant_id = 'sizes'`,
      );
      // é is 2 bytes: 16384 bytes is 8192 of them.
      expect(row).to.deep.equal({ name: 1024, attributes: 128, key: 1024, value: 16384, events: 128, links: 128, da: 1, de: 1, dl: 1 });
      const truncations = await gw.registry.getSingleMetricAsString('tenantry_gateway_truncations_total');
      for (const reason of ['attribute_count', 'attribute_key_bytes', 'attribute_value_bytes', 'span_name_bytes', 'span_events', 'span_links']) {
        expect(truncations).to.match(new RegExp(`signal="traces",reason="${reason}"} [1-9]`));
      }
    });

    it('truncates log bodies to 256 KiB', async () => {
      const body = Buffer.from(
        ExportLogsServiceRequest.encode(
          ExportLogsServiceRequest.fromObject({
            resourceLogs: [
              {
                resource: { attributes: [kv('tenant.id', str('bodies'))] },
                scopeLogs: [{ logRecords: [{ timeUnixNano: ns(0), body: str('b'.repeat(256 * 1024 + 1)) }] }],
              },
            ],
          }),
        ).finish(),
      );
      const res = await post(`${gw.httpUrl}/v1/logs`, body, protobufHeaders(keys.admin));
      expect(res.status).to.equal(200);
      expect(ExportLogsServiceResponse.decode(res.body).partialSuccess?.errorMessage).to.equal(
        'truncated: 1 log bodies to 262144 bytes (TENANTRY_MAX_LOG_BODY_BYTES)',
      );
      const [row] = await select<{ n: number }>(gw.store, `SELECT length(body) AS n FROM ${gw.store.database}.logs WHERE tenant_id = 'bodies'`);
      expect(row?.n).to.equal(256 * 1024);
    });

    it('stores a value nested 16 levels deep and rejects the span of one nested 17', async () => {
      const body = encodeTraces({
        resourceSpans: [
          {
            resource: { attributes: [kv('tenant.id', str('depth'))] },
            scopeSpans: [{ spans: [16, 17].map((levels) => ({ name: `d${levels}`, startTimeUnixNano: ns(0), attributes: [kv('v', nested(levels))] })) }],
          },
        ],
      });
      const res = await post(`${gw.httpUrl}/v1/traces`, body, protobufHeaders(keys.admin));
      expect(res.status).to.equal(200);
      expect(tracePartialSuccess(res.body)).to.deep.equal({
        rejected: 1,
        message: '1 spans rejected: 1 attribute value or body nested deeper than 16 levels (TENANTRY_MAX_VALUE_DEPTH)',
      });
      const names = await select<{ span_name: string }>(gw.store, `SELECT span_name FROM ${gw.store.database}.spans WHERE tenant_id = 'depth'`);
      expect(names).to.deep.equal([{ span_name: 'd16' }]);
    });

    it('rejects the items of a request beyond 16× its size in rows, a resource of 128 × 16 KiB copied into every span', async () => {
      const body = encodeTraces({
        resourceSpans: [
          {
            resource: { attributes: [kv('tenant.id', str('expansion')), ...attributes(127, 16 * 1024)] },
            scopeSpans: [{ spans: Array.from({ length: 1000 }, (_, i) => ({ name: `s${i}`, startTimeUnixNano: ns(0) })) }],
          },
        ],
      });
      const [res] = await Promise.all([post(`${gw.httpUrl}/v1/traces`, body, protobufHeaders(keys.admin)), neighbour(3)]);
      expect(res.status).to.equal(200);
      const partial = tracePartialSuccess(res.body);
      // A row is ~2 MiB of resource: the budget, 16 × ~2 MiB, holds 17 of them (the last one started under it).
      const stored = await count('spans', 'expansion');
      expect(stored).to.be.within(15, 18);
      expect(partial.rejected).to.equal(1000 - stored);
      expect(partial.message).to.match(/rows would outgrow 16× its size \(TENANTRY_MAX_REQUEST_EXPANSION\)/);
    });
  });
});
