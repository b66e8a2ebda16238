// HttpTenantDirectory against a small fake /v1 tenants API on 127.0.0.1.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { HttpTenantDirectory } from '../../../../operator/tenants/http-tenant-directory.ts';

describe('operator HTTP tenant directory', () => {
  let server: Server;
  let base = '';
  const names = new Map<string, string>(Array.from({ length: 5 }, (_, i) => [`t${i}`, `Tenant ${i}`]));
  const seen: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method ?? ''} ${req.url ?? ''} ${req.headers.authorization ?? ''}`);
      const url = new URL(req.url ?? '/', 'http://x');
      const send = (status: number, body: unknown): void => { res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)); };
      if (req.headers.authorization !== 'Bearer k') { send(401, { error: { code: 'unauthorized', message: 'bad key' } }); return; }
      if (url.pathname === '/v1/tenants') {
        // Two per page, cursor = index of the next item.
        const from = Number(url.searchParams.get('page') ?? '0');
        const ids = [...names.keys()].sort();
        const next = from + 2 < ids.length ? String(from + 2) : null;
        send(200, { data: ids.slice(from, from + 2).map((id) => ({ id, name: names.get(id) })), nextPage: next, next_page: next });
        return;
      }
      const id = decodeURIComponent(url.pathname.replace('/v1/tenants/', ''));
      if (req.method === 'PUT') {
        let body = '';
        req.on('data', (c: Buffer) => { body += c.toString(); }).on('end', () => {
          names.set(id, (JSON.parse(body) as { name: string }).name);
          send(200, { id, name: names.get(id) });
        });
        return;
      }
      const name = names.get(id);
      if (name === undefined) send(404, { error: { code: 'not_found', message: 'no' } }); else send(200, { id, name });
    });
    await new Promise<void>((r) => { server.listen(0, '127.0.0.1', r); });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  after(async () => { await new Promise<void>((r) => { server.close(() => { r(); }); }); });

  it('follows the cursor through every page with the admin key', async () => {
    const listed = await new HttpTenantDirectory(base, 'k').list();
    expect(listed).to.deep.equal({ ok: true, value: [...names.entries()].sort().map(([id, name]) => ({ id, name })) });
    expect(seen.filter((s) => s.startsWith('GET /v1/tenants?'))).to.have.length(3);
    expect(seen.every((s) => s.endsWith('Bearer k'))).to.equal(true);
  });

  it('gets one tenant, 404 as absent, and renames (creating unknown ids)', async () => {
    const dir = new HttpTenantDirectory(base, 'k');
    expect(await dir.get('t1')).to.deep.equal({ ok: true, value: { id: 't1', name: 'Tenant 1' } });
    expect(await dir.get('nope')).to.deep.equal({ ok: true, value: undefined });
    expect(await dir.rename('new id', 'Fresh')).to.deep.equal({ ok: true, value: { id: 'new id', name: 'Fresh' } });
    expect(seen).to.include(`PUT /v1/tenants/new%20id Bearer k`);
  });

  it('returns failures as values: bad key, unreachable API', async () => {
    const denied = await new HttpTenantDirectory(base, 'wrong').list();
    expect(denied.ok).to.equal(false);
    expect(denied.ok ? '' : denied.message).to.contain('HTTP 401: bad key');
    const down = await new HttpTenantDirectory('http://127.0.0.1:1', 'k').get('x');
    expect(down.ok).to.equal(false);
  });
});
