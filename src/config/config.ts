// Decodes the settings of one target into a typed Config, once, at start-up.
// Failures are returned as values: a list of sentences naming each bad
// variable and its value, which the CLI prints before exiting.
import { join, resolve } from 'node:path';
import { isLeft } from 'fp-ts/lib/Either.js';
import type { ListenerLimits } from '../ops/listener-limits.ts';
import { fail, ok } from '../result.ts';
import type { Result } from '../result.ts';
import { boundViolation, limitBounds } from '../tenant/settings/tenant-settings.ts';
import type { LimitField, SettingsDefaults } from '../tenant/settings/tenant-settings.ts';
import type { LogLevel, WalSync } from './codecs.ts';
import type { Settings } from './environment.ts';
import { detectedMemoryBytes } from './memory-limit.ts';
import {
  allVariables,
  apiVariables,
  commonVariables,
  gatewayVariables,
  keyVariables,
  listenerVariables,
  operatorVariables,
  storageVariables,
  tenantSettingsVariables,
} from './variables.ts';
import type { Variable } from './variables.ts';

export const targets = ['all', 'gateway', 'api', 'migrate', 'operator', 'drain'] as const;
export type TargetName = (typeof targets)[number];

export type ClickHouseConfig =
  | { readonly kind: 'embedded'; readonly dataDir: string; readonly database: string }
  | {
      readonly kind: 'server';
      readonly url: string;
      readonly user: string;
      readonly password: string;
      readonly database: string;
      readonly cluster: string | undefined;
    };

export interface RetentionConfig {
  readonly logsDays: number;
  readonly tracesDays: number;
  readonly metricsDays: number;
}

export interface StorageConfig {
  readonly clickhouse: ClickHouseConfig;
  readonly retention: RetentionConfig;
  readonly dataDir: string;
}

export interface KeysConfig {
  readonly json: string | undefined;
  readonly file: string | undefined;
}

export interface WriterConfig {
  /** A write-ahead-log segment is cut into one INSERT at this many rows or bytes, or this long after its first rows. */
  readonly maxBatchRows: number;
  readonly maxBatchBytes: number;
  readonly maxBatchDelayMs: number;
  /** Bytes the log may hold before requests get 429. */
  readonly maxLogBytes: number;
  readonly logDir: string;
  /** When appends are acknowledged: after write() (default) or after fdatasync too. */
  readonly logSync?: WalSync;
}

/** Per-item limits the gateway enforces before acknowledging (docs/gateway.md, "Limits"). */
export interface ItemLimitsConfig {
  readonly maxAttributes: number;
  readonly maxAttributeKeyBytes: number;
  readonly maxAttributeValueBytes: number;
  readonly maxLogBodyBytes: number;
  readonly maxSpanNameBytes: number;
  readonly maxSpanEvents: number;
  readonly maxSpanLinks: number;
  readonly maxValueDepth: number;
  readonly maxFutureSkewMs: number;
  readonly maxRequestExpansion: number;
  /** Items older than their signal's retention are rejected. */
  readonly retention: RetentionConfig;
}

export interface GatewayConfig {
  readonly otlpHttpPort: number;
  readonly otlpGrpcPort: number;
  readonly maxRequestBytes: number;
  readonly writer: WriterConfig;
  /** Per-item limits (TENANTRY_MAX_ATTRIBUTES and the rest). */
  readonly items: ItemLimitsConfig;
  /** Connection cap and timeouts of both OTLP listeners, and the /metrics key. */
  readonly listener: ListenerLimits;
  /** OTLP request bytes in flight per process (TENANTRY_MAX_INFLIGHT_BYTES). */
  readonly maxInflightBytes: number;
  /** Per-tenant metrics under the tenant's id (TENANTRY_METRICS_TENANT_LABELS); false: under tenant="__all__". */
  readonly metricsTenantLabels: boolean;
}

export interface ApiConfig {
  readonly port: number;
  readonly queryTimeoutMs: number;
  readonly pageMaxBytes: number;
  /** Connection cap and timeouts of the API listener, and the /metrics key. */
  readonly listener: ListenerLimits;
}

/** Limits on the API's queries, applied by the process's store gate (src/clickhouse/store-gate.ts). */
export interface QueryLimitsConfig {
  /** Queries in flight per API key. */
  readonly maxConcurrentQueries: number;
  /** Embedded ClickHouse only: longest a query's statement may run once it has its turn. */
  readonly embeddedTimeoutMs: number;
  /** Memory the process is given (TENANTRY_MEMORY_LIMIT_BYTES, else detected): the per-statement bounds derive from it (src/target/statement-limits.ts). */
  readonly memoryLimitBytes: number;
}

