// An in-process gateway on its own fresh database of the test process's
// embedded ClickHouse and its own write-ahead-log folder, with a fixed set
// of keys, for integration tests. Acknowledged rows reach ClickHouse a
// moment later (the write-ahead log), so select() first waits until every
// row the store's gateway acknowledged is inserted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { parseKeys } from '../../../../src/auth/api-keys.ts';
import type { Store } from '../../../../src/clickhouse/store.ts';
import type { GatewayConfig, WriterConfig } from '../../../../src/config/config.ts';
import type { ListenerLimits } from '../../../../src/ops/listener-limits.ts';
import { Readiness } from '../../../../src/ops/readiness.ts';
import { startGatewayWith } from '../../../../gateway/gateway.ts';
import type { TenantSettingsView } from '../../../../src/tenant/settings/tenant-settings.ts';
import { clickHouseRowSink } from '../../../../gateway/writer/clickhouse-row-sink.ts';
import type { RowSink } from '../../../../gateway/writer/row-sink.ts';
import { migratedStore } from '../../../support/embedded-store.ts';
import { testProcessContext } from '../../../support/process-context.ts';
import { gatewayConfig } from '../../../../support/default-config.ts';

export const keys = {
  admin: 'admin-key-0123456789abcdef',
  tenantA: 'tenant-a-key-0123456789',
  readOnly: 'read-only-key-0123456789',
} as const;

const keyText = JSON.stringify([
  { key: keys.admin, scopes: ['ingest', 'read', 'admin'], tenants: ['*'] },
  { key: keys.tenantA, scopes: ['ingest'], tenants: ['tenant-a'] },
  { key: keys.readOnly, scopes: ['read'], tenants: ['*'] },
]);

export interface TestGateway {
  readonly store: Store;
  readonly registry: Registry;
  readonly readiness: Readiness;
  /** The write-ahead log's folder. */
  readonly logDir: string;
  /** Resolves once every acknowledged row is in ClickHouse. */
  flush(): Promise<void>;
  readonly httpUrl: string;
  readonly grpcUrl: string;
  /** Stops the gateway (flushing) but keeps the database. */
  stop(): Promise<void>;
  /** Stops and drops the database. */
  close(): Promise<void>;
}

export interface HarnessOptions {
  readonly maxRequestBytes?: number;
  readonly writer?: Partial<WriterConfig>;
  /** Wraps the real ClickHouse sink, e.g. to make it fail. */
  readonly sink?: (real: RowSink) => RowSink;
  readonly store?: Store;
  /** Every tenant's effective settings (ingest limits, retention); the process defaults when absent. */
  readonly settings?: TenantSettingsView;
  /** Connection cap, timeouts and the /metrics key of the OTLP listeners; the defaults when absent. */
  readonly listener?: ListenerLimits;
  /** TENANTRY_METRICS_TENANT_LABELS; off when absent. */
  readonly metricsTenantLabels?: boolean;
}

/** The flush of the gateway writing into each store, so select() sees what was acknowledged. */
const flushers = new WeakMap<Store, () => Promise<void>>();

export async function startTestGateway(prefix: string, options: HarnessOptions = {}): Promise<TestGateway> {
  const store = options.store ?? (await migratedStore(prefix));
  const parsed = parseKeys(keyText, 'test keys');
  if (!parsed.ok) throw new Error(parsed.error);
  const registry = new Registry();
  const readiness = new Readiness([]);
  const logDir = options.writer?.logDir ?? mkdtempSync(join(tmpdir(), 'tenantry-wal-'));
  const config: GatewayConfig = gatewayConfig({
    maxRequestBytes: options.maxRequestBytes ?? 4 * 1024 * 1024,
    writer: { maxBatchRows: 50_000, maxBatchBytes: 16 * 1024 * 1024, maxBatchDelayMs: 5, maxLogBytes: 64 * 1024 * 1024, ...options.writer, logDir },
    ...(options.listener === undefined ? {} : { listener: options.listener }),
    ...(options.metricsTenantLabels === undefined ? {} : { metricsTenantLabels: options.metricsTenantLabels }),
  });
  const real = clickHouseRowSink(store);
  const proc = await testProcessContext(store, {
    keys: parsed.value,
    readiness,
    registry,
    ...(options.settings === undefined ? {} : { settings: options.settings }),
  });
  const gateway = await startGatewayWith(proc.ctx, config, options.sink?.(real) ?? real);
  flushers.set(store, () => gateway.flush());
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= gateway.stop().then(() => {
      proc.stop();
    }));
  return {
    store,
    registry,
    readiness,
    logDir,
    flush: () => gateway.flush(),
    httpUrl: `http://127.0.0.1:${gateway.ports['otlpHttp'] ?? 0}`,
    grpcUrl: `http://127.0.0.1:${gateway.ports['otlpGrpc'] ?? 0}`,
    stop,
    close: async () => {
      await stop();
      await store.close();
      if (options.writer?.logDir === undefined) rmSync(logDir, { recursive: true, force: true });
    },
  };
}

/** Runs a SELECT and returns its rows (use toString() for 64-bit values). */
export async function select<T>(store: Store, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  await flushers.get(store)?.();
  const rs = await store.client.query({ query, format: 'JSONEachRow', query_params: params });
  return rs.json<T>();
}
