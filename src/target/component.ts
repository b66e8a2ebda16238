// The contract between the CLI (composition root) and the deployables: each
// deployable exports a function that starts its component from this context.
import type { ClickHouseClient } from '@clickhouse/client';
import type { Registry } from 'prom-client';
import type { KeyRing } from '../auth/api-keys.ts';
import type { ApiConfig, GatewayConfig, OperatorConfig, StorageConfig, WriterConfig } from '../config/config.ts';
import type { Store } from '../clickhouse/store.ts';
import type { StoreGate } from '../clickhouse/store-gate.ts';
import type { Logger } from '../log/logger.ts';
import type { StatementLimits } from './statement-limits.ts';
import type { Readiness } from '../ops/readiness.ts';
import type { TenantSettingsAdmin } from '../tenant/settings/settings-cache.ts';

/** What a deployable starts from: the process's store, gate, settings and keys (built by openProcessContext, src/target/process-context.ts). */
export interface ComponentContext {
  readonly host: string;
  readonly store: Store;
  /** The one gate the gateway's INSERTs and the API's queries pass on their way to the store. */
  readonly storeGate: StoreGate;
  /** The bounds of every API statement inside ClickHouse (from TENANTRY_MEMORY_LIMIT_BYTES); absent in a gateway-only process, which runs no queries. */
  readonly statementLimits: StatementLimits | undefined;
  /**
   * Embedded mode: a chDB connection of its own that sends KILL QUERY (a
   * connection runs one statement at a time, so the queries' own cannot).
   * Absent: the store's last insert connection.
   */
  readonly statementControl?: Pick<ClickHouseClient, 'command'>;
  /**
   * Per-tenant limits and retention, kept in memory and refreshed from
   * ClickHouse: one per process, shared by the gateway (which reads them) and
   * the API (which also writes them, each write followed by a refresh).
   */
  readonly settings: TenantSettingsAdmin;
  readonly keys: KeyRing;
  readonly log: Logger;
  readonly readiness: Readiness;
  readonly registry: Registry;
}

export interface RunningComponent {
  readonly name: string;
  /** Bound ports by role, e.g. { otlpHttp: 4318 }, logged at start-up. */
  readonly ports: Readonly<Record<string, number>>;
  /** Stops accepting work and finishes what was accepted (flushes, answers in-flight requests). */
  stop(): Promise<void>;
}

/** What a component needs to open its ports, before the process has its store, keys or settings. */
export type PortContext = Pick<ComponentContext, 'host' | 'log' | 'readiness' | 'registry'>;

/**
 * A component whose ports are open before the process is set up (the store
 * opened, the schema checked, the write-ahead log replayed): they answer
 * health at once, and data requests 503 / UNAVAILABLE until start().
 */
export interface OpenComponent {
  /** Bound ports by role, as RunningComponent's. */
  readonly ports: Readonly<Record<string, number>>;
  /** Sets the component up on the open ports; a failure leaves them open for close(). */
  start(ctx: ComponentContext): Promise<RunningComponent>;
  /** Closes the ports of a component that did not start. */
  close(): Promise<void>;
}

export type OpenGateway = (ctx: PortContext, config: GatewayConfig) => Promise<OpenComponent>;
export type OpenApi = (ctx: PortContext, config: ApiConfig) => Promise<OpenComponent>;
export type StartGateway = (ctx: ComponentContext, config: GatewayConfig) => Promise<RunningComponent>;
export type StartApi = (ctx: ComponentContext, config: ApiConfig) => Promise<RunningComponent>;
export type StartOperator = (ctx: Pick<ComponentContext, 'host' | 'log' | 'readiness' | 'registry'>, config: OperatorConfig) => Promise<RunningComponent>;
/** Drains a write-ahead-log directory into ClickHouse and answers the exit code: 0 nothing left, 1 segments left (gateway/drain/drain-target.ts). */
export type RunDrain = (config: { readonly storage: StorageConfig; readonly writer: WriterConfig }, log: Logger) => Promise<number>;
