// A cursor walk over 1,000+ logs and spans returns every matching row exactly
// once while new rows keep arriving between pages (before, inside and after
// the walked window, and for other tenants).
import { expect } from 'chai';
import { field, startHarness } from './support/api-harness.ts';
import type { Harness } from './support/api-harness.ts';
import { insertRows, logRow, secondsNs, spanRow } from './support/telemetry-rows.ts';

const T = 1_795_000_000;
const total = 1200;
/** Rows spread over 10 minutes with many equal timestamps (ties settle on the ids). */
const tsOf = (i: number): bigint => secondsNs(T) + BigInt(Math.floor(i / 3)) * 1_500_000_000n;

describe('api/cursor walk under concurrent inserts', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('walk');
    await insertRows(
      h.store,
      'logs',
      Array.from({ length: total }, (_, i) => logRow({ tenant: 'acme', ns: tsOf(i), logId: `log-${i}`, body: i % 2 === 0 ? 'even' : 'odd' })),
    );
    await insertRows(
      h.store,
      'spans',
      Array.from({ length: total }, (_, i) => spanRow({ tenant: 'acme', ns: tsOf(i), traceId: `tr-${i % 7}`, spanId: `span-${i}` })),
    );
  });
  after(async () => {
    await h.close();
  });

  async function walk(
    route: 'logs' | 'traces',
    idOf: (r: Record<string, unknown>) => string,
    filters: Record<string, unknown>,
    during: (page: number) => Promise<void>,
  ): Promise<string[]> {
    const seen: string[] = [];
    let page: string | null = null;
    let n = 0;
    do {
      const reply = await h.post(`/v1/tenants/acme/${route}`, { startTime: T, ...filters, pagination: { limit: 97, ...(page === null ? {} : { page }) } });
      expect(reply.status, reply.text).to.equal(200);
      seen.push(...(field(reply.body, 'data') as Record<string, unknown>[]).map(idOf));
      page = field(reply.body, 'nextPage') as string | null;
      await during(n++);
    } while (page !== null);
    return seen;
  }

  it('walks logs (endTime omitted: the window freezes at the first page)', async () => {
    const seen = await walk(
      'logs',
      (r) => String(r['logId']),
      {},
      async (n) => {
        await insertRows(h.store, 'logs', [
          logRow({ tenant: 'acme', ns: secondsNs(T + 10_000 + n), logId: `new-after-${n}` }), // newer than the walk's frozen end
          logRow({ tenant: 'acme', ns: secondsNs(T + 100_000_000), logId: `future-${n}` }),
          logRow({ tenant: 'globex', ns: tsOf(n * 10), logId: `globex-${n}` }),
        ]);
      },
    );
    const expected = Array.from({ length: total }, (_, i) => `log-${i}`);
    expect(seen.length).to.equal(new Set(seen).size);
    expect([...seen].sort()).to.deep.equal(expected.sort());
  });

  it('walks spans with a filter and a fixed end while rows land inside the already walked range', async () => {
    const seen = await walk(
      'traces',
      (r) => String(r['spanId']),
      { endTime: T + 3600, traceId: ['tr-1', 'tr-2', 'tr-3'] },
      async (n) => {
        // New spans at timestamps the walk has already passed (newer than the cursor) must not reappear or shift pages.
        await insertRows(h.store, 'spans', [
          spanRow({ tenant: 'acme', ns: secondsNs(T + 599) + BigInt(n), traceId: 'tr-1', spanId: `late-newest-${n}` }),
          spanRow({ tenant: 'globex', ns: tsOf(n), traceId: 'tr-1', spanId: `globex-${n}` }),
        ]);
      },
    );
    const expected = Array.from({ length: total }, (_, i) => i)
      .filter((i) => [1, 2, 3].includes(i % 7))
      .map((i) => `span-${i}`);
    expect(expected.length).to.be.above(500);
    const walked = seen.filter((s) => s.startsWith('span-'));
    expect(walked.length).to.equal(new Set(walked).size);
    expect([...walked].sort()).to.deep.equal([...expected].sort());
    expect(seen.some((s) => s.startsWith('globex'))).to.equal(false);
  });
});