/** Per-tenant settings: the process defaults and how often stored settings are re-read (src/tenant/settings/). */
export interface TenantSettingsConfig {
  readonly defaults: SettingsDefaults;
  readonly refreshMs: number;
}

export interface OperatorConfig {
  readonly port: number;
  /** Undefined: in-cluster service account. */
  readonly kubeconfig: string | undefined;
  /** Empty: all namespaces. */
  readonly namespaces: readonly string[];
  readonly leaderElection: { readonly enabled: boolean; readonly namespace: string };
}

interface Common {
  readonly logLevel: LogLevel;
  readonly host: string;
}

export type Config =
  | (Common & {
      readonly target: 'all';
      readonly storage: StorageConfig;
      readonly keys: KeysConfig;
      readonly gateway: GatewayConfig;
      readonly api: ApiConfig;
      readonly queries: QueryLimitsConfig;
      readonly settings: TenantSettingsConfig;
    })
  | (Common & {
      readonly target: 'gateway';
      readonly storage: StorageConfig;
      readonly keys: KeysConfig;
      readonly gateway: GatewayConfig;
      readonly settings: TenantSettingsConfig;
    })
  | (Common & {
      readonly target: 'api';
      readonly storage: StorageConfig;
      readonly keys: KeysConfig;
      readonly api: ApiConfig;
      readonly queries: QueryLimitsConfig;
      readonly settings: TenantSettingsConfig;
    })
  | (Common & { readonly target: 'migrate'; readonly storage: StorageConfig })
  | (Common & { readonly target: 'operator'; readonly operator: OperatorConfig })
  /** Inserts a write-ahead log another gateway left (TENANTRY_WAL_DIR) into ClickHouse, then exits: the operator's drain Job (ADR 7). */
  | (Common & { readonly target: 'drain'; readonly storage: StorageConfig; readonly writer: WriterConfig });

/** Decodes a group of variables; every failure becomes one sentence. */
class Decoder {
  readonly errors: string[] = [];
  readonly #settings: Settings;

  constructor(settings: Settings) {
    this.#settings = settings;
  }

  value<V extends Record<string, Variable>>(group: V, name: keyof V & string): unknown {
    const spec = group[name];
    if (spec === undefined) throw new Error(`bug: unknown variable ${name}`);
    const raw = this.#settings[name];
    const given = raw !== undefined && raw !== '';
    const input = given ? raw : spec.default;
    if (input === undefined) return undefined;
    const decoded = spec.codec.decode(input);
    if (isLeft(decoded)) {
      const error = `${name}=${JSON.stringify(input)} is invalid: expected ${spec.codec.name}${given ? '' : ' (this is the default)'}`;
      // A variable several components read (the listener limits) is reported once.
      if (!this.errors.includes(error)) this.errors.push(error);
      return undefined;
    }
    return decoded.right;
  }
}

// The codecs guarantee these shapes; the casts only restore what the table erased.
const str = (v: unknown): string => v as string;
const num = (v: unknown): number => v as number;
const optStr = (v: unknown): string | undefined => v as string | undefined;

function common(d: Decoder): Common {
  return { logLevel: d.value(commonVariables, 'TENANTRY_LOG_LEVEL') as LogLevel, host: str(d.value(commonVariables, 'TENANTRY_HOST')) };
}

function storage(d: Decoder): StorageConfig {
  const v = (name: keyof typeof storageVariables): unknown => d.value(storageVariables, name);
  const dataDir = str(v('TENANTRY_DATA_DIR'));
  const url = optStr(v('TENANTRY_CLICKHOUSE_URL'));
  const database = str(v('TENANTRY_CLICKHOUSE_DATABASE'));
  const cluster = optStr(v('TENANTRY_CLICKHOUSE_CLUSTER'));
  if (url === undefined && cluster !== undefined)
    d.errors.push('TENANTRY_CLICKHOUSE_CLUSTER is set but TENANTRY_CLICKHOUSE_URL is not: a cluster needs ClickHouse server mode');
  const clickhouse: ClickHouseConfig =
    url === undefined
      ? { kind: 'embedded', dataDir, database }
      : { kind: 'server', url, user: str(v('TENANTRY_CLICKHOUSE_USER')), password: str(v('TENANTRY_CLICKHOUSE_PASSWORD')), database, cluster };
  return {
    clickhouse,
    dataDir,
    retention: {
      logsDays: num(v('TENANTRY_LOGS_RETENTION_DAYS')),
      tracesDays: num(v('TENANTRY_TRACES_RETENTION_DAYS')),
      metricsDays: num(v('TENANTRY_METRICS_RETENTION_DAYS')),
    },
  };
}

