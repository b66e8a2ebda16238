// Pages are bounded in bytes as well as rows (TENANTRY_API_PAGE_MAX_BYTES,
// 1 MiB here): rows whose sizes add up past the budget end the page early
// with a cursor, a single row over the budget is served alone, and a walk
// still returns every row exactly once. A second tenant's pages keep working
// alongside, and tenant A's key cannot reach B's pages or cursors.
import { expect } from 'chai';
import { keys, startHarness } from './support/api-harness.ts';
import type { Harness } from './support/api-harness.ts';
import { insertRows, logRow, secondsNs, spanRow } from './support/telemetry-rows.ts';

const T = 1_795_000_000;
const budget = 1_048_576;
const window = { startTime: T - 60, endTime: T + 3600 };
// Sizes of acme's span names, newest first: small ones, four of 400 KB (two per page), one of 3 MB (alone), small ones.
const nameSizes = [10, 10, 400_000, 400_000, 400_000, 400_000, 3_000_000, 10, 10, 10];

interface Page {
  data: { spanId?: string; logId?: string; spanName?: string; body?: string }[];
  nextPage: string | null;
}

describe('api/pages bounded in bytes', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('pagebytes', [], 10_000, budget);
    await insertRows(
      h.store,
      'spans',
      nameSizes.map((size, i) =>
        spanRow({
          tenant: 'acme',
          ns: secondsNs(T + 100 - i),
          traceId: 'trace',
          spanId: `s${String(i).padStart(2, '0')}`,
          name: `${i}:`.padEnd(size, 'n'),
        }),
      ),
    );
    await insertRows(
      h.store,
      'logs',
      nameSizes.map((size, i) => logRow({ tenant: 'acme', ns: secondsNs(T + 100 - i), logId: `l${i}`, body: 'b'.repeat(size) })),
    );
    await insertRows(h.store, 'spans', [spanRow({ tenant: 'globex', ns: secondsNs(T), traceId: 'g', spanId: 'g1', name: 'globex-op' })]);
  });
  after(async () => {
    await h.close();
  });

  /** Every page of a walk, with the byte length of each answer. */
  async function walk(path: string, body: Record<string, unknown>, key: string): Promise<{ page: Page; bytes: number }[]> {
    const pages: { page: Page; bytes: number }[] = [];
    let cursor: string | null = null;
    do {
      const reply = await h.post(path, { ...body, pagination: { limit: 1000, ...(cursor === null ? {} : { page: cursor }) } }, key);
      expect(reply.status, reply.text.slice(0, 200)).to.equal(200);
      const page = reply.body as Page;
      pages.push({ page, bytes: Buffer.byteLength(reply.text) });
      cursor = page.nextPage;
      expect(pages.length).to.be.below(20);
    } while (cursor !== null);
    return pages;
  }

  it('stops a traces page before the budget, serves the 3 MB span alone, and the walk returns every span once', async () => {
    const pages = await walk('/v1/tenants/acme/traces', window, keys.readAcme);
    const ids = pages.flatMap((p) => p.page.data.map((s) => s.spanId));
    expect(ids).to.deep.equal(nameSizes.map((_, i) => `s${String(i).padStart(2, '0')}`));
    expect(pages.map((p) => p.page.data.length)).to.deep.equal([4, 2, 1, 3]);
    for (const p of pages) if (p.page.data.length > 1) expect(p.bytes).to.be.at.most(budget);
    const alone = pages[2]?.page.data[0]?.spanName ?? '';
    expect(alone.length).to.equal(3_000_000);
  });

  it('bounds logs pages the same way, also with attributes included', async () => {
    const pages = await walk('/v1/tenants/acme/logs', { ...window, includeAttributes: true }, keys.readAcme);
    expect(pages.flatMap((p) => p.page.data.map((l) => l.logId))).to.deep.equal(nameSizes.map((_, i) => `l${i}`));
    expect(pages.map((p) => p.page.data.length)).to.deep.equal([4, 2, 1, 3]);
  });

  it('keeps the row limit: a small limit ends the page first', async () => {
    const reply = await h.post('/v1/tenants/acme/traces', { ...window, pagination: { limit: 1 } }, keys.readAcme);
    expect((reply.body as Page).data.map((s) => s.spanId)).to.deep.equal(['s00']);
    expect((reply.body as Page).nextPage).to.be.a('string');
  });

  it("keeps the second tenant working, and keeps A's key and cursors away from B", async () => {
    const globex = await h.post('/v1/tenants/globex/traces', window, keys.readGlobex);
    expect((globex.body as Page).data.map((s) => s.spanName)).to.deep.equal(['globex-op']);
    const first = await h.post('/v1/tenants/acme/traces', window, keys.readAcme);
    const cursor = (first.body as Page).nextPage;
    expect(cursor).to.be.a('string');
    const crossKey = await h.post('/v1/tenants/globex/traces', { ...window, pagination: { page: cursor } }, keys.readAcme);
    expect(crossKey.status).to.equal(404);
    expect(crossKey.text).not.to.contain('globex-op');
    const crossCursor = await h.post('/v1/tenants/globex/traces', { ...window, pagination: { page: cursor } }, keys.readGlobex);
    expect(crossCursor.status).to.equal(400);
    expect(crossCursor.text).to.contain('different query');
  });
});
