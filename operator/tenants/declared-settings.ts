// Declared tenant settings (limits and retention) as the operator handles
// them, pure: read from a Tenant's spec or a stack's spec.tenantDefaults,
// picked out of what the API reports by source, compared, described for
// events, and turned into a Tenant's status. The API server validated the
// spec against the CRD schema (the bounds of src/tenant/settings/); reading
// again here keeps these functions total for partial or foreign input.
import { limitFields, retentionFields } from '../../src/tenant/settings/tenant-settings.ts';
import type { LimitField, RetentionField, SettingSource, SettingValues, TenantLimits, TenantRetention } from '../../src/tenant/settings/tenant-settings.ts';

/** Effective settings as the API reports them for one tenant; a field the API did not report is absent. */
export interface ReportedSettings {
  readonly limits: Partial<TenantLimits>;
  readonly retention: Partial<TenantRetention>;
  readonly sources: {
    readonly limits: Partial<Readonly<Record<LimitField, SettingSource>>>;
    readonly retention: Partial<Readonly<Record<RetentionField, SettingSource>>>;
  };
}

type Raw = Readonly<Record<string, unknown>>;

const settingSources: readonly SettingSource[] = ['tenant', 'api', 'stack', 'default'];
const obj = (v: unknown): Raw => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Raw) : {});

function numbers<F extends string>(fields: readonly F[], raw: unknown): Partial<Record<F, number>> {
  const o = obj(raw);
  const out: Partial<Record<F, number>> = {};
  for (const f of fields) {
    const v = o[f];
    if (typeof v === 'number' && Number.isFinite(v)) out[f] = v;
  }
  return out;
}

function sources<F extends string>(fields: readonly F[], raw: unknown): Partial<Record<F, SettingSource>> {
  const o = obj(raw);
  const out: Partial<Record<F, SettingSource>> = {};
  for (const f of fields) {
    const v = o[f];
    if (settingSources.includes(v as SettingSource)) out[f] = v as SettingSource;
  }
  return out;
}

/** The known fields of a `{ limits, retention }` object (a Tenant's spec, a stack's tenantDefaults, an API answer); both groups always present. */
export function settingValuesOf(raw: unknown): Required<SettingValues> {
  const o = obj(raw);
  return { limits: numbers(limitFields, o['limits']), retention: numbers(retentionFields, o['retention']) };
}

/** The effective settings and sources in an API tenant object, or undefined when it reports none (an API without settings). */
export function reportedSettingsOf(raw: unknown): ReportedSettings | undefined {
  const o = obj(raw);
  if (o['limits'] === undefined && o['retention'] === undefined) return undefined;
  const s = obj(o['sources']);
  return {
    limits: numbers(limitFields, o['limits']),
    retention: numbers(retentionFields, o['retention']),
    sources: { limits: sources(limitFields, s['limits']), retention: sources(retentionFields, s['retention']) },
  };
}

/** The values the API reports as coming from `source` (the tenant's declared set, when source is 'tenant'). */
export function heldBySource(reported: ReportedSettings | undefined, source: SettingSource): Required<SettingValues> {
  const pick = <F extends LimitField | RetentionField>(
    fields: readonly F[],
    values: Partial<Record<F, number>>,
    from: Partial<Record<F, SettingSource>>,
  ): Partial<Record<F, number>> => {
    const out: Partial<Record<F, number>> = {};
    for (const f of fields) {
      const v = values[f];
      if (from[f] === source && v !== undefined) out[f] = v;
    }
    return out;
  };
  if (reported === undefined) return { limits: {}, retention: {} };
  return {
    limits: pick(limitFields, reported.limits, reported.sources.limits),
    retention: pick(retentionFields, reported.retention, reported.sources.retention),
  };
}

/** Whether two sets of values set exactly the same fields to the same numbers. */
export function sameValues(a: SettingValues, b: SettingValues): boolean {
  const same = <F extends string>(fields: readonly F[], x: Partial<Record<F, number>> | undefined, y: Partial<Record<F, number>> | undefined): boolean =>
    fields.every((f) => x?.[f] === y?.[f]);
  return same(limitFields, a.limits, b.limits) && same(retentionFields, a.retention, b.retention);
}

/** "limits.maxQueryDays=7, retention.logsDays=3", or "nothing" for an empty set: for events and logs. */
export function describeValues(v: SettingValues): string {
  const parts = [
    ...limitFields.filter((f) => v.limits?.[f] !== undefined).map((f) => `limits.${f}=${v.limits?.[f]}`),
    ...retentionFields.filter((f) => v.retention?.[f] !== undefined).map((f) => `retention.${f}=${v.retention?.[f]}`),
  ];
  return parts.length === 0 ? 'nothing' : parts.join(', ');
}

/** The part of a Tenant's status that shows effective settings: integer values only (the CRD's status schema). */
export function settingsStatus(reported: ReportedSettings): {
  limits: Partial<TenantLimits>;
  retention: Partial<TenantRetention>;
  sources: ReportedSettings['sources'];
} {
  const integers = <F extends string>(fields: readonly F[], values: Partial<Record<F, number>>): Partial<Record<F, number>> => {
    const out: Partial<Record<F, number>> = {};
    for (const f of fields) {
      const v = values[f];
      if (v !== undefined && Number.isSafeInteger(v)) out[f] = v;
    }
    return out;
  };
  return { limits: integers(limitFields, reported.limits), retention: integers(retentionFields, reported.retention), sources: reported.sources };
}
