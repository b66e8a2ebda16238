// Every TENANTRY_* variable, its codec, its default and its meaning. This
// table drives decoding, the unknown-variable check and the README's table.
import type * as t from 'io-ts';
import {
  ByteSize,
  DnsLabel,
  Host,
  HttpUrl,
  Identifier,
  intInRange,
  LogLevel,
  NamespaceList,
  NonEmptyString,
  OnOff,
  Port,
  RawString,
  WalSync,
} from './codecs.ts';

export interface Variable {
  readonly codec: t.Decoder<unknown, unknown> & { readonly name: string };
  /** Raw default, decoded like a set value; undefined means "unset". */
  readonly default: string | undefined;
  readonly doc: string;
}

function variable<A>(codec: t.Type<A, string>, defaultValue: string | undefined, doc: string): Variable {
  return { codec, default: defaultValue, doc };
}

const days = intInRange(1, 36500, 'a number of days from 1 to 36500');

export const commonVariables = {
  TENANTRY_LOG_LEVEL: variable(LogLevel, 'info', 'least severe level logged; logs are JSON lines on stdout'),
  TENANTRY_HOST: variable(Host, '0.0.0.0', 'bind address of every listener'),
} as const;

export const listenerVariables = {
  TENANTRY_MAX_CONNECTIONS: variable(
    intInRange(1, 1_000_000),
    undefined,
    'open connections each listener (OTLP/HTTP, OTLP/gRPC, API) keeps; one more is closed on arrival; unset means (open-file limit − 1024) / 4, at least 64',
  ),
  TENANTRY_HEADERS_TIMEOUT_MS: variable(
    intInRange(100, 600_000),
    '10000',
    "time a client has to send a request's headers (gRPC: its first bytes) before the connection is closed (HTTP: answered 408), in ms",
  ),
  TENANTRY_BODY_TIMEOUT_MS: variable(
    intInRange(100, 3_600_000),
    '30000',
    'time a request body (gRPC: message) has after its headers before it is answered 408 / DEADLINE_EXCEEDED and its connection closed, in ms',
  ),
  TENANTRY_METRICS_KEY: variable(
    NonEmptyString,
    undefined,
    '/metrics on the OTLP/HTTP and API ports answers only requests with "Authorization: Bearer <this key>" (401 otherwise); unset means /metrics is open, for ports reachable only inside the cluster',
  ),
} as const;

export const storageVariables = {
  TENANTRY_DATA_DIR: variable(
    NonEmptyString,
    './data',
    'embedded ClickHouse data directory (also holds the generated admin key, the insert spool and, by default, the write-ahead log)',
  ),
  TENANTRY_CLICKHOUSE_URL: variable(HttpUrl, undefined, 'ClickHouse server URL; set it to leave embedded mode'),
  TENANTRY_CLICKHOUSE_USER: variable(NonEmptyString, 'default', 'ClickHouse user (server mode)'),
  TENANTRY_CLICKHOUSE_PASSWORD: variable(RawString, '', 'ClickHouse password (server mode)'),
  TENANTRY_CLICKHOUSE_DATABASE: variable(Identifier, 'tenantry', 'database holding all tables'),
  TENANTRY_CLICKHOUSE_CLUSTER: variable(Identifier, undefined, 'cluster name: DDL runs ON CLUSTER with Replicated and Distributed tables (server mode)'),
  TENANTRY_LOGS_RETENTION_DAYS: variable(days, '30', 'days logs are kept (table TTL)'),
  TENANTRY_TRACES_RETENTION_DAYS: variable(days, '30', 'days spans are kept (table TTL)'),
  TENANTRY_METRICS_RETENTION_DAYS: variable(days, '90', 'days metric points are kept (table TTL)'),
} as const;

export const keyVariables = {
  TENANTRY_API_KEYS: variable(NonEmptyString, undefined, 'API keys as JSON (see "API keys")'),
  TENANTRY_API_KEYS_FILE: variable(NonEmptyString, undefined, 'path of a JSON or YAML file of API keys'),
} as const;

