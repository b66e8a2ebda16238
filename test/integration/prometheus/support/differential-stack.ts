// The two systems an engine differential compares, fed the same bytes: a
// fresh Prometheus 3.16 that only receives remote write (no scraping; its
// TSDB in a temp dir, on 127.0.0.1) and a Tenantry `all` process whose key
// may read and write two tenants (the remote-written one and its OTLP twin).
// The synthetic series are pushed to both in time slices, as protobuf +
// snappy remote write 1.0 with stale markers written bit-exactly; then the
// caller polls until both count the same samples.
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeWriteRequest, remoteWriteHeaders, snappyBlock, withStaleMarkers } from '../../../../support/remote-write-request.ts';
import type { SeriesSpec } from '../../../../support/remote-write-request.ts';
import { freePort, spawnReady } from '../../../../support/server-process.ts';
import { startTenantry, testEnvironment } from '../../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../../support/tenantry-process.ts';
import { promQuery } from './promql-client.ts';
import type { PromAnswer, PromEndpoint, PromEvaluation } from './promql-client.ts';
import { staleSentinel, timeSlices } from './synthetic-series.ts';

/** A running reference Prometheus. */
export interface ReferencePrometheus {
  readonly url: string;
  tail(): string;
  stop(): Promise<void>;
}

/** Starts Prometheus 3.16 as a remote-write receiver only; resolves once /-/ready answers 200. */
export async function startReferencePrometheus(binary: string, dir: string): Promise<ReferencePrometheus> {
  const port = await freePort();
  const configFile = join(dir, 'prometheus.yml');
  // No scrape configs: every sample arrives by remote write. The out-of-order
  // window only guards against a slice arriving late; slices are sent in order.
  writeFileSync(configFile, JSON.stringify({ global: { evaluation_interval: '1m' }, storage: { tsdb: { out_of_order_time_window: '2h' } } }, null, 2));
  const url = `http://127.0.0.1:${port}`;
  const { tail, stop } = await spawnReady(
    'prometheus',
    binary,
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, 'tsdb')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.enable-remote-write-receiver',
      '--log.level=warn',
    ],
    dir,
    `${url}/-/ready`,
    60_000,
  );
  return { url, tail, stop };
}

/** A running Tenantry and how to reach its tenants. */
export interface TenantryStack {
  readonly process: TenantryProcess;
  /** Base URL of remote write (`…/api/v1/push`'s origin) and of OTLP/HTTP: the gateway's port. */
  readonly ingestUrl: string;
  /** The /prometheus API as one tenant. */
  endpoint(tenant: string): PromEndpoint;
  /** Headers for a push as one tenant. */
  pushHeaders(tenant: string): Record<string, string>;
  /** Bearer authorisation for OTLP (the tenant comes from the resource's tenant.id). */
  readonly bearer: string;
}

/** Starts Tenantry `all` with one key that may ingest and read every tenant named. */
export async function startTenantryStack(dir: string, tenants: readonly string[]): Promise<TenantryStack> {
  const key = 'engine-diff-key-0123456789abcdef0123';
  const process = startTenantry(
    ['all'],
    testEnvironment(join(dir, 'tenantry'), {
      TENANTRY_API_KEYS: JSON.stringify([{ key, scopes: ['ingest', 'read'], tenants }]),
    }),
  );
  const ports = await process.started(180_000);
  const basic = `Basic ${Buffer.from(`grafana:${key}`).toString('base64')}`;
  return {
    process,
    ingestUrl: `http://127.0.0.1:${ports['otlpHttp'] ?? 0}`,
    endpoint: (tenant) => ({ url: `http://127.0.0.1:${ports['api'] ?? 0}/prometheus`, headers: { authorization: basic, 'x-scope-orgid': tenant } }),
    pushHeaders: (tenant) => remoteWriteHeaders({ authorization: basic, 'x-scope-orgid': tenant }),
    bearer: `Bearer ${key}`,
  };
}

