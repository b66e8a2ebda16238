// Tenant isolation, randomised: for every route a key for tenant A asking
// for tenant B gets 404 and no byte of B's data, whatever the tenant ids and
// filter values; and A's own queries never return B's rows.
import { expect } from 'chai';
import fc from 'fast-check';
import { startHarness } from './support/api-harness.ts';
import type { Harness, KeySpec, Reply } from './support/api-harness.ts';
import { insertRows, logRow, metricRow, secondsNs, spanRow } from './support/telemetry-rows.ts';

const T = 1_795_000_000;
const idChars = fc.constantFrom(..."ABCxyz019._~!*'()-".split(''));
const tenantId = fc.string({ unit: idChars, minLength: 1, maxLength: 12 }).filter((s) => s !== '.' && s !== '..');
const pool = [...new Set(fc.sample(tenantId, { seed: 42, numRuns: 60 }))].slice(0, 24);
const keyOf = (i: number): string => `tenant-key-${String(i).padStart(4, '0')}-abcdef`;
const marker = (i: number): string => `SECRET${i}X`;

/** Every route, asked for `tenant` with filter values taken from `v`. */
function requests(tenant: string, v: string): [string, string, unknown][] {
  const t = encodeURIComponent(tenant);
  const window = { startTime: T - 60, endTime: T + 3600 };
  return [
    ['GET', `/v1/tenants/${t}`, undefined],
    ['PUT', `/v1/tenants/${t}`, { name: v }],
    ['POST', `/v1/tenants/${t}/logs`, { ...window, body: [v, '%'], attributes: { owner: [v, '%'] }, includeAttributes: true }],
    ['POST', `/v1/tenants/${t}/traces`, { ...window, spanName: [v, '%'], includeAttributes: true }],
    ['POST', `/v1/tenants/${t}/timeseries`, { ...window, queries: { metrics: ['m', v], groupBy: ['owner'] } }],
    ['POST', `/v1/tenants/${t}/usage`, { startTime: T - 86_400 }],
  ];
}

describe('api/tenant isolation (randomised)', () => {
  let h: Harness;
  const call = (method: string, path: string, body: unknown, key: string): Promise<Reply> =>
    h.call(method, path, { key, ...(body === undefined ? {} : { body }) });

  before(async () => {
    const extra: KeySpec[] = pool.map((t, i) => ({ key: keyOf(i), scopes: ['read', 'admin'], tenants: [t] }));
    h = await startHarness('isolation', extra);
    await insertRows(
      h.store,
      'logs',
      pool.map((tenant, i) => logRow({ tenant, ns: secondsNs(T + i), logId: marker(i), body: marker(i), attrs: { owner: marker(i) } })),
    );
    await insertRows(
      h.store,
      'spans',
      pool.map((tenant, i) => spanRow({ tenant, ns: secondsNs(T + i), traceId: marker(i), spanId: marker(i), name: marker(i) })),
    );
    await insertRows(
      h.store,
      'metrics',
      pool.map((tenant, i) => metricRow({ tenant, name: 'm', ns: secondsNs(T + i), value: 424_242 + i, attrs: { owner: marker(i) } })),
    );
    for (const [i, t] of pool.entries()) await call('PUT', `/v1/tenants/${encodeURIComponent(t)}`, { name: marker(i) }, keyOf(i));
  });
  after(async () => {
    await h.close();
  });

  it('has a pool of distinct generated tenants', () => {
    expect(pool.length).to.be.at.least(20);
  });

  it('answers 404 with no byte of B to a key for A, on every route', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: pool.length - 1 }), fc.nat({ max: pool.length - 1 }), fc.string({ maxLength: 12 }), async (a, b, v) => {
        fc.pre(a !== b);
        const target = pool[b] ?? '';
        for (const [method, path, body] of requests(target, v)) {
          const reply = await call(method, path, body, keyOf(a));
          expect(reply.status, `${method} ${path}`).to.equal(404);
          expect(reply.text).not.to.contain(marker(b));
          expect(reply.text).not.to.contain(String(424_242 + b));
        }
        // A sees only A, even with B's values as filters.
        for (const [method, path, body] of requests(pool[a] ?? '', marker(b))) {
          if (method === 'PUT') continue;
          const reply = await call(method, path, body, keyOf(a));
          expect(reply.status, `${method} ${path} ${reply.text}`).to.equal(200);
          // The timeseries answer echoes the request (which names B's marker); the data parts must not hold it.
          const { query: _echo, ...data } = reply.body as Record<string, unknown>;
          expect(JSON.stringify(data)).not.to.contain(marker(b));
          expect(JSON.stringify(data)).not.to.contain(String(424_242 + b));
        }
        const list = await call('GET', '/v1/tenants?limit=1000', undefined, keyOf(a));
        const listed = list.body as { data: { id: string; name: string }[]; nextPage: unknown; next_page: unknown };
        expect({ ...listed, data: listed.data.map(({ id, name }) => ({ id, name })) }).to.deep.equal({
          data: [{ id: pool[a], name: marker(a) }],
          nextPage: null,
          next_page: null,
        });
      }),
      { numRuns: 25, seed: 7 },
    );
  });

  it('returns each tenant its own rows', async () => {
    for (const [i, t] of pool.entries()) {
      const reply = await call('POST', `/v1/tenants/${encodeURIComponent(t)}/logs`, { startTime: T - 60, endTime: T + 3600 }, keyOf(i));
      expect(reply.body).to.have.nested.property('data[0].logId', marker(i));
      expect((reply.body as { data: unknown[] }).data).to.have.length(1);
    }
  });
});
