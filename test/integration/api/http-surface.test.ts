// The HTTP surface shared by every route: authentication, the error shape,
// body and method handling, the OpenAPI document, ops endpoints, timeouts.
import { deflateSync, gzipSync } from 'node:zlib';
import { expect } from 'chai';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildRouter } from '../../../api/app.ts';
import { documentedRoutes } from '../../../api/v1/openapi/openapi-document.ts';
import { createQueryRunner } from '../../../api/query/query-runner.ts';
import { probeStatement } from '../../support/tenant-scans.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { field, keys, startHarness } from './support/api-harness.ts';
import { checkSchema } from './support/schema-check.ts';
import { insertRows, logRow, metricRow, secondsNs, spanRow } from './support/telemetry-rows.ts';
import type { Harness, Reply } from './support/api-harness.ts';
import { fixedSettings } from '../../../support/fixed-settings.ts';

const routes: readonly [string, string, unknown][] = [
  ['GET', '/v1/tenants', undefined],
  ['GET', '/v1/tenants/acme', undefined],
  ['PUT', '/v1/tenants/acme', { name: 'x' }],
  ['POST', '/v1/tenants/acme/logs', { startTime: 1 }],
  ['POST', '/v1/tenants/acme/traces', { startTime: 1 }],
  ['POST', '/v1/tenants/acme/usage', { startTime: 1 }],
  ['POST', '/v1/tenants/acme/timeseries', { startTime: 1, queries: { metrics: ['m'] } }],
];

function expectError(reply: Reply, status: number, code: string): void {
  expect(reply.status, reply.text).to.equal(status);
  expect(field(reply.body, 'error', 'code')).to.equal(code);
  expect(field(reply.body, 'error', 'message'))
    .to.be.a('string')
    .and.not.equal('');
  expect(field(reply.body, 'error', 'requestId')).to.equal(reply.headers.get('x-request-id'));
  expect(reply.text).not.to.match(/\bat .*\.ts:\d+/); // never a stack trace
}

