// The acceptance flows both testcontainers suites run against Tenantry's own
// image in front of a real ClickHouse (one server, or a replicated cluster):
// OTLP in over HTTP and gRPC from the official exporters, every /v1 route,
// tenant isolation, durability across restarts, a ClickHouse replica killed
// mid-ingest with nothing acknowledged lost, and `migrate` re-run as a no-op.
// Registers mocha tests; the suite supplies the running stack.
import { ExportResultCode } from '@opentelemetry/core';
import { expect } from 'chai';
import type { Endpoint } from '../integration/gateway/support/otel-clients.ts';
import { makeLogs, makeMetrics, makeSpans, protocols, sendLogs, sendMetrics, sendSpans } from '../integration/gateway/support/otel-clients.ts';
import type { SuiteKeys } from './stack-definitions.ts';

/** What the flows need from a running stack. */
export interface FlowTarget {
  readonly keys: SuiteKeys;
  gatewayHttpUrl(): string;
  gatewayGrpcUrl(): string;
  apiUrl(): string;
  /** Restarts every ClickHouse server and the Tenantry containers (SIGTERM, then start). */
  restartAll(): Promise<void>;
  /** Kills (SIGKILL) one ClickHouse server (a replica of a cluster, or the only server); resolves with its revival. */
  killOneServer(): Promise<() => Promise<void>>;
  /** Runs the migrate Job's container again; resolves with its log. */
  rerunMigrate(): Promise<string>;
}

const hour = 3600;
const window = (): { startTime: number; endTime: number } => ({ startTime: Math.floor(Date.now() / 1000) - hour, endTime: Math.floor(Date.now() / 1000) + 60 });

/** A JSON request to the API. */
export async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string; json: unknown }> {
  const init: RequestInit = { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const reply = await fetch(`${base}${path}`, init);
  const text = await reply.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: reply.status, text, json };
}

const dataOf = (json: unknown): Array<Record<string, unknown>> => ((json as { data?: unknown } | undefined)?.data ?? []) as Array<Record<string, unknown>>;

/** Every span of `tenant` whose name matches `pattern`, all pages. */
async function spanNames(base: string, key: string, tenant: string, pattern: string): Promise<string[]> {
  const names: string[] = [];
  let page: string | null | undefined;
  do {
    const reply = await api(base, key, 'POST', `/v1/tenants/${tenant}/traces`, {
      ...window(),
      spanName: pattern,
      pagination: { limit: 500, ...(page == null ? {} : { page }) },
    });
    expect(reply.status, reply.text).to.equal(200);
    names.push(...dataOf(reply.json).map((s) => String(s['spanName'])));
    page = (reply.json as { nextPage?: string | null }).nextPage;
  } while (page != null);
  return names;
}

/**
 * Polls `check` until it holds or `timeoutMs` passes. A bounded poll, not an
 * event: rows become queryable after the gateway's INSERT (within
 * TENANTRY_BATCH_MAX_DELAY_MS) inside another container, which sends nothing.
 */
