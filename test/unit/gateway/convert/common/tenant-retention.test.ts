// Items older than their tenant's retention for the signal are rejected at
// ingest (issue 13), in both wire formats of every signal: a tenant with a
// short retention loses an item that a tenant with a long one keeps, in one
// request, and the partial-success message names the tenant and its days.
import { expect } from 'chai';
import { RequestLimits, defaultItemLimits } from '../../../../../gateway/convert/common/item-limits.ts';
import { LogIdGenerator } from '../../../../../gateway/convert/logs/log-id.ts';
import { rowConverters } from '../../../../../gateway/convert/row-converters.ts';
import { TenantResolver } from '../../../../../gateway/convert/common/tenant-resolver.ts';
import type { RowBatch } from '../../../../../gateway/rowbinary/row-batch.ts';
import { ExportLogsServiceRequest, ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../../../../../gateway/wire/otlp-messages.ts';
import type { SignalName } from '../../../../../gateway/wire/otlp-messages.ts';
import { builtInDefaults, resolveEffective } from '../../../../../src/tenant/settings/tenant-settings.ts';
import type { TenantRetention, TenantSettingsView } from '../../../../../src/tenant/settings/tenant-settings.ts';
import { readRows } from '../../support/row-binary-reader.ts';
import type { Principal } from '../../../../../src/auth/api-keys.ts';
import { jsonBody } from '../json-body.ts';

const nowMs = 1_700_000_000_000;
const principal: Principal = { name: 'p', scopes: new Set(['ingest']), tenants: new Set(['short', 'long', 'other']) };
const dayMs = 86_400_000;
const ns = (ms: number): string => (BigInt(ms) * 1_000_000n).toString();
const str = (s: string): object => ({ stringValue: s });
const kv = (key: string, value: object): object => ({ key, value });

/** A settings view: `short` keeps every signal 2 days, `long` 400, everyone else the defaults (30/30/90). */
function view(asked: string[] = []): TenantSettingsView {
  const api = (days: number): TenantRetention => ({ logsDays: days, tracesDays: days, metricsDays: days });
  const byTenant: Record<string, TenantRetention> = { short: api(2), long: api(400) };
  return {
    effective: (tenant) => {
      asked.push(tenant);
      const retention = byTenant[tenant];
      return resolveEffective(retention === undefined ? {} : { api: { retention } }, builtInDefaults);
    },
    generation: 1,
  };
}

const encoders: Readonly<Record<SignalName, (request: object) => Uint8Array>> = {
  traces: (r) => ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject(r)).finish(),
  logs: (r) => ExportLogsServiceRequest.encode(ExportLogsServiceRequest.fromObject(r)).finish(),
  metrics: (r) => ExportMetricsServiceRequest.encode(ExportMetricsServiceRequest.fromObject(r)).finish(),
};
const nouns: Readonly<Record<SignalName, string>> = { traces: 'spans', logs: 'log records', metrics: 'data points' };

/** One request with an item per (tenant, age in days): the item's name/body says which. */
function request(signal: SignalName, items: ReadonlyArray<{ tenant: string; ageDays: number }>): object {
  const resource = (tenant: string): object => ({ attributes: [kv('tenant.id', str(tenant))] });
  const at = (ageDays: number): string => ns(nowMs - ageDays * dayMs);
  const name = (i: { tenant: string; ageDays: number }): string => `${i.tenant}-${i.ageDays}`;
  switch (signal) {
    case 'traces':
      return {
        resourceSpans: items.map((i) => ({
          resource: resource(i.tenant),
          scopeSpans: [{ spans: [{ name: name(i), startTimeUnixNano: at(i.ageDays), endTimeUnixNano: at(i.ageDays) }] }],
        })),
      };
    case 'logs':
      return {
        resourceLogs: items.map((i) => ({ resource: resource(i.tenant), scopeLogs: [{ logRecords: [{ timeUnixNano: at(i.ageDays), body: str(name(i)) }] }] })),
      };
    case 'metrics':
      return {
        resourceMetrics: items.map((i) => ({
          resource: resource(i.tenant),
          scopeMetrics: [{ metrics: [{ name: name(i), gauge: { dataPoints: [{ timeUnixNano: at(i.ageDays), asDouble: 1 }] } }] }],
        })),
      };
  }
}