describe('api/http surface', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness('surface');
  });
  after(async () => {
    await h.close();
  });

  it('answers 401 with WWW-Authenticate for a missing, malformed or unknown key on every route', async () => {
    for (const [method, path, body] of routes) {
      const variants: Record<string, string>[] = [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer not-a-known-key-123456' }];
      for (const headers of variants) {
        const reply = await h.call(method, path, { key: null, headers, ...(body === undefined ? {} : { body }) });
        expectError(reply, 401, 'unauthorized');
        expect(reply.headers.get('www-authenticate')).to.equal('Bearer');
      }
    }
  });

  it('accepts the key in x-api-key too', async () => {
    const reply = await h.call('GET', '/v1/tenants', { key: null, headers: { 'x-api-key': keys.admin } });
    expect(reply.status).to.equal(200);
  });

  it('answers 403 when the key lacks the scope', async () => {
    for (const [method, path, body] of routes) {
      const reply = await h.call(method, path, { key: keys.ingest, ...(body === undefined ? {} : { body }) });
      expectError(reply, 403, 'forbidden');
    }
    expectError(await h.post('/v1/tenants/acme/logs', { startTime: 1 }, keys.adminAcme), 403, 'forbidden');
    expectError(await h.call('PUT', '/v1/tenants/acme', { key: keys.readAcme, body: { name: 'x' } }), 403, 'forbidden');
  });

  it('answers 404 for unknown routes and 405 for a wrong method', async () => {
    expectError(await h.call('GET', '/v1/nothing'), 404, 'not_found');
    expectError(await h.call('GET', '/v1/tenants/acme/logs'), 405, 'method_not_allowed');
    const del = await h.call('DELETE', '/v1/tenants/acme');
    expectError(del, 405, 'method_not_allowed');
    expect(del.headers.get('allow')).to.contain('PUT');
  });

  it('answers 400 to malformed JSON and non-object bodies, 415 to other media types, 413 past 1 MiB', async () => {
    for (const raw of ['{bad', '"text"', '42']) {
      const reply = await h.call('POST', '/v1/tenants/acme/logs', { raw, headers: { 'content-type': 'application/json' } });
      expectError(reply, 400, 'invalid_request');
      expect(field(reply.body, 'error', 'message')).to.contain('not valid JSON');
    }
    const empty = await h.call('POST', '/v1/tenants/acme/logs', { raw: '', headers: { 'content-type': 'application/json' } });
    expectError(empty, 400, 'invalid_request');
    expect(field(empty.body, 'error', 'message')).to.contain('startTime');
    expectError(await h.post('/v1/tenants/acme/logs', [1, 2]), 400, 'invalid_request');
    expectError(
      await h.call('POST', '/v1/tenants/acme/logs', { raw: 'startTime=1', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
    expectError(
      await h.call('POST', '/v1/tenants/acme/logs', { raw: 'startTime=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'unsupported_media_type',
    );
    const big = JSON.stringify({ startTime: 1, body: 'x'.repeat(1_100_000) });
    expectError(await h.call('POST', '/v1/tenants/acme/logs', { raw: big, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large');
  });

  it('reads gzip and deflate bodies, a BOM and any charset parameter; limits bodies after decompression and without a length', async () => {
    const body = JSON.stringify({ startTime: 1_700_000_000, endTime: 1_700_086_400 });
    const send = (payload: Buffer | string, headers: Record<string, string>): Promise<Response> =>
      fetch(`${h.base}/v1/tenants/acme/usage`, { method: 'POST', headers: { authorization: `Bearer ${keys.admin}`, ...headers }, body: payload });
    for (const [encoding, payload] of [
      ['gzip', gzipSync(body)],
      ['deflate', deflateSync(body)],
      ['identity', `\ufeff${body}`],
    ] as const) {
      const res = await send(payload, { 'content-type': 'Application/JSON; charset=utf-8', 'content-encoding': encoding });
      expect(res.status, `${encoding}: ${await res.text()}`).to.equal(200);
    }
    const bomb = await send(gzipSync(JSON.stringify({ startTime: 1, body: 'x'.repeat(2_000_000) })), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expect(bomb.status).to.equal(413);
    expect(((await bomb.json()) as { error: { code: string } }).error.code).to.equal('payload_too_large');
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 12; i++) controller.enqueue(new TextEncoder().encode(i === 0 ? '{"body":"' : 'x'.repeat(100_000)));
        controller.close();
      },
    });
    const unsized = await fetch(`${h.base}/v1/tenants/acme/logs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.admin}`, 'content-type': 'application/json' },
      body: chunks,
      duplex: 'half',
    });
    expect(unsized.status).to.equal(413);
    expectError(
      await h.call('POST', '/v1/tenants/acme/usage', { raw: body, headers: { 'content-type': 'application/json', 'content-encoding': 'br' } }),
      415,
      'unsupported_media_type',
    );
    expectError(
      await h.call('POST', '/v1/tenants/acme/usage', { raw: body, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }),
      400,
      'invalid_request',
    );
    const proto = await h.call('POST', '/v1/tenants/acme/usage', {
      raw: '{"attributes":{"__proto__":["x"]},"startTime":1}',
      headers: { 'content-type': 'application/json' },
    });
    expectError(proto, 400, 'invalid_request');
    expect(field(proto.body, 'error', 'message')).to.contain('must not use the key "__proto__"');
  });

  it('answers 400 naming unknown body fields and query parameters on every route', async () => {
    for (const [method, path, body] of routes) {
      const reply = await h.call(method, `${path}?bogus=1`, body === undefined ? {} : { body });
      expectError(reply, 400, 'invalid_request');
      expect(field(reply.body, 'error', 'message')).to.contain('"bogus"');
      if (body !== undefined) {
        const typo = await h.call(method, path, { body: { ...(body as object), colour: 'red' } });
        expectError(typo, 400, 'invalid_request');
        expect(field(typo.body, 'error', 'message')).to.contain('unknown field "colour"');
      }
    }
  });

  it('serves a valid OpenAPI 3.1 document without auth that lists every route', async () => {
    const reply = await h.call('GET', '/v1/openapi.json', { key: null });
    expect(reply.status).to.equal(200);
    const validator = new Validator();
    const result = await validator.validate(reply.body as Record<string, unknown>);
    expect(result.valid, JSON.stringify(result.errors)).to.equal(true);
    expect(validator.version).to.equal('3.1');
    const router = buildRouter({
      schema: { database: 'x', cluster: undefined },
      runner: createQueryRunner(h.store, 1000, silentLogger),
      now: () => 0n,
      pageMaxBytes: 1_048_576,
      settings: fixedSettings(),
    });
    const registered = router.stack.flatMap((layer) => layer.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${String(layer.path)}`)).sort();
    expect(registered).to.deep.equal(documentedRoutes.map(([m, p]) => `${m} ${p}`).sort());
    const paths = field(reply.body, 'paths') as Record<string, Record<string, unknown>>;
    for (const [method, path] of documentedRoutes) {
      const openApiPath = path.replace(/:([a-z_]+)/g, '{$1}');
      expect(paths[openApiPath]?.[method.toLowerCase()], `${method} ${path}`).to.be.an('object');
    }
    // Request schemas come from the codecs: unknown fields are closed off and every filter is listed.
    const logQuery = field(reply.body, 'components', 'schemas', 'LogQuery') as { additionalProperties: boolean; properties: Record<string, unknown> };
    expect(logQuery.additionalProperties).to.equal(false);
    expect(Object.keys(logQuery.properties)).to.include.members([
      'startTime',
      'endTime',
      'body',
      'traceId',
      'spanId',
      'logId',
      'severity',
      'attributes',
      'includeAttributes',
      'pagination',
    ]);
  });

  it('answers every route in the shape its OpenAPI response schema documents', async () => {
    const doc = (await h.call('GET', '/v1/openapi.json', { key: null })).body as {
      paths: Record<string, Record<string, { responses: Record<string, { content: { 'application/json': { schema: Record<string, unknown> } } }> }>>;
      components: { schemas: Record<string, Record<string, unknown>> };
    };
    const T = 1_795_000_000;
    await insertRows(h.store, 'logs', [logRow({ tenant: 'acme', ns: secondsNs(T), logId: 'l', body: 'b', attrs: { a: 'b' } })]);
    await insertRows(h.store, 'spans', [
      spanRow({ tenant: 'acme', ns: secondsNs(T), traceId: 't', spanId: 's', message: 'm' }),
      spanRow({ tenant: 'acme', ns: secondsNs(T), traceId: 't', spanId: 's2' }),
    ]);
    await insertRows(h.store, 'metrics', [metricRow({ tenant: 'acme', name: 'm', ns: secondsNs(T), value: 1, unit: 'ms' })]);
    const cases: [string, string, string, unknown, number][] = [
      ['GET', '/v1/tenants', '/v1/tenants', undefined, 200],
      ['GET', '/v1/tenants/acme', '/v1/tenants/{id}', undefined, 200],
      ['PUT', '/v1/tenants/acme', '/v1/tenants/{id}', { name: 'n' }, 200],
      ['POST', '/v1/tenants/acme/logs', '/v1/tenants/{tenant_id}/logs', { startTime: T - 1, includeAttributes: true }, 200],
      ['POST', '/v1/tenants/acme/traces', '/v1/tenants/{tenant_id}/traces', { startTime: T - 1, includeAttributes: true }, 200],
      [
        'POST',
        '/v1/tenants/acme/timeseries',
        '/v1/tenants/{tenant_id}/timeseries',
        { startTime: T - 60, endTime: T + 60, interval: 60, queries: { metrics: ['m'] } },
        200,
      ],
      ['POST', '/v1/tenants/acme/usage', '/v1/tenants/{tenant_id}/usage', { startTime: T - 86_400 }, 200],
      ['POST', '/v1/tenants/acme/logs', '/v1/tenants/{tenant_id}/logs', { startTime: 'x' }, 400],
      ['GET', '/v1/tenants/nobody', '/v1/tenants/{id}', undefined, 404],
    ];
    for (const [method, path, documented, body, status] of cases) {
      const reply = await h.call(method, path, body === undefined ? {} : { body });
      expect(reply.status, `${method} ${path}`).to.equal(status);
      const schema = doc.paths[documented]?.[method.toLowerCase()]?.responses[String(status)]?.content['application/json'].schema;
      expect(schema, `${method} ${documented} ${status} documented`).to.be.an('object');
      expect(checkSchema(reply.body, schema ?? {}, doc.components.schemas), `${method} ${path}`).to.deep.equal([]);
      if (status === 200 && 'data' in (reply.body as object)) expect((reply.body as { data: unknown[] }).data.length, path).to.be.above(0);
    }
  });

  it('keeps /healthz, /readyz and /metrics, and counts requests by route and status', async () => {
    expect((await h.call('GET', '/healthz', { key: null })).status).to.equal(200);
    expect((await h.call('GET', '/readyz', { key: null })).status).to.equal(200);
    await h.call('GET', '/v1/tenants/acme', { key: keys.readGlobex });
    const metrics = await h.call('GET', '/metrics', { key: null });
    expect(metrics.text).to.match(/tenantry_api_requests_total\{route="\/v1\/tenants\/:id",method="GET",status="404"\} [1-9]/);
    expect(metrics.text).to.contain('tenantry_api_request_duration_seconds_bucket');
  });

  it('cancels a query that runs past the limit and answers 503 with a clear message', async () => {
    const runner = createQueryRunner(h.store, 1000, silentLogger);
    const started = Date.now();
    const result = await runner.rows(probeStatement('SELECT count() FROM numbers(100000000000) WHERE sipHash64(number) % 7 = 1'));
    expect(Date.now() - started).to.be.below(5000);
    expect(result.ok).to.equal(false);
    if (result.ok) return;
    expect(result.error.code).to.equal('unavailable');
    expect(result.error.message).to.contain('cancelled');
  });

  it('gives every query its time limit and UTC in its own SETTINGS clause, leaving the shared session untouched', async () => {
    const runner = createQueryRunner(h.store, 1500, silentLogger);
    const probe = "SELECT toFloat64(getSetting('max_execution_time')) AS limit, toString(getSetting('timeout_overflow_mode')) AS mode, timezone() AS tz";
    const expected = { ok: true, value: [{ limit: 1.5, mode: 'throw', tz: 'UTC' }] };
    expect(await runner.rows(probeStatement(probe))).to.deep.equal(expected);
    expect(await runner.manyRows(probeStatement(probe))).to.deep.equal(expected);
    // Outside the runner, the same session has no time limit of its own.
    const outside = await (
      await h.store.client.query({ query: "SELECT toFloat64(getSetting('max_execution_time')) AS limit", format: 'JSONEachRow' })
    ).json<{ limit: number }>();
    expect(outside).to.deep.equal([{ limit: 0 }]);
  });
});
