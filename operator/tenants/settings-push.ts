// Pushes declared settings through the TenantDirectory, only where the API
// holds something else: a Tenant's spec.limits/spec.retention against the
// values the API reports with source 'tenant' (replace semantics, so a field
// removed from the spec is removed from the API), and a stack's
// spec.tenantDefaults against GET /v1/settings/tenant-defaults. The API's
// values from other sources are never compared: an edit through the API
// (source 'api') stays stored and is shadowed by the declared value.
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';
import type { SettingValues } from '../../src/tenant/settings/tenant-settings.ts';
import { heldBySource, sameValues } from './declared-settings.ts';
import type { StoredTenant, TenantDirectory } from './tenant-directory.ts';

export type PushOutcome<T> = { readonly pushed: false } | { readonly pushed: true; readonly was: Required<SettingValues>; readonly now: T };

const isEmpty = (v: SettingValues): boolean => sameValues(v, {});

/** Pushes a Tenant's declared set when the API's 'tenant'-source values differ; `stored` is the tenant as last listed. */
export async function pushDeclaredSettings(
  directory: TenantDirectory,
  tenantId: string,
  declared: Required<SettingValues>,
  stored: StoredTenant | undefined,
): Promise<Result<PushOutcome<StoredTenant>, string>> {
  const held = heldBySource(stored?.settings, 'tenant');
  if (sameValues(declared, held)) return ok({ pushed: false });
  const r = await directory.putDeclaredSettings(tenantId, declared);
  return r.ok ? ok({ pushed: true, was: held, now: r.value }) : r;
}

/** Pushes a stack's tenantDefaults when the API holds other stack defaults. */
export async function pushTenantDefaults(
  directory: TenantDirectory,
  declared: Required<SettingValues>,
): Promise<Result<PushOutcome<Required<SettingValues>>, string>> {
  const held = await directory.getTenantDefaults();
  if (!held.ok) return held;
  if (held.value === undefined) {
    // An API without settings routes (an older image): fine as long as the stack declares none.
    return isEmpty(declared)
      ? ok({ pushed: false })
      : fail('the API has no /v1/settings/tenant-defaults (an image without tenant settings?): spec.tenantDefaults cannot be applied');
  }
  if (sameValues(declared, held.value)) return ok({ pushed: false });
  const r = await directory.putTenantDefaults(declared);
  return r.ok ? ok({ pushed: true, was: held.value, now: r.value }) : r;
}
