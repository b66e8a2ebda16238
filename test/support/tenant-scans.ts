// Scans for unit tests and benchmarks that call query builders directly: a
// TenantScan is the only way to start a statement, so they open one as a
// route would, for an all-tenants key.
import type { Principal } from '../../src/auth/api-keys.ts';
import { defaultSettingsView } from '../../support/fixed-settings.ts';
import type { EffectiveSettings, TenantSettingsView } from '../../src/tenant/settings/tenant-settings.ts';
import { DirectoryScan, TenantScan } from '../../api/query/tenant-scan.ts';
import type { Statement, TelemetrySignal } from '../../api/query/tenant-scan.ts';

/** A key that reaches every tenant with every scope. */
export const everyTenantKey: Principal = { name: 'test', scopes: new Set(['read', 'ingest', 'admin'] as const), tenants: '*' };

/** A settings view giving every tenant `settings` (built-in defaults, changed by `change`). */
export function settingsWith(change: (s: EffectiveSettings) => EffectiveSettings): TenantSettingsView {
  const defaults = defaultSettingsView();
  return { ...defaults, effective: (tenantId: string) => change(defaults.effective(tenantId)) };
}

/** The scan of `tenantId`'s `signal` at `nowNs` under `settings` (default: the built-in defaults). */
export function scanOf(tenantId: string, signal: TelemetrySignal, nowNs: bigint, settings: TenantSettingsView = defaultSettingsView()): TenantScan {
  return TenantScan.open({ now: () => nowNs, settings }, { principal: everyTenantKey, tenantId }, signal);
}

/** A statement read by no tenant's route (a probe of the runner itself): through the directory of an all-tenants key. */
export function probeStatement(sql: string): Statement {
  return new DirectoryScan({ principal: everyTenantKey }).statement().finish(sql);
}