/** libchdb binds one data directory per process, so split targets need a server. */
function serverStorage(target: TargetName, d: Decoder): StorageConfig {
  const s = storage(d);
  if (s.clickhouse.kind === 'embedded')
    d.errors.push(`target "${target}" needs TENANTRY_CLICKHOUSE_URL: embedded ClickHouse runs only in target "all" (and "migrate")`);
  return s;
}

function keys(d: Decoder): KeysConfig {
  const json = optStr(d.value(keyVariables, 'TENANTRY_API_KEYS'));
  const file = optStr(d.value(keyVariables, 'TENANTRY_API_KEYS_FILE'));
  if (json !== undefined && file !== undefined) d.errors.push('TENANTRY_API_KEYS and TENANTRY_API_KEYS_FILE are both set: choose one');
  return { json, file };
}

/** The log's folder, absolute; the data dir is undefined only when it failed to decode (an error already). */
function walDir(configured: string | undefined, dataDir: string | undefined): string {
  return resolve(configured ?? join(dataDir ?? '.', 'wal'));
}

function gateway(d: Decoder, dataDir: string, retention: RetentionConfig): GatewayConfig {
  const v = (name: Exclude<keyof typeof gatewayVariables, 'TENANTRY_WAL_DIR' | 'TENANTRY_WAL_SYNC' | 'TENANTRY_METRICS_TENANT_LABELS'>): number =>
    num(d.value(gatewayVariables, name));
  return {
    otlpHttpPort: v('TENANTRY_OTLP_HTTP_PORT'),
    otlpGrpcPort: v('TENANTRY_OTLP_GRPC_PORT'),
    maxRequestBytes: v('TENANTRY_MAX_REQUEST_BYTES'),
    writer: {
      maxBatchRows: v('TENANTRY_BATCH_MAX_ROWS'),
      maxBatchBytes: v('TENANTRY_BATCH_MAX_BYTES'),
      maxBatchDelayMs: v('TENANTRY_BATCH_MAX_DELAY_MS'),
      maxLogBytes: v('TENANTRY_WAL_MAX_BYTES'),
      logDir: walDir(optStr(d.value(gatewayVariables, 'TENANTRY_WAL_DIR')), optStr(dataDir)),
      logSync: d.value(gatewayVariables, 'TENANTRY_WAL_SYNC') as WalSync,
    },
    items: {
      maxAttributes: v('TENANTRY_MAX_ATTRIBUTES'),
      maxAttributeKeyBytes: v('TENANTRY_MAX_ATTRIBUTE_KEY_BYTES'),
      maxAttributeValueBytes: v('TENANTRY_MAX_ATTRIBUTE_VALUE_BYTES'),
      maxLogBodyBytes: v('TENANTRY_MAX_LOG_BODY_BYTES'),
      maxSpanNameBytes: v('TENANTRY_MAX_SPAN_NAME_BYTES'),
      maxSpanEvents: v('TENANTRY_MAX_SPAN_EVENTS'),
      maxSpanLinks: v('TENANTRY_MAX_SPAN_LINKS'),
      maxValueDepth: v('TENANTRY_MAX_VALUE_DEPTH'),
      maxFutureSkewMs: v('TENANTRY_MAX_FUTURE_SKEW_SECONDS') * 1000,
      maxRequestExpansion: v('TENANTRY_MAX_REQUEST_EXPANSION'),
      retention,
    },
    listener: listener(d),
    maxInflightBytes: v('TENANTRY_MAX_INFLIGHT_BYTES'),
    metricsTenantLabels: d.value(gatewayVariables, 'TENANTRY_METRICS_TENANT_LABELS') as boolean,
  };
}

function listener(d: Decoder): ListenerLimits {
  const v = (name: keyof typeof listenerVariables): unknown => d.value(listenerVariables, name);
  const metricsKey = optStr(v('TENANTRY_METRICS_KEY'));
  return {
    maxConnections: v('TENANTRY_MAX_CONNECTIONS') as number | undefined,
    headersTimeoutMs: num(v('TENANTRY_HEADERS_TIMEOUT_MS')),
    bodyTimeoutMs: num(v('TENANTRY_BODY_TIMEOUT_MS')),
    ...(metricsKey === undefined ? {} : { metricsKey }),
  };
}

function api(d: Decoder): ApiConfig {
  return {
    port: num(d.value(apiVariables, 'TENANTRY_API_PORT')),
    queryTimeoutMs: num(d.value(apiVariables, 'TENANTRY_QUERY_TIMEOUT_SECONDS')) * 1000,
    pageMaxBytes: num(d.value(apiVariables, 'TENANTRY_API_PAGE_MAX_BYTES')),
    listener: listener(d),
  };
}

