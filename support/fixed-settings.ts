// A fake of the tenant settings port for tests and benchmarks that build a
// router or a component without a settings store: every tenant gets the
// view's values, and writes are refused as a store that is down would.
import { fail } from '../src/result.ts';
import type { TenantSettingsAdmin } from '../src/tenant/settings/settings-cache.ts';
import { builtInDefaults, resolveEffective } from '../src/tenant/settings/tenant-settings.ts';
import type { SettingsDefaults, TenantSettingsView } from '../src/tenant/settings/tenant-settings.ts';

/** A view where every tenant has `defaults` (default: the built-in ones). */
export function defaultSettingsView(defaults: SettingsDefaults = builtInDefaults): TenantSettingsView {
  const effective = resolveEffective({}, defaults);
  return { effective: () => effective, generation: 0 };
}

/** Settings that answer `view`'s values (default: the built-in defaults) and refuse writes. */
export function fixedSettings(view: TenantSettingsView = defaultSettingsView()): TenantSettingsAdmin {
  const refused = (): ReturnType<TenantSettingsAdmin['write']> =>
    Promise.resolve(fail({ kind: 'unavailable', message: 'fixed settings cannot be written', code: undefined }));
  return {
    effective: (tenantId) => view.effective(tenantId),
    get generation() {
      return view.generation;
    },
    stackValues: () => ({}),
    write: refused,
    replace: refused,
  };
}
