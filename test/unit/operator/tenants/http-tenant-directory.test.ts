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
  const bodies: string[] = [];
  let defaults: unknown = { limits: { maxQueryDays: 30 }, retention: {} };
  const settings = {
    limits: { ingestBytesPerSecond: 1048576, ingestBurstBytes: 4194304, maxConcurrentQueries: 8, maxQueryDays: 7, queryTimeoutSeconds: 30 },
    retention: { logsDays: 30, tracesDays: 30, metricsDays: 90 },
    sources: {
      limits: {
        ingestBytesPerSecond: 'default',
        ingestBurstBytes: 'default',
        maxConcurrentQueries: 'default',
        maxQueryDays: 'tenant',
        queryTimeoutSeconds: 'default',
      },
      retention: { logsDays: 'default', tracesDays: 'default', metricsDays: 'default' },
    },
  };

  before(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method ?? ''} ${req.url ?? ''} ${req.headers.authorization ?? ''}`);
      const url = new URL(req.url ?? '/', 'http://x');
      const send = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (req.headers.authorization !== 'Bearer k') {
        send(401, { error: { code: 'unauthorized', message: 'bad key' } });
        return;
      }
      if (url.pathname === '/v1/settings/tenant-defaults') {
        if (defaults === undefined) {
          send(404, { error: { code: 'not_found', message: 'no route' } });
          return;
        }
        let body = '';
        req
          .on('data', (c: Buffer) => {
            body += c.toString();
          })
          .on('end', () => {
            if (req.method === 'PUT') {
              bodies.push(body);
              defaults = JSON.parse(body);
            }
            send(200, defaults);
          });
        return;
      }
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
        req
          .on('data', (c: Buffer) => {
            body += c.toString();
          })
          .on('end', () => {
            bodies.push(body);
            const parsed = JSON.parse(body) as { name?: string; limits?: Record<string, number> };
            if (parsed.limits?.['maxQueryDays'] === 0) {
              send(400, { error: { code: 'invalid_request', message: 'limits.maxQueryDays must be at least 1' } });
              return;
            }
            if (parsed.name !== undefined) names.set(id, parsed.name);
            send(200, { id, name: names.get(id) ?? '', ...(url.searchParams.get('source') === 'tenant' ? settings : {}) });
          });
        return;
      }
      const name = names.get(id);
      if (name === undefined) send(404, { error: { code: 'not_found', message: 'no' } });
      else send(200, { id, name });
    });
    await new Promise<void>((r) => {
      server.listen(0, '127.0.0.1', r);
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  after(async () => {
    await new Promise<void>((r) => {
      server.close(() => {
        r();
      });
    });
  });

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

  it('pushes declared settings with ?source=tenant and reads effective values with their sources', async () => {
    const dir = new HttpTenantDirectory(base, 'k');
    const r = await dir.putDeclaredSettings('t1', { limits: { maxQueryDays: 7 }, retention: {} });
    expect(seen).to.include('PUT /v1/tenants/t1?source=tenant Bearer k');
    expect(JSON.parse(bodies.at(-1) ?? '')).to.deep.equal({ limits: { maxQueryDays: 7 }, retention: {} });
    expect(r).to.deep.equal({ ok: true, value: { id: 't1', name: 'Tenant 1', settings } });
    const refused = await dir.putDeclaredSettings('t1', { limits: { maxQueryDays: 0 }, retention: {} });
    expect(refused).to.deep.equal({ ok: false, error: 'PUT /v1/tenants/t1?source=tenant: HTTP 400 limits.maxQueryDays must be at least 1' });
  });

  it('reads and replaces the tenant defaults; an API without the route reads as undefined', async () => {
    const dir = new HttpTenantDirectory(base, 'k');
    expect(await dir.getTenantDefaults()).to.deep.equal({ ok: true, value: { limits: { maxQueryDays: 30 }, retention: {} } });
    const put = await dir.putTenantDefaults({ limits: {}, retention: { logsDays: 7 } });
    expect(put).to.deep.equal({ ok: true, value: { limits: {}, retention: { logsDays: 7 } } });
    expect(seen).to.include('PUT /v1/settings/tenant-defaults Bearer k');
    defaults = undefined;
    expect(await dir.getTenantDefaults()).to.deep.equal({ ok: true, value: undefined });
  });

  it('returns failures as values: bad key, unreachable API', async () => {
    const denied = await new HttpTenantDirectory(base, 'wrong').list();
    expect(denied.ok).to.equal(false);
    expect(denied.ok ? '' : denied.error).to.contain('HTTP 401: bad key');
    const down = await new HttpTenantDirectory('http://127.0.0.1:1', 'k').get('x');
    expect(down.ok).to.equal(false);
  });
});
