// POST /v1/tenants/:tenant_id/usage: read from usage_daily (and usage_rejected_daily) only, per UTC day or month.
import { expect } from 'chai';
import { queryTable } from '../../../src/clickhouse/schema/ddl.ts';
import { field, keys, startHarness } from './support/api-harness.ts';
import type { Harness } from './support/api-harness.ts';
import { insertRows, logRow, spanRow } from './support/telemetry-rows.ts';

const utc = (iso: string): number => Date.parse(`${iso}T00:00:00Z`) / 1000;

describe('api/usage', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('usage');
    const day = (tenant: string, d: string, l: number, b: number, s: number, m: number): Record<string, unknown> => ({
      tenant_id: tenant,
      day: d,
      log_records: l,
      log_bytes: b,
      spans: s,
      metric_points: m,
    });
    await h.store.client.insert({
      table: queryTable(h.store, 'usage_daily'),
      format: 'JSONEachRow',
      values: [
        day('acme', '2026-09-30', 1000, 1000, 1000, 1000),
        day('acme', '2026-10-01', 1, 10, 2, 3),
        day('acme', '2026-10-30', 1, 10, 2, 3),
        day('acme', '2026-10-31', 4, 40, 5, 6),
        day('acme', '2026-10-31', 1, 1, 1, 1), // a second part: summed at read time
        day('acme', '2026-11-01', 7, 70, 8, 9),
        day('acme', '2026-11-20', 100, 100, 100, 100),
        day('globex', '2026-10-31', 555, 555, 555, 555),
      ],
    });
    const rejected = (tenant: string, d: string, signal: string, reason: string, items: number, bytes: number): Record<string, unknown> => ({
      tenant_id: tenant,
      day: d,
      signal,
      reason,
      items,
      bytes,
    });
    await h.store.client.insert({
      table: queryTable(h.store, 'usage_rejected_daily'),
      format: 'JSONEachRow',
      values: [
        rejected('acme', '2026-10-31', 'traces', 'rate_limited', 40, 4000),
        rejected('acme', '2026-10-31', 'traces', 'rate_limited', 2, 200), // a second part: summed at read time
        rejected('acme', '2026-10-31', 'traces', 'timestamp_too_old', 1, 50),
        rejected('acme', '2026-11-01', 'logs', 'rate_limited', 7, 700),
        rejected('acme', '2026-11-20', 'logs', 'rate_limited', 1000, 1000),
        rejected('globex', '2026-10-31', 'traces', 'rate_limited', 555, 555),
      ],
    });
  });

  const none = { units: 0, bytes: 0, reasons: {} };
  const noneRejected = { logs: none, metrics: none, traces: none };
  after(async () => {
    await h.close();
  });

  it('answers per UTC day: totals over the days touching the range, one entry per day', async () => {
    const reply = await h.post('/v1/tenants/acme/usage', { startTime: utc('2026-10-30') + 43_200, endTime: utc('2026-11-01') + 3600, interval: 'day' });
    expect(reply.status, reply.text).to.equal(200);
    const tracesRejected = { units: 43, bytes: 4250, reasons: { rate_limited: 42, timestamp_too_old: 1 } };
    const logsRejected = { units: 7, bytes: 700, reasons: { rate_limited: 7 } };
    expect(reply.body).to.deep.equal({
      logs: { bytes: 121, units: 13 },
      metrics: { units: 19 },
      traces: { units: 16 },
      rejected: { logs: logsRejected, metrics: none, traces: tracesRejected },
      data: [
        {
          start: utc('2026-10-30') * 1000,
          end: utc('2026-10-31') * 1000,
          logs: { bytes: 10, units: 1 },
          metrics: { units: 3 },
          traces: { units: 2 },
          rejected: noneRejected,
        },
        {
          start: utc('2026-10-31') * 1000,
          end: utc('2026-11-01') * 1000,
          logs: { bytes: 41, units: 5 },
          metrics: { units: 7 },
          traces: { units: 6 },
          rejected: { logs: none, metrics: none, traces: tracesRejected },
        },
        {
          start: utc('2026-11-01') * 1000,
          end: utc('2026-11-02') * 1000,
          logs: { bytes: 70, units: 7 },
          metrics: { units: 9 },
          traces: { units: 8 },
          rejected: { logs: logsRejected, metrics: none, traces: none },
        },
      ],
    });
  });

  it('defaults to day, and an end at midnight does not touch the next day', async () => {
    const reply = await h.post('/v1/tenants/acme/usage', { startTime: utc('2026-10-31'), endTime: utc('2026-11-01') });
    expect(field(reply.body, 'data')).to.have.length(1);
    expect(field(reply.body, 'logs')).to.deep.equal({ bytes: 41, units: 5 });
  });

  it('answers per UTC month over whole months', async () => {
    const reply = await h.post('/v1/tenants/acme/usage', { startTime: utc('2026-10-31') * 1000, endTime: utc('2026-11-02') * 1000, interval: 'month' });
    expect(reply.status, reply.text).to.equal(200);
    expect(field(reply.body, 'logs')).to.deep.equal({ bytes: 231, units: 114 });
    expect(field(reply.body, 'data')).to.deep.equal([
      {
        start: utc('2026-10-01') * 1000,
        end: utc('2026-11-01') * 1000,
        logs: { bytes: 61, units: 7 },
        metrics: { units: 13 },
        traces: { units: 10 },
        rejected: { logs: none, metrics: none, traces: { units: 43, bytes: 4250, reasons: { rate_limited: 42, timestamp_too_old: 1 } } },
      },
      {
        start: utc('2026-11-01') * 1000,
        end: utc('2026-12-01') * 1000,
        logs: { bytes: 170, units: 107 },
        metrics: { units: 109 },
        traces: { units: 108 },
        rejected: { logs: { units: 1007, bytes: 1700, reasons: { rate_limited: 1007 } }, metrics: none, traces: none },
      },
    ]);
  });

  it('counts what ingestion writes, through the materialized views', async () => {
    const now = BigInt(Date.now()) * 1_000_000n;
    await insertRows(h.store, 'logs', [logRow({ tenant: 'fresh', ns: now, logId: 'x', body: 'héllo', attrs: { ab: 'cd' } })]);
    await insertRows(h.store, 'spans', [
      spanRow({ tenant: 'fresh', ns: now, traceId: 't', spanId: 's' }),
      spanRow({ tenant: 'fresh', ns: now, traceId: 't', spanId: 's2' }),
    ]);
    const reply = await h.post('/v1/tenants/fresh/usage', { startTime: Date.now() / 1000 - 60 });
    // Bytes are UTF-8: "héllo" is 6 bytes, plus "ab" and "cd".
    expect(field(reply.body, 'logs')).to.deep.equal({ bytes: 10, units: 1 });
    expect(field(reply.body, 'traces')).to.deep.equal({ units: 2 });
  });

  it('answers zeros for a tenant without usage and 400 to bad requests', async () => {
    const empty = await h.post('/v1/tenants/nobody/usage', { startTime: utc('2026-10-31'), endTime: utc('2026-11-01') });
    expect(field(empty.body, 'logs')).to.deep.equal({ bytes: 0, units: 0 });
    for (const body of [
      { startTime: utc('2026-10-31'), interval: 'week' },
      { startTime: utc('2026-10-31'), endTime: utc('2026-10-30') },
      { startTime: 0, endTime: utc('2026-10-30'), interval: 'day' },
      { interval: 'day' },
      { startTime: 1, granularity: 'day' },
    ]) {
      expect((await h.post('/v1/tenants/acme/usage', body)).status, JSON.stringify(body)).to.equal(400);
    }
    expect((await h.post('/v1/tenants/acme/usage', { startTime: 0, endTime: utc('2026-10-30'), interval: 'month' })).status).to.equal(200);
  });

  it('never mixes in another tenant', async () => {
    const reply = await h.post('/v1/tenants/acme/usage', { startTime: utc('2026-10-31'), endTime: utc('2026-11-01') }, keys.readAcme);
    expect(reply.text).not.to.contain('555');
    expect((await h.post('/v1/tenants/globex/usage', { startTime: utc('2026-10-31') }, keys.readAcme)).status).to.equal(404);
  });
});
