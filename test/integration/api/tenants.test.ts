// GET /v1/tenants, GET and PUT /v1/tenants/:id.
import { expect } from 'chai';
import { field, keys, startHarness } from './support/api-harness.ts';
import type { Harness } from './support/api-harness.ts';
import { insertRows, logRow, secondsNs } from './support/telemetry-rows.ts';

/** A tenant's record without its settings (tenant-settings.test.ts covers those). */
function record(tenant: unknown): unknown {
  if (typeof tenant !== 'object' || tenant === null) return tenant;
  const { id, name } = tenant as { id: unknown; name: unknown };
  return { id, name };
}

const ids = Array.from({ length: 25 }, (_, i) => `t${String(i).padStart(2, '0')}`);

describe('api/tenants', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('tenants');
    await insertRows(
      h.store,
      'logs',
      [...ids, 'acme', 'globex'].map((tenant, i) => logRow({ tenant, ns: secondsNs(1_795_000_000 + i), logId: `l${i}` })),
    );
  });
  after(async () => {
    await h.close();
  });

  it('lists every tenant sorted by id with both cursor names, default page 100', async () => {
    const reply = await h.call('GET', '/v1/tenants');
    expect(reply.status).to.equal(200);
    expect((field(reply.body, 'data') as { id: string }[]).map((t) => t.id)).to.deep.equal(['acme', 'globex', ...ids]);
    expect(record(field(reply.body, 'data', 0))).to.deep.equal({ id: 'acme', name: '' });
    expect(field(reply.body, 'nextPage')).to.equal(null);
    expect(field(reply.body, 'next_page')).to.equal(null);
  });

  it('walks pages with limit and page', async () => {
    const seen: string[] = [];
    let page: string | null = null;
    let pages = 0;
    do {
      const reply = await h.call('GET', `/v1/tenants?limit=4${page === null ? '' : `&page=${page}`}`);
      expect(reply.status, reply.text).to.equal(200);
      const data = field(reply.body, 'data') as { id: string }[];
      expect(data.length).to.be.at.most(4);
      seen.push(...data.map((t) => t.id));
      page = field(reply.body, 'nextPage') as string | null;
      expect(field(reply.body, 'next_page')).to.equal(page);
      pages += 1;
    } while (page !== null);
    expect(seen).to.deep.equal(['acme', 'globex', ...ids]);
    expect(pages).to.equal(7);
  });

  it('refuses limits outside 1–1000 and foreign cursors', async () => {
    for (const limit of ['0', '1001', '-1', 'abc', '2.5']) {
      const reply = await h.call('GET', `/v1/tenants?limit=${limit}`);
      expect(reply.status, limit).to.equal(400);
      expect(field(reply.body, 'error', 'message')).to.contain('limit');
    }
    expect((await h.call('GET', '/v1/tenants?limit=1000')).status).to.equal(200);
    expect((await h.call('GET', '/v1/tenants?limit=1')).status).to.equal(200);
    const first = await h.call('GET', '/v1/tenants?limit=2&search=t');
    const cursor = field(first.body, 'nextPage') as string;
    const replay = await h.call('GET', `/v1/tenants?limit=2&search=x&page=${cursor}`);
    expect(replay.status).to.equal(400);
    expect(field(replay.body, 'error', 'message')).to.contain('different query');
    expect((await h.call('GET', '/v1/tenants?page=garbage!')).status).to.equal(400);
  });

  it('searches id and name case-insensitively', async () => {
    const renamed = await h.call('PUT', '/v1/tenants/globex', { body: { name: 'Globex Corporation' } });
    expect(renamed.status).to.equal(200);
    const byName = await h.call('GET', '/v1/tenants?search=CORPOR');
    expect((field(byName.body, 'data') as unknown[]).map(record)).to.deep.equal([{ id: 'globex', name: 'Globex Corporation' }]);
    const byId = await h.call('GET', '/v1/tenants?search=T0');
    expect((field(byId.body, 'data') as unknown[]).length).to.equal(10);
  });

  it("lists only the key's tenants", async () => {
    const reply = await h.call('GET', '/v1/tenants', { key: keys.readAcme });
    expect((field(reply.body, 'data') as unknown[]).map(record)).to.deep.equal([{ id: 'acme', name: '' }]);
  });

  it('gets one tenant; unknown or out-of-scope ids are 404', async () => {
    expect(record((await h.call('GET', '/v1/tenants/acme', { key: keys.readAcme })).body)).to.deep.equal({ id: 'acme', name: '' });
    expect((await h.call('GET', '/v1/tenants/nope')).status).to.equal(404);
    const hidden = await h.call('GET', '/v1/tenants/globex', { key: keys.readAcme });
    expect(hidden.status).to.equal(404);
    expect(hidden.text).not.to.contain('Globex Corporation');
  });

  it('renames with JSON or form bodies; the newest name wins', async () => {
    const json = await h.call('PUT', '/v1/tenants/t01', { body: { name: 'First' } });
    expect(record(json.body)).to.deep.equal({ id: 't01', name: 'First' });
    const form = await h.call('PUT', '/v1/tenants/t01', { raw: 'name=Second%20name', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status, form.text).to.equal(200);
    expect(record((await h.call('GET', '/v1/tenants/t01')).body)).to.deep.equal({ id: 't01', name: 'Second name' });
    const kept = await h.call('PUT', '/v1/tenants/t01', { body: {} });
    expect(record(kept.body), 'a body without a name keeps the name').to.deep.equal({ id: 't01', name: 'Second name' });
    const cleared = await h.call('PUT', '/v1/tenants/t01', { body: { name: '' } });
    expect(record(cleared.body)).to.deep.equal({ id: 't01', name: '' });
    expect(record((await h.call('GET', '/v1/tenants/t01')).body)).to.deep.equal({ id: 't01', name: '' });
  });

  it('creates the record of a valid unknown id (GitOps before telemetry)', async () => {
    const created = await h.call('PUT', '/v1/tenants/new.tenant-1', { body: { name: 'Newcomer' } });
    expect(created.status).to.equal(200);
    expect(record((await h.call('GET', '/v1/tenants/new.tenant-1')).body)).to.deep.equal({ id: 'new.tenant-1', name: 'Newcomer' });
  });

  it('refuses names past 256 characters, invalid ids and non-string names', async () => {
    expect((await h.call('PUT', '/v1/tenants/acme', { body: { name: 'n'.repeat(256) } })).status).to.equal(200);
    const long = await h.call('PUT', '/v1/tenants/acme', { body: { name: 'n'.repeat(257) } });
    expect(long.status).to.equal(400);
    expect(field(long.body, 'error', 'message')).to.contain('name');
    expect((await h.call('PUT', '/v1/tenants/acme', { body: { name: 5 } })).status).to.equal(400);
    expect((await h.call('PUT', '/v1/tenants/..', { body: { name: 'x' } })).status).to.be.oneOf([400, 404]);
    expect((await h.call('PUT', `/v1/tenants/${'a'.repeat(151)}`, { body: { name: 'x' } })).status).to.equal(400);
    expect((await h.call('PUT', '/v1/tenants/has%20space', { body: { name: 'x' } })).status).to.equal(400);
  });

  it('needs admin to rename, and admin of that tenant', async () => {
    expect((await h.call('PUT', '/v1/tenants/acme', { key: keys.adminAcme, body: { name: 'Acme' } })).status).to.equal(200);
    expect((await h.call('PUT', '/v1/tenants/globex', { key: keys.adminAcme, body: { name: 'Hijack' } })).status).to.equal(404);
    expect(field((await h.call('GET', '/v1/tenants/globex')).body, 'name')).to.equal('Globex Corporation');
  });
});
