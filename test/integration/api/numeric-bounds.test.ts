// Issue 33: every numeric input of /v1 has a documented range, and a value
// beyond it is a 400 naming the parameter, never a 500 (durationMin 1e308,
// durationMax 2^64 and interval 1e308 were 500s: the values reached
// ClickHouse as UInt64 parameters or as an infinite bucket width).
import { expect } from 'chai';
import { keys, startHarness } from './support/api-harness.ts';
import type { Harness } from './support/api-harness.ts';

const T = 1_795_000_000;
const window = { startTime: T - 60, endTime: T + 3600 };
const series = { queries: { metrics: ['m'] } };

/** [what, route under /v1/tenants/acme/ (or a full path), method, body, the parameter the 400 must name]. */
const beyond: [string, string, 'POST' | 'GET' | 'PUT', unknown, string][] = [
  ['durationMin 1e308', 'traces', 'POST', { ...window, durationMin: 1e308 }, 'durationMin'],
  ['durationMax 2^64', 'traces', 'POST', { ...window, durationMax: 2 ** 64 }, 'durationMax'],
  ['durationMin -1', 'traces', 'POST', { ...window, durationMin: -1 }, 'durationMin'],
  ['durationMax 1e18 + a step', 'traces', 'POST', { ...window, durationMax: 1e18 + 256 }, 'durationMax'],
  ['interval 1e308', 'timeseries', 'POST', { ...window, ...series, interval: 1e308 }, 'interval'],
  ['interval 0', 'timeseries', 'POST', { ...window, ...series, interval: 0 }, 'interval'],
  ['interval 36,501 days', 'timeseries', 'POST', { ...window, ...series, interval: 36_501 * 86_400 }, 'interval'],
  ['interval 1e-300', 'timeseries', 'POST', { ...window, ...series, interval: 1e-300 }, 'interval'],
  ['logs startTime 1e308', 'logs', 'POST', { startTime: 1e308 }, 'startTime'],
  ['traces endTime 1e308', 'traces', 'POST', { startTime: 1, endTime: 1e308 }, 'endTime'],
  ['timeseries startTime -1', 'timeseries', 'POST', { ...series, startTime: -1 }, 'startTime'],
  ['usage startTime 1e308', 'usage', 'POST', { startTime: 1e308 }, 'startTime'],
  ['usage endTime 2^64', 'usage', 'POST', { startTime: 1, endTime: 2 ** 64 }, 'endTime'],
  ['logs pagination.limit 1e308', 'logs', 'POST', { ...window, pagination: { limit: 1e308 } }, 'limit'],
  ['traces pagination.limit 0', 'traces', 'POST', { ...window, pagination: { limit: 0 } }, 'limit'],
  ['logs pagination.limit 1.5', 'logs', 'POST', { ...window, pagination: { limit: 1.5 } }, 'limit'],
  ['tenants limit 1e308', '/v1/tenants?limit=1e308', 'GET', undefined, 'limit'],
  ['tenants limit 100000', '/v1/tenants?limit=100000', 'GET', undefined, 'limit'],
  ['limits.queryTimeoutSeconds 1e308', '/v1/tenants/acme', 'PUT', { limits: { queryTimeoutSeconds: 1e308 } }, 'queryTimeoutSeconds'],
  ['limits.maxQueryDays 2^64', '/v1/tenants/acme', 'PUT', { limits: { maxQueryDays: 2 ** 64 } }, 'maxQueryDays'],
  ['retention.logsDays -1', '/v1/tenants/acme', 'PUT', { retention: { logsDays: -1 } }, 'logsDays'],
];

describe('api/numeric inputs beyond their range', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('numeric');
  });
  after(async () => {
    await h.close();
  });

  for (const [what, route, method, body, parameter] of beyond) {
    it(`answers ${what} with a 400 naming ${parameter}`, async () => {
      const path = route.startsWith('/') ? route : `/v1/tenants/acme/${route}`;
      const reply = await h.call(method, path, body === undefined ? { key: keys.admin } : { key: keys.admin, body });
      expect(reply.status, reply.text.slice(0, 300)).to.equal(400);
      const error = (reply.body as { error: { code: string; message: string; details?: string[] } }).error;
      expect(error.code).to.equal('invalid_request');
      expect(`${error.message} ${(error.details ?? []).join(' ')}`).to.contain(parameter);
    });
  }

  it('accepts the edges of each range', async () => {
    expect((await h.post('/v1/tenants/acme/traces', { ...window, durationMin: 0, durationMax: 1e18 })).status).to.equal(200);
    expect((await h.post('/v1/tenants/acme/traces', { ...window, durationMin: 2 ** 59 })).status, 'a duration beyond 2^53 ns').to.equal(200);
    expect((await h.post('/v1/tenants/acme/timeseries', { ...window, ...series, interval: 36_500 * 86_400 })).status).to.equal(200);
    expect((await h.post('/v1/tenants/acme/timeseries', { startTime: T, endTime: T + 1, ...series, interval: 0.001 })).status).to.equal(200);
  });
});