/** Converts in both formats with the settings; checks they agree; returns the protobuf batch. */
function convertBoth(signal: SignalName, body: object, settings: TenantSettingsView): RowBatch {
  // Fresh converters per format: log ids continue from one conversion to the next.
  const converters = (): ReturnType<typeof rowConverters> => rowConverters(new LogIdGenerator('0000000000'), () => nowMs, defaultItemLimits, settings);
  const fromProtobuf = converters()[signal].protobuf.convert(Buffer.from(encoders[signal](body)), new TenantResolver(principal));
  const fromJson = converters()[signal].json.convert(jsonBody(body), new TenantResolver(principal));
  if (!fromProtobuf.ok) expect.fail(fromProtobuf.error);
  if (!fromJson.ok) expect.fail(fromJson.error);
  expect(fromProtobuf.value.rows.equals(fromJson.value.rows)).to.equal(true);
  expect(fromProtobuf.value.rejected.message(nouns[signal])).to.equal(fromJson.value.rejected.message(nouns[signal]));
  return fromProtobuf.value;
}

const stored = (signal: SignalName, batch: RowBatch): unknown[] =>
  readRows(batch.table, batch.rows).map((r) => (signal === 'traces' ? r['span_name'] : signal === 'logs' ? r['body'] : r['metric_name']));

describe('retention per tenant at ingest', () => {
  for (const signal of ['traces', 'logs', 'metrics'] as const) {
    it(`rejects ${signal} older than their tenant's retention and keeps the same age for a tenant with a longer one`, () => {
      const batch = convertBoth(
        signal,
        request(signal, [
          { tenant: 'short', ageDays: 1 },
          { tenant: 'short', ageDays: 3 },
          { tenant: 'long', ageDays: 3 },
          { tenant: 'long', ageDays: 399 },
          { tenant: 'long', ageDays: 401 },
          { tenant: 'other', ageDays: 3 },
        ]),
        view(),
      );
      expect(stored(signal, batch)).to.deep.equal(['short-1', 'long-3', 'long-399', 'other-3']);
      expect(batch.rejected.count).to.equal(2);
      const field = { traces: 'tracesDays', logs: 'logsDays', metrics: 'metricsDays' }[signal];
      expect(batch.rejected.message(nouns[signal])).to.equal(
        `2 ${nouns[signal]} rejected: 2 timestamp older than the ${signal} retention of its tenant (retention.${field}), ` +
          `e.g. ${new Date(nowMs - 3 * dayMs).toISOString()} for tenant "short" (2 days)`,
      );
    });
  }

  it('asks the settings once per tenant and request, not per item', () => {
    const asked: string[] = [];
    convertBoth(
      'logs',
      request(
        'logs',
        [1, 2, 3].flatMap((d) => [
          { tenant: 'short', ageDays: d },
          { tenant: 'long', ageDays: d },
        ]),
      ),
      view(asked),
    );
    // Two conversions (protobuf and JSON), two tenants each.
    expect(asked).to.deep.equal(['short', 'long', 'short', 'long']);
  });

  it('keeps the process retention without settings (contexts built by hand)', () => {
    const limits = new RequestLimits({ ...defaultItemLimits, retention: { logsDays: 5, tracesDays: 5, metricsDays: 5 } }, 'logs', nowMs, 0);
    const at = (ageDays: number): [number, number] => {
      const n = BigInt(ns(nowMs - ageDays * dayMs));
      return [Number(n & 0xffffffffn), Number(n >> 32n)];
    };
    expect(limits.rejectionBefore('long', ...at(4), 0, false)).to.equal(undefined);
    expect(limits.rejectionBefore('long', ...at(6), 0, false)).to.have.property('reason', 'timestamp_too_old');
  });
});