export const gatewayVariables = {
  TENANTRY_OTLP_HTTP_PORT: variable(Port, '4318', 'OTLP/HTTP listener port'),
  TENANTRY_OTLP_GRPC_PORT: variable(Port, '4317', 'OTLP/gRPC listener port'),
  TENANTRY_MAX_REQUEST_BYTES: variable(ByteSize, '16MiB', 'OTLP request body limit after decompression'),
  TENANTRY_BATCH_MAX_ROWS: variable(intInRange(1, 1_000_000), '100000', 'rows of one table after which the write-ahead log cuts a block and INSERTs it'),
  TENANTRY_BATCH_MAX_BYTES: variable(ByteSize, '64MiB', 'bytes of one table after which the write-ahead log cuts a block and INSERTs it'),
  TENANTRY_BATCH_MAX_DELAY_MS: variable(
    intInRange(0, 60_000),
    '1000',
    'longest time acknowledged rows wait in the write-ahead log for their INSERT, in ms (bounds how soon they are queryable)',
  ),
  TENANTRY_WAL_DIR: variable(NonEmptyString, undefined, "directory of the gateway's write-ahead log; unset means TENANTRY_DATA_DIR/wal"),
  TENANTRY_WAL_SYNC: variable(
    WalSync,
    'write',
    'when a request is acknowledged: "write" once its rows are written to the write-ahead log (they survive the process being killed, as with Loki\'s and Tempo\'s logs and ClickHouse\'s own inserts); "fsync" once they are also fsynced (they survive a power loss while in the log)',
  ),
  TENANTRY_METRICS_TENANT_LABELS: variable(
    OnOff,
    'off',
    'per-tenant gateway metrics carry the tenant id as a label (the 20 largest tenants by accepted volume, the rest "__other__"); off: every tenant is counted under tenant="__all__", so /metrics names no tenant',
  ),
  TENANTRY_MAX_INFLIGHT_BYTES: variable(
    ByteSize,
    '256MiB',
    'OTLP request bytes the process holds at once (bodies being read, inflated and decoded); a request beyond it gets 429 / RESOURCE_EXHAUSTED before its body is read',
  ),
  TENANTRY_WAL_MAX_BYTES: variable(ByteSize, '1GiB', 'bytes the write-ahead log may hold (acknowledged, not yet in ClickHouse) beyond which requests get 429'),
  TENANTRY_MAX_ATTRIBUTES: variable(
    intInRange(1, 100_000),
    '128',
    'attributes kept per list (resource, scope, item, event, link); the rest are dropped and added to dropped_attributes_count',
  ),
  TENANTRY_MAX_ATTRIBUTE_KEY_BYTES: variable(ByteSize, '1KiB', 'attribute keys longer than this (UTF-8 bytes) are truncated'),
  TENANTRY_MAX_ATTRIBUTE_VALUE_BYTES: variable(
    ByteSize,
    '16KiB',
    'attribute values longer than this as stored text (UTF-8 bytes; nested values as JSON) are truncated',
  ),
  TENANTRY_MAX_LOG_BODY_BYTES: variable(ByteSize, '256KiB', 'log bodies longer than this as stored text are truncated'),
  TENANTRY_MAX_SPAN_NAME_BYTES: variable(ByteSize, '1KiB', 'span names longer than this are truncated'),
  TENANTRY_MAX_SPAN_EVENTS: variable(intInRange(0, 100_000), '128', 'events kept per span; the rest are dropped and added to dropped_events_count'),
  TENANTRY_MAX_SPAN_LINKS: variable(intInRange(0, 100_000), '128', 'links kept per span; the rest are dropped and added to dropped_links_count'),
  TENANTRY_MAX_VALUE_DEPTH: variable(
    intInRange(1, 32),
    '16',
    'array and key-value-list levels an attribute value or log body may nest; an item with a deeper value is rejected',
  ),
  TENANTRY_MAX_FUTURE_SKEW_SECONDS: variable(
    intInRange(0, 604_800),
    '600',
    "items timestamped further in the future are rejected (items older than the signal's retention are rejected too)",
  ),
  TENANTRY_MAX_REQUEST_EXPANSION: variable(
    intInRange(1, 1000),
    '16',
    'rows one request may render, as a multiple of its decoded size (at least 32 MiB); resource and scope attributes are copied into every row, items beyond are rejected',
  ),
} as const;

