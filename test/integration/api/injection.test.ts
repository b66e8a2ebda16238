// Filter values and attribute keys made of quotes, backslashes, %, _, SQL
// keywords and control characters are data, never code: each one finds
// exactly the row that holds it.
import { expect } from 'chai';
import fc from 'fast-check';
import { escapeLike } from '../../../api/v1/query/filters.ts';
import { field, startHarness } from './support/api-harness.ts';
import type { Harness } from './support/api-harness.ts';
import { insertRows, logRow, metricRow, secondsNs, spanRow } from './support/telemetry-rows.ts';

const T = 1_795_000_000;
const nasty = [
  "'",
  '"',
  '\\',
  "\\'",
  "'; DROP TABLE logs; --",
  "' OR 1=1 --",
  ') OR (1=1',
  '%',
  '_',
  '%_%',
  '\\%',
  'a\\_b',
  '{p0:String}',
  '{x:Int64}',
  'SELECT * FROM system.tables',
  '\u0000',
  '\n\r\t',
  '\u0007bell',
  'ünïcødé ☃',
  '`backtick`',
  '$1',
  '?',
  ':name',
  'NULL',
  '[]',
  '{}',
  '\\N',
];
const weird = fc.oneof(
  fc.constantFrom(...nasty),
  fc.string({ unit: fc.constantFrom("'", '"', '\\', '%', '_', ';', '-', ' ', 'a', 'Z', '\u0000', '\n', '{', '}', ':'), minLength: 1, maxLength: 10 }),
);

describe('api/injection', () => {
  let h: Harness;
  let n = 0;
  before(async () => {
    h = await startHarness('injection');
  });
  after(async () => {
    await h.close();
  });

  /** The value a query must send to match `v` exactly: patterns (values with %) get their metacharacters escaped. */
  const exact = (v: string): string => (v.includes('%') ? escapeLike(v) : v);

  it('matches log bodies, ids and attribute keys and values literally', async () => {
    await fc.assert(
      fc.asyncProperty(weird, weird, weird, async (key, value, body) => {
        const id = `inj-${n++}`;
        const ns = secondsNs(T) + BigInt(n);
        await insertRows(h.store, 'logs', [
          logRow({ tenant: 'acme', ns, logId: id, body, traceId: value, attrs: { [key]: value } }),
          logRow({ tenant: 'acme', ns, logId: `${id}-decoy`, body: `${body}x`, traceId: `${value}x`, attrs: { [`${key}x`]: value, [key]: `${value}x` } }),
        ]);
        const window = { startTime: T, endTime: T + 3600 };
        for (const filter of [
          { attributes: { [key]: exact(value) } },
          { traceId: exact(value), logId: [id, `${id}-decoy`] },
          { body: exact(body), logId: [id, `${id}-decoy`] },
        ]) {
          const reply = await h.post('/v1/tenants/acme/logs', { ...window, ...filter, includeAttributes: true });
          expect(reply.status, `${JSON.stringify(filter)} ${reply.text}`).to.equal(200);
          const ids = (field(reply.body, 'data') as { logId: string }[]).map((r) => r.logId);
          if ('attributes' in filter) expect(ids).to.include(id).and.not.include(`${id}-decoy`);
          else expect(ids).to.deep.equal([id]);
        }
      }),
      { numRuns: 40, seed: 11 },
    );
  });

  it('matches span names and groups metrics by nasty keys literally', async () => {
    for (const [i, v] of nasty.entries()) {
      await insertRows(h.store, 'spans', [spanRow({ tenant: 'acme', ns: secondsNs(T + i), traceId: 't', spanId: `s${i}`, name: v })]);
      await insertRows(h.store, 'metrics', [metricRow({ tenant: 'acme', name: v, ns: secondsNs(T + i), value: i, attrs: { [v]: v } })]);
    }
    for (const [i, v] of nasty.entries()) {
      const spans = await h.post('/v1/tenants/acme/traces', { startTime: T, endTime: T + 3600, spanName: exact(v) });
      expect(
        (field(spans.body, 'data') as { spanId: string }[]).map((s) => s.spanId),
        JSON.stringify(v),
      ).to.deep.equal([`s${i}`]);
      const series = await h.post('/v1/tenants/acme/timeseries', {
        startTime: T,
        endTime: T + 60,
        interval: 60,
        queries: { metrics: [v], groupBy: [v], attributes: { [v]: exact(v) }, operator: 'max' },
      });
      expect(series.status, series.text).to.equal(200);
      expect(field(series.body, 'series', 0, 'labels')).to.deep.equal({ [v]: v });
      const empty = field(series.body, 'series', 0, 'emptyBuckets') as number[];
      expect((field(series.body, 'series', 0, 'values') as number[]).filter((_, b) => !empty.includes(b))).to.deep.equal([i]);
    }
    // The tables are all still there.
    const count = await h.post('/v1/tenants/acme/traces', { startTime: T, endTime: T + 3600, pagination: { limit: 1000 } });
    expect(field(count.body, 'data')).to.have.length(nasty.length);
  });

  it('keeps a nasty tenant name and search literal', async () => {
    for (const v of nasty.filter((s) => !s.includes('\u0000'))) {
      const put = await h.call('PUT', '/v1/tenants/acme', { body: { name: v } });
      expect(put.status).to.equal(200);
      expect(field((await h.call('GET', '/v1/tenants/acme')).body, 'name')).to.equal(v);
      const found = await h.call('GET', `/v1/tenants?search=${encodeURIComponent(v)}`);
      expect(found.status).to.equal(200);
      expect((field(found.body, 'data') as { id: string }[]).map((t) => t.id)).to.include('acme');
    }
  });
});