/** Labels sorted by name, as Prometheus sends them (its receiver reads them as given). */
function sortedLabels(series: readonly SeriesSpec[]): SeriesSpec[] {
  return series.map((s) => ({ ...s, labels: Object.fromEntries(Object.entries(s.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) }));
}

/** One remote write POST; throws with the answer when it is not 2xx. */
async function post(url: string, body: Buffer, headers: Record<string, string>): Promise<void> {
  const res = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(60_000) });
  const text = await res.text();
  if (res.status < 200 || res.status > 299) throw new Error(`POST ${url}: ${res.status} ${text.slice(0, 500)}`);
}

/** Pushes the series to Prometheus and to Tenantry (as `tenant`) in 5-minute slices, oldest first. */
export async function pushToBoth(
  series: readonly SeriesSpec[],
  span: { startMs: number; endMs: number },
  prometheus: ReferencePrometheus,
  tenantry: TenantryStack,
  tenant: string,
): Promise<number> {
  let requests = 0;
  for (const slice of timeSlices(sortedLabels(series), span.startMs, span.endMs, 5 * 60_000)) {
    const body = snappyBlock(withStaleMarkers(encodeWriteRequest(slice), staleSentinel));
    await Promise.all([
      post(`${prometheus.url}/api/v1/write`, body, remoteWriteHeaders()),
      post(`${tenantry.ingestUrl}/api/v1/push`, body, tenantry.pushHeaders(tenant)),
    ]);
    requests += 1;
  }
  return requests;
}

/** Bounded poll for a condition neither process reports an event for; returns whether it held in time. */
export async function until(what: () => Promise<boolean>, timeoutMs: number, everyMs = 500): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await what()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** A query's answer as text for equality (a count's value), or its error. */
export async function answerText(endpoint: PromEndpoint, query: string, at: PromEvaluation): Promise<string> {
  const a: PromAnswer = await promQuery(endpoint, query, at);
  return a.status === 'success' ? JSON.stringify(a.result) : `${a.httpStatus} ${a.errorType ?? ''} ${a.error ?? ''}`;
}

/** Prometheus and Tenantry started side by side in one temp dir. */
export interface DifferentialStack {
  readonly prometheus: ReferencePrometheus;
  readonly tenantry: TenantryStack;
  /** The reference's API (no auth). */
  readonly reference: PromEndpoint;
  stop(): Promise<void>;
}

/** Starts both systems at once in a new temp dir (removed by stop). */
export async function startDifferentialStack(binary: string, prefix: string, tenants: readonly string[]): Promise<DifferentialStack> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const started = await Promise.allSettled([startReferencePrometheus(binary, dir), startTenantryStack(dir, tenants)]);
  const [p, t] = started;
  const stopAll = async (): Promise<void> => {
    await Promise.all([p.status === 'fulfilled' ? p.value.stop() : undefined, t.status === 'fulfilled' ? t.value.process.stop() : undefined]);
    await rm(dir, { recursive: true, force: true });
  };
  if (p.status === 'rejected' || t.status === 'rejected') {
    await stopAll();
    throw p.status === 'rejected' ? (p.reason as Error) : ((t as PromiseRejectedResult).reason as Error);
  }
  return { prometheus: p.value, tenantry: t.value, reference: { url: p.value.url, headers: {} }, stop: stopAll };
}

/** Polls until both endpoints answer `query` at `at` with the same text (the data has landed on both); returns both last answers. */
export async function waitForSameAnswer(
  reference: PromEndpoint,
  target: PromEndpoint,
  query: string,
  at: PromEvaluation,
  timeoutMs: number,
): Promise<{ same: boolean; reference: string; target: string }> {
  let last = { same: false, reference: '', target: '' };
  await until(async () => {
    const [r, t] = await Promise.all([answerText(reference, query, at), answerText(target, query, at)]);
    last = { same: r === t && r !== '[]', reference: r, target: t };
    return last.same;
  }, timeoutMs);
  return last;
}