export const apiVariables = {
  TENANTRY_API_PORT: variable(Port, '8080', 'JSON API listener port'),
  TENANTRY_QUERY_TIMEOUT_SECONDS: variable(intInRange(1, 3600), '30', 'API queries running longer are cancelled and answered 503'),
  TENANTRY_API_PAGE_MAX_BYTES: variable(
    ByteSize,
    '8MiB',
    'bytes the records of one logs or traces page may take (about, as JSON); a page stops early with a cursor, and a single larger record is served alone',
  ),
  TENANTRY_EMBEDDED_QUERY_TIMEOUT_SECONDS: variable(
    intInRange(1, 3600),
    '10',
    "embedded ClickHouse only: longest an API query's statement may run once it has one of the store's two query slots (answered 503 beyond; waiting for a slot counts toward TENANTRY_QUERY_TIMEOUT_SECONDS): embedded ClickHouse runs two query statements at once, one per tenant (docs/adr/0008-embedded-statements-inline-parameters.md), so a long one holds a slot another tenant could use",
  ),
  TENANTRY_MAX_CONCURRENT_QUERIES: variable(
    intInRange(1, 10_000),
    '8',
    'API queries in flight per API key (per API replica); one more waits up to 2 s for one of them, then gets 429 with Retry-After',
  ),
  TENANTRY_MEMORY_LIMIT_BYTES: variable(
    ByteSize,
    undefined,
    "memory the process is given (the operator sets it from the pod's memory limit); each API query's statement is bounded from it inside ClickHouse: embedded, max_memory_usage an eighth of it (two statements run at once: a quarter in all), and in both modes max_result_bytes 1/32 of it (max_result_rows one per 64 of those bytes), which bounds what the process reads back; a query over a bound is answered 400 naming it; unset means the cgroup's memory limit, else the machine's memory",
  ),
} as const;

/** Process defaults of per-tenant settings (DESIGN.md section 8); a tenant's own, the API's and the stack's values override them. */
export const tenantSettingsVariables = {
  // Derived from measured capacity (docs/gateway.md "Ingest capacity and default rates"): a core accepts about 12 MiB/s of decoded OTLP end to end
  // (conversion alone 35-45 MiB/s, npm run bench:capacity), so a tenant at the default rate takes at most about two thirds of one core of one replica.
  TENANTRY_TENANT_INGEST_BYTES_PER_SECOND: variable(
    ByteSize,
    '8MiB',
    'default per-tenant ingest rate: decoded OTLP bytes per second, all signals together, across all gateway replicas (1KiB to 10GiB); about two thirds of what one gateway core accepts (docs/gateway.md)',
  ),
  TENANTRY_TENANT_INGEST_BURST_BYTES: variable(
    ByteSize,
    '32MiB',
    'default per-tenant ingest burst: decoded OTLP bytes a tenant may send at once above its rate (1KiB to 100GiB); 4 s at the default rate, two requests of the largest size',
  ),
  TENANTRY_TENANT_MAX_CONCURRENT_QUERIES: variable(
    intInRange(1, 1000),
    '8',
    'default per-tenant API queries in flight (per API replica); one more waits up to 2 s, then gets 429 with Retry-After',
  ),
  TENANTRY_TENANT_MAX_QUERY_DAYS: variable(
    intInRange(1, 36500),
    '400',
    "default longest time range of one tenant query, in days, measured after its start is moved up to the tenant's retention; longer is answered 400",
  ),
  TENANTRY_TENANT_QUERY_TIMEOUT_SECONDS: variable(
    intInRange(1, 3600),
    '30',
    "default time limit of a tenant's API queries (logs, traces, timeseries, usage); ClickHouse cancels a query running longer and the API answers 503",
  ),
  TENANTRY_SETTINGS_REFRESH_SECONDS: variable(
    intInRange(1, 10),
    '5',
    'how often each process re-reads tenant settings from ClickHouse (a change reaches every replica within this time)',
  ),
} as const;

export const operatorVariables = {
  TENANTRY_OPERATOR_PORT: variable(Port, '8081', 'operator health and metrics port'),
  TENANTRY_KUBECONFIG: variable(NonEmptyString, undefined, 'kubeconfig file of the operator; unset means the in-cluster service account'),
  TENANTRY_WATCH_NAMESPACES: variable(NamespaceList, undefined, 'namespaces the operator watches, comma-separated; unset means all'),
  TENANTRY_LEADER_ELECTION: variable(OnOff, 'on', 'operator leader election with a Lease (on/off)'),
  TENANTRY_LEADER_ELECTION_NAMESPACE: variable(DnsLabel, 'default', 'namespace of the operator leader Lease (the chart sets its own namespace)'),
} as const;

/** All variables, for the unknown-variable check and documentation. */
export const allVariables: Readonly<Record<string, Variable>> = {
  ...commonVariables,
  ...listenerVariables,
  ...storageVariables,
  ...keyVariables,
  ...gatewayVariables,
  ...apiVariables,
  ...tenantSettingsVariables,
  ...operatorVariables,
};