function queries(d: Decoder): QueryLimitsConfig {
  return {
    maxConcurrentQueries: num(d.value(apiVariables, 'TENANTRY_MAX_CONCURRENT_QUERIES')),
    embeddedTimeoutMs: num(d.value(apiVariables, 'TENANTRY_EMBEDDED_QUERY_TIMEOUT_SECONDS')) * 1000,
    memoryLimitBytes: (d.value(apiVariables, 'TENANTRY_MEMORY_LIMIT_BYTES') as number | undefined) ?? detectedMemoryBytes(),
  };
}

const limitVariables: Readonly<Record<LimitField, keyof typeof tenantSettingsVariables>> = {
  ingestBytesPerSecond: 'TENANTRY_TENANT_INGEST_BYTES_PER_SECOND',
  ingestBurstBytes: 'TENANTRY_TENANT_INGEST_BURST_BYTES',
  maxConcurrentQueries: 'TENANTRY_TENANT_MAX_CONCURRENT_QUERIES',
  maxQueryDays: 'TENANTRY_TENANT_MAX_QUERY_DAYS',
  queryTimeoutSeconds: 'TENANTRY_TENANT_QUERY_TIMEOUT_SECONDS',
};

function tenantSettings(d: Decoder, retention: RetentionConfig): TenantSettingsConfig {
  const limit = (field: LimitField): number => {
    const name = limitVariables[field];
    const value = d.value(tenantSettingsVariables, name) as number | undefined;
    const violation = value === undefined ? undefined : boundViolation(limitBounds[field], value);
    if (violation !== undefined) d.errors.push(`${name}=${String(value)} is invalid: it ${violation}`);
    return num(value);
  };
  return {
    defaults: {
      limits: {
        ingestBytesPerSecond: limit('ingestBytesPerSecond'),
        ingestBurstBytes: limit('ingestBurstBytes'),
        maxConcurrentQueries: limit('maxConcurrentQueries'),
        maxQueryDays: limit('maxQueryDays'),
        queryTimeoutSeconds: limit('queryTimeoutSeconds'),
      },
      retention,
    },
    refreshMs: num(d.value(tenantSettingsVariables, 'TENANTRY_SETTINGS_REFRESH_SECONDS')) * 1000,
  };
}

function operator(d: Decoder): OperatorConfig {
  const v = (name: keyof typeof operatorVariables): unknown => d.value(operatorVariables, name);
  return {
    port: num(v('TENANTRY_OPERATOR_PORT')),
    kubeconfig: optStr(v('TENANTRY_KUBECONFIG')),
    namespaces: (v('TENANTRY_WATCH_NAMESPACES') as string[] | undefined) ?? [],
    leaderElection: { enabled: v('TENANTRY_LEADER_ELECTION') as boolean, namespace: str(v('TENANTRY_LEADER_ELECTION_NAMESPACE')) },
  };
}

function decodeTarget(target: TargetName, d: Decoder): Config {
  const c = common(d);
  switch (target) {
    case 'all': {
      const s = storage(d);
      return {
        ...c,
        target,
        storage: s,
        keys: keys(d),
        gateway: gateway(d, s.dataDir, s.retention),
        api: api(d),
        queries: queries(d),
        settings: tenantSettings(d, s.retention),
      };
    }
    case 'gateway': {
      const s = serverStorage(target, d);
      return { ...c, target, storage: s, keys: keys(d), gateway: gateway(d, s.dataDir, s.retention), settings: tenantSettings(d, s.retention) };
    }
    case 'api': {
      const s = serverStorage(target, d);
      return { ...c, target, storage: s, keys: keys(d), api: api(d), queries: queries(d), settings: tenantSettings(d, s.retention) };
    }
    case 'migrate':
      return { ...c, target, storage: storage(d) };
    case 'operator':
      return { ...c, target, operator: operator(d) };
    case 'drain': {
      // Configured as the gateway whose log it drains: the same variables decode to the same writer.
      const s = serverStorage(target, d);
      return { ...c, target, storage: s, writer: gateway(d, s.dataDir, s.retention).writer };
    }
  }
}

/** Decodes the settings for a target; unknown TENANTRY_* names are errors (they are typos). */
export function decodeConfig(target: string, settings: Settings): Result<Config, readonly string[]> {
  if (!(targets as readonly string[]).includes(target)) {
    return fail([`unknown target ${JSON.stringify(target)}: expected one of ${targets.join(', ')}`]);
  }
  const d = new Decoder(settings);
  // TENANTRY_TEST_* belong to the test command (README "Development"): a shell that exports one still starts Tenantry.
  const unknown = Object.keys(settings)
    .filter((name) => !(name in allVariables) && !name.startsWith('TENANTRY_TEST_'))
    .sort();
  for (const name of unknown) d.errors.push(`${name} is not a Tenantry setting (known: see README "Configuration")`);
  const config = decodeTarget(target as TargetName, d);
  return d.errors.length > 0 ? fail(d.errors) : ok(config);
}