async function eventually(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Registers the flows; `target()` is read when they run (after the suite's before hook). */
export function acceptanceFlows(target: () => FlowTarget): void {
  const ingest = (t: FlowTarget): Endpoint => ({ httpUrl: t.gatewayHttpUrl(), grpcUrl: t.gatewayGrpcUrl(), key: t.keys.ingest });

  it('accepts OTLP traces, logs and metrics over http/protobuf, http/json and gRPC from the official exporters', async () => {
    const t = target();
    for (const protocol of protocols) {
      const spans = await sendSpans(protocol, ingest(t), makeSpans({ 'tenant.id': 'tenant-a', 'service.name': `svc-${protocol}` }));
      expect(spans.code, `${protocol} spans: ${String(spans.error)}`).to.equal(ExportResultCode.SUCCESS);
      const logs = await sendLogs(
        protocol,
        ingest(t),
        makeLogs({ 'tenant.id': 'tenant-b', 'service.name': `svc-${protocol}` }, [{ body: `secret of b via ${protocol}` }]),
      );
      expect(logs.code, `${protocol} logs`).to.equal(ExportResultCode.SUCCESS);
      const metrics = await sendMetrics(protocol, ingest(t), await makeMetrics({ 'tenant.id': 'tenant-a', 'service.name': `svc-${protocol}` }));
      expect(metrics.code, `${protocol} metrics`).to.equal(ExportResultCode.SUCCESS);
    }
    await eventually(
      async () => (await spanNames(t.apiUrl(), t.keys.readA, 'tenant-a', '%')).length >= 2 * protocols.length,
      60_000,
      "tenant-a's spans queryable",
    );
    await eventually(
      async () => dataOf((await api(t.apiUrl(), t.keys.readB, 'POST', '/v1/tenants/tenant-b/logs', window())).json).length >= protocols.length,
      60_000,
      "tenant-b's logs queryable",
    );
  });

  it('answers every /v1 route', async () => {
    const t = target();
    const base = t.apiUrl();
    const tenants = await api(base, t.keys.admin, 'GET', '/v1/tenants');
    expect(tenants.status).to.equal(200);
    expect(dataOf(tenants.json).map((x) => x['id'])).to.include.members(['tenant-a', 'tenant-b']);
    expect((await api(base, t.keys.admin, 'PUT', '/v1/tenants/tenant-a', { name: 'Tenant A' })).status).to.equal(200);
    expect((await api(base, t.keys.admin, 'GET', '/v1/tenants/tenant-a')).json).to.include({ id: 'tenant-a', name: 'Tenant A' });
    expect((await api(base, t.keys.admin, 'GET', '/v1/openapi.json')).status).to.equal(200);
    expect((await api(base, t.keys.admin, 'GET', '/v1/settings/tenant-defaults')).status).to.equal(200);
    const traces = await api(base, t.keys.readA, 'POST', '/v1/tenants/tenant-a/traces', { ...window(), includeAttributes: true });
    expect(dataOf(traces.json).length).to.be.greaterThan(0);
    const logs = await api(base, t.keys.readB, 'POST', '/v1/tenants/tenant-b/logs', { ...window(), body: '%secret%' });
    expect(dataOf(logs.json).length).to.equal(protocols.length);
    const series = await api(base, t.keys.readA, 'POST', '/v1/tenants/tenant-a/timeseries', {
      ...window(),
      interval: 60,
      queries: [{ metrics: ['requests'], operator: 'sum' }],
    });
    expect(series.status, series.text).to.equal(200);
    const usage = await api(base, t.keys.readA, 'POST', '/v1/tenants/tenant-a/usage', { ...window(), interval: 'day' });
    expect(usage.status, usage.text).to.equal(200);
  });

  it("keeps tenants apart: A's read key asking for B gets 404 and no byte of B", async () => {
    const t = target();
    const base = t.apiUrl();
    const bodies: Record<string, unknown> = {
      logs: window(),
      traces: window(),
      usage: { ...window(), interval: 'day' },
      timeseries: { ...window(), interval: 60, queries: [{ metrics: ['requests'], operator: 'sum' }] },
    };
    for (const [route, body] of Object.entries(bodies)) {
      const reply = await api(base, t.keys.readA, 'POST', `/v1/tenants/tenant-b/${route}`, body);
      expect(reply.status, route).to.equal(404);
      expect(reply.text).to.not.contain('secret of b');
    }
    expect((await api(base, t.keys.readA, 'GET', '/v1/tenants/tenant-b')).status).to.equal(404);
  });

  it('keeps every acknowledged item across a restart of ClickHouse and Tenantry', async () => {
    const t = target();
    const before = (await spanNames(t.apiUrl(), t.keys.readA, 'tenant-a', '%')).length;
    await t.restartAll();
    await eventually(
      async () => (await spanNames(t.apiUrl(), t.keys.readA, 'tenant-a', '%').catch(() => [])).length === before,
      120_000,
      `${before} spans after the restart`,
    );
  });

  it('loses nothing acknowledged when a ClickHouse server (a replica) is killed mid-ingest', async () => {
    const t = target();
    const acknowledged: string[] = [];
    let revive: (() => Promise<void>) | undefined;
    for (let i = 0; i < 60; i++) {
      if (i === 20) revive = await t.killOneServer();
      const name = `ack-${i}`;
      const spans = makeSpans({ 'tenant.id': 'tenant-a', 'service.name': 'killed-replica' }).map((s) => Object.assign(s, { name }));
      const result = await sendSpans('http/protobuf', ingest(t), spans);
      if (result.code === ExportResultCode.SUCCESS) acknowledged.push(name);
    }
    // The gateway acknowledges at its write-ahead log, so it keeps accepting while a server is down.
    expect(acknowledged.length, 'requests acknowledged while a server was down').to.be.greaterThan(40);
    await revive?.();
    await eventually(
      async () => {
        const stored = new Set(await spanNames(t.apiUrl(), t.keys.readA, 'tenant-a', 'ack-%'));
        return acknowledged.every((n) => stored.has(n));
      },
      180_000,
      'every acknowledged span stored',
    );
  });

  it('re-runs migrate as a no-op', async () => {
    const log = await target().rerunMigrate();
    expect(log).to.contain('schema is current').and.contain('"applied":[]');
    expect(log).to.not.contain('schema migration applied');
  });
}
