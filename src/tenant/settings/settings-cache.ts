// The TenantSettingsView of a process: every stored setting kept in memory
// and re-read every TENANTRY_SETTINGS_REFRESH_SECONDS, so a change made on
// any replica takes effect everywhere within that period without a restart,
// and no request waits for ClickHouse to learn its tenant's limits. A failed
// read keeps the last good settings (and says so in the log). Writes go
// through here too, so the replica that wrote sees its change at once.
import type { StoreFailure } from '../../clickhouse/clickhouse-error.ts';
import { systemClock } from '../../clock.ts';
import type { Clock } from '../../clock.ts';
import type { Logger } from '../../log/logger.ts';
import type { Result } from '../../result.ts';
import type { SettingChanges, SettingsStore, StoredSettings } from './settings-store.ts';
import { resolveEffective } from './tenant-settings.ts';
import type { EffectiveSettings, SettingsDefaults, SettingValues, StoredSource, TenantSettingsView } from './tenant-settings.ts';

/** The view plus what the API needs to change settings: each write is followed by a refresh. */
export interface TenantSettingsAdmin extends TenantSettingsView {
  /** What the stack's tenantDefaults set (only the fields it sets). */
  stackValues(): SettingValues;
  /** Sets or unsets fields of one source, then refreshes. */
  write(source: StoredSource, tenantId: string, changes: SettingChanges): Promise<Result<undefined, StoreFailure>>;
  /** Replaces one source's complete set, then refreshes. */
  replace(source: StoredSource, tenantId: string, values: SettingValues): Promise<Result<undefined, StoreFailure>>;
}

export interface SettingsCacheOptions {
  readonly defaults: SettingsDefaults;
  /** Period of the re-reads (TENANTRY_SETTINGS_REFRESH_SECONDS). */
  readonly refreshMs: number;
  readonly log: Logger;
  readonly clock?: Clock;
}

const nothingStored: StoredSettings = { stack: {}, tenants: new Map() };

export class SettingsCache implements TenantSettingsAdmin {
  readonly #store: SettingsStore;
  readonly #options: SettingsCacheOptions;
  readonly #clock: Clock;
  #stored: StoredSettings = nothingStored;
  #fingerprint = '';
  #generation = 0;
  /** Effective settings of a tenant nobody configured: the stack's values over the defaults. */
  #unconfigured: EffectiveSettings;
  /** Effective settings of configured tenants, resolved on first use after each change. */
  readonly #resolved = new Map<string, EffectiveSettings>();
  /** Reads run one after another, so a refresh asked for after a write reads after it. */
  #reads: Promise<boolean> = Promise.resolve(true);
  #timer: { cancel(): void } | undefined;
  #running = false;

  constructor(store: SettingsStore, options: SettingsCacheOptions) {
    this.#store = store;
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#unconfigured = resolveEffective({}, options.defaults);
  }

  get generation(): number {
    return this.#generation;
  }

  effective(tenantId: string): EffectiveSettings {
    const own = this.#stored.tenants.get(tenantId);
    if (own === undefined) return this.#unconfigured;
    let settings = this.#resolved.get(tenantId);
    if (settings === undefined) {
      settings = resolveEffective({ ...own, stack: this.#stored.stack }, this.#options.defaults);
      this.#resolved.set(tenantId, settings);
    }
    return settings;
  }

  stackValues(): SettingValues {
    return this.#stored.stack;
  }

  /** Re-reads the store now; resolves false (keeping the last good settings) when the read failed. */
  refresh(): Promise<boolean> {
    this.#reads = this.#reads.then(() => this.#read());
    return this.#reads;
  }

  /** Reads at once, then every refresh period until stop(). */
  async start(): Promise<boolean> {
    this.#running = true;
    const first = await this.refresh();
    this.#schedule();
    return first;
  }

  stop(): void {
    this.#running = false;
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  async write(source: StoredSource, tenantId: string, changes: SettingChanges): Promise<Result<undefined, StoreFailure>> {
    const written = await this.#store.write(source, tenantId, changes);
    if (written.ok) await this.refresh();
    return written;
  }

  async replace(source: StoredSource, tenantId: string, values: SettingValues): Promise<Result<undefined, StoreFailure>> {
    const written = await this.#store.replace(source, tenantId, values);
    if (written.ok) await this.refresh();
    return written;
  }

  #schedule(): void {
    if (!this.#running) return;
    this.#timer = this.#clock.setTimeout(() => {
      void this.refresh().then(() => {
        this.#schedule();
      });
    }, this.#options.refreshMs);
  }

  async #read(): Promise<boolean> {
    const read = await this.#store.readAll();
    if (!read.ok) {
      this.#options.log.warn('cannot read tenant settings; keeping the last ones read', { error: read.error.message, kind: read.error.kind });
      return false;
    }
    const fingerprint = JSON.stringify([read.value.stack, [...read.value.tenants].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
    if (fingerprint !== this.#fingerprint) {
      this.#fingerprint = fingerprint;
      this.#stored = read.value;
      this.#resolved.clear();
      this.#unconfigured = resolveEffective({ stack: read.value.stack }, this.#options.defaults);
      this.#generation++;
    }
    return true;
  }
}
