// The route plumbing without a store: scope, validate and the one reply
// adapter, on the real app with an injected query runner (the port routes
// read the store through) that records what it was asked.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Registry } from 'prom-client';
import { createApp } from '../../../api/app.ts';
import type { ApiError } from '../../../api/http/api-error.ts';
import { unavailable } from '../../../api/http/api-error.ts';
import { httpMetrics } from '../../../api/http/http-metrics.ts';
import type { QueryRunner } from '../../../api/query/query-runner.ts';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import type { Result } from '../../../src/result.ts';
import { fail, ok } from '../../../src/result.ts';
import { fixedSettings } from '../../../support/fixed-settings.ts';

const keys = { readAcme: 'read-acme-key-0123456789', adminAcme: 'admin-acme-key-0123456789', admin: 'admin-all-key-0123456789' };

/** A runner answering every read with `answer`, counting the reads. */
function fakeRunner(answer: () => Result<unknown[], ApiError>): QueryRunner & { readonly reads: () => number } {
  let reads = 0;
  const read = <T>(): Promise<Result<T[], ApiError>> => {
    reads += 1;
    return Promise.resolve(answer() as Result<T[], ApiError>);
  };
  return { rows: read, manyRows: read, command: () => Promise.resolve(ok(undefined)), reads: () => reads };
}

describe('api/route middleware and reply', () => {
  let answer: () => Result<unknown[], ApiError> = () => ok([]);
  const runner = fakeRunner(() => answer());
  const server = createServer();
  let base = '';

  before(async () => {
    const parsed = parseKeys(
      JSON.stringify([
        { key: keys.readAcme, scopes: ['read'], tenants: ['acme'] },
        { key: keys.adminAcme, scopes: ['admin'], tenants: ['acme'] },
        { key: keys.admin, scopes: ['read', 'admin'], tenants: ['*'] },
      ]),
      'test',
    );
    if (!parsed.ok) throw new Error(parsed.error);
    const app = createApp({
      schema: { database: 'db', cluster: undefined },
      runner,
      now: () => 1_795_000_000_000_000_000n,
      pageMaxBytes: 1_048_576,
      settings: fixedSettings(),
      keys: parsed.value,
      log: silentLogger,
      metrics: httpMetrics(new Registry()),
    });
    const koa = app.callback();
    server.on('request', (req, res) => {
      void koa(req, res);
    });
    await new Promise<void>((resolve) => {
      server.listen(0, '127.0.0.1', resolve);
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => {
      server.close(resolve);
    });
  });

  const call = async (
    method: string,
    path: string,
    key: string,
    body?: unknown,
  ): Promise<{ status: number; body: { error?: { code: string; message: string; requestId: string } }; requestId: string | null }> => {
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return {
      status: res.status,
      body: (await res.json()) as { error?: { code: string; message: string; requestId: string } },
      requestId: res.headers.get('x-request-id'),
    };
  };

  it("checks the tenant before the scope: a tenant outside the key's list is 404 even without the scope", async () => {
    const before = runner.reads();
    expect((await call('POST', '/v1/tenants/globex/logs', keys.adminAcme, { startTime: 1 })).status).to.equal(404);
    expect((await call('POST', '/v1/tenants/acme/logs', keys.adminAcme, { startTime: 1 })).status).to.equal(403);
    expect((await call('PUT', '/v1/tenants/acme', keys.readAcme, { name: 'x' })).status).to.equal(403);
    expect(runner.reads()).to.equal(before);
  });

  it('validates before the handler runs: a bad body or a repeated query parameter never reaches the store', async () => {
    const before = runner.reads();
    const bad = await call('POST', '/v1/tenants/acme/logs', keys.readAcme, { startTime: 'soon' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error?.message).to.contain('startTime');
    const twice = await call('GET', '/v1/tenants?limit=1&limit=2', keys.admin);
    expect(twice.status).to.equal(400);
    expect(twice.body.error?.message).to.contain('"limit" is given more than once');
    expect(runner.reads()).to.equal(before);
  });

  it("sends the handler's value as JSON and its error with status, envelope and request id", async () => {
    answer = () => ok([]);
    const page = await call('POST', '/v1/tenants/acme/logs', keys.readAcme, { startTime: 1 });
    expect(page.status).to.equal(200);
    expect(page.body).to.deep.equal({ data: [], nextPage: null, next_page: null });
    answer = () => fail(unavailable('the telemetry store is unavailable; retry shortly'));
    const down = await call('POST', '/v1/tenants/acme/logs', keys.readAcme, { startTime: 1 });
    expect(down.status).to.equal(503);
    expect(down.body.error).to.deep.equal({ code: 'unavailable', message: 'the telemetry store is unavailable; retry shortly', requestId: down.requestId });
  });
});
