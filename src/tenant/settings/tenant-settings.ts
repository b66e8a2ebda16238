// Per-tenant settings (limits and retention): the field names, their bounds,
// and how one tenant's effective values are resolved from the sources that
// may set them. Pure: the store (settings-store.ts) reads and writes the
// sources, the cache (settings-cache.ts) keeps them in memory for every
// gateway and API replica, and the CRDs, the API codecs and the operator use
// the same names and bounds.

export const limitFields = ['ingestBytesPerSecond', 'ingestBurstBytes', 'maxConcurrentQueries', 'maxQueryDays', 'queryTimeoutSeconds'] as const;
export const retentionFields = ['logsDays', 'tracesDays', 'metricsDays'] as const;
export type LimitField = (typeof limitFields)[number];
export type RetentionField = (typeof retentionFields)[number];
export type TenantLimits = Readonly<Record<LimitField, number>>;
export type TenantRetention = Readonly<Record<RetentionField, number>>;

/** Where an effective value came from, first set wins in this order. */
export type SettingSource = 'tenant' | 'api' | 'stack' | 'default';

/** The sources that are stored (the defaults are the process's own), first set wins. */
export const storedSources = ['tenant', 'api', 'stack'] as const;
export type StoredSource = (typeof storedSources)[number];

/** Values one source sets; an absent field is not set by that source. */
export interface SettingValues {
  readonly limits?: Partial<TenantLimits>;
  readonly retention?: Partial<TenantRetention>;
}

export interface EffectiveSettings {
  readonly limits: TenantLimits;
  readonly retention: TenantRetention;
  readonly sources: { readonly limits: Readonly<Record<LimitField, SettingSource>>; readonly retention: Readonly<Record<RetentionField, SettingSource>> };
}

/** The settings every gateway and API replica reads: kept in memory, refreshed from ClickHouse. */
export interface TenantSettingsView {
  /** Effective settings of a tenant (the defaults for a tenant nobody configured). Synchronous: no I/O. */
  effective(tenantId: string): EffectiveSettings;
  /** Increments whenever any tenant's effective settings may have changed (for caches keyed on it). */
  readonly generation: number;
}

/** The process defaults (`TENANTRY_TENANT_*` and `TENANTRY_*_RETENTION_DAYS`): the last source. */
export interface SettingsDefaults {
  readonly limits: TenantLimits;
  readonly retention: TenantRetention;
}

export interface Bound {
  readonly min: number;
  readonly max: number;
}

const KiB = 1024;
const GiB = 1024 ** 3;

/** Inclusive bounds of every field; values are integers. The API, the CRD schemas and the config use these. */
export const limitBounds: Readonly<Record<LimitField, Bound>> = {
  ingestBytesPerSecond: { min: KiB, max: 10 * GiB },
  ingestBurstBytes: { min: KiB, max: 100 * GiB },
  maxConcurrentQueries: { min: 1, max: 1000 },
  maxQueryDays: { min: 1, max: 36_500 },
  queryTimeoutSeconds: { min: 1, max: 3600 },
};

export const retentionBounds: Readonly<Record<RetentionField, Bound>> = {
  logsDays: { min: 1, max: 36_500 },
  tracesDays: { min: 1, max: 36_500 },
  metricsDays: { min: 1, max: 36_500 },
};

/** The defaults of the `TENANTRY_TENANT_*` and retention variables, for contexts built without a config. */
export const builtInDefaults: SettingsDefaults = {
  limits: {
    ingestBytesPerSecond: 8 * 1024 ** 2,
    ingestBurstBytes: 32 * 1024 ** 2,
    maxConcurrentQueries: 8,
    maxQueryDays: 400,
    queryTimeoutSeconds: 30,
  },
  retention: { logsDays: 30, tracesDays: 30, metricsDays: 90 },
};

/** Why a value is outside its field's bounds, or undefined when it is within them. */
export function boundViolation(bound: Bound, value: number): string | undefined {
  if (!Number.isInteger(value)) return `must be an integer from ${bound.min} to ${bound.max}`;
  if (value < bound.min) return `must be at least ${bound.min}`;
  if (value > bound.max) return `must be at most ${bound.max}`;
  return undefined;
}

/** Values set by each stored source; a source that sets nothing may be absent. */
export type SourcedValues = Readonly<Partial<Record<StoredSource, SettingValues>>>;

function resolveGroup<F extends string>(
  fields: readonly F[],
  pick: (values: SettingValues) => Partial<Readonly<Record<F, number>>> | undefined,
  sources: SourcedValues,
  defaults: Readonly<Record<F, number>>,
): { values: Record<F, number>; from: Record<F, SettingSource> } {
  const values = {} as Record<F, number>;
  const from = {} as Record<F, SettingSource>;
  for (const field of fields) {
    values[field] = defaults[field];
    from[field] = 'default';
    for (const source of storedSources) {
      const given = sources[source] === undefined ? undefined : pick(sources[source])?.[field];
      if (given !== undefined) {
        values[field] = given;
        from[field] = source;
        break;
      }
    }
  }
  return { values, from };
}

/** Effective settings: per field, the first source that sets it (tenant, api, stack), else the default. */
export function resolveEffective(sources: SourcedValues, defaults: SettingsDefaults): EffectiveSettings {
  const limits = resolveGroup(limitFields, (v) => v.limits, sources, defaults.limits);
  const retention = resolveGroup(retentionFields, (v) => v.retention, sources, defaults.retention);
  return { limits: limits.values, retention: retention.values, sources: { limits: limits.from, retention: retention.from } };
}

const retentionFieldOf = { logs: 'logsDays', traces: 'tracesDays', metrics: 'metricsDays' } as const satisfies Record<string, RetentionField>;

/** Days a signal's rows are kept for this tenant. */
export function retentionDaysOf(settings: EffectiveSettings, signal: 'logs' | 'traces' | 'metrics'): number {
  return settings.retention[retentionFieldOf[signal]];
}

/** Nanoseconds in a day, the unit of retention and of limits.maxQueryDays. */
export const nsPerDay = 86_400n * 1_000_000_000n;

/** The oldest timestamp (Unix ns) of a row still visible: rows before it are past the tenant's retention. */
export function oldestVisibleNs(settings: EffectiveSettings, signal: 'logs' | 'traces' | 'metrics', nowNs: bigint): bigint {
  return nowNs - BigInt(retentionDaysOf(settings, signal)) * nsPerDay;
}
