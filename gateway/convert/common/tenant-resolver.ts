// Tenant resolution (DESIGN.md section 3): the resource attribute tenant.id
// wins when present; otherwise the item's own attribute. Strings are used as
// is, integers in decimal, anything else is invalid; a valid id is 1-150
// bytes of [A-Za-z0-9._~!*'()-] and not "." or "..". The key must be allowed
// to write the tenant.
import { canAccessTenant } from '../../../src/auth/api-keys.ts';
import type { Principal } from '../../../src/auth/api-keys.ts';
import { isValidTenantId, tenantIdRule } from '../../../src/tenant/tenant-id.ts';
import type { KeyValue } from '../../wire/otlp-messages.ts';
import { int64Text } from './otlp-values.ts';

export const tenantAttribute = 'tenant.id';

export type RejectReason = 'missing_tenant' | 'invalid_tenant_type' | 'invalid_tenant_id' | 'tenant_not_allowed';

export type Resolution = { readonly ok: true; readonly tenant: string } | { readonly ok: false; readonly reason: RejectReason; readonly tenant?: string };

/** Describes each reason in partial-success error messages. */
export const reasonText: Readonly<Record<RejectReason, string>> = {
  missing_tenant: 'no tenant.id attribute on the resource or the item',
  invalid_tenant_type: 'tenant.id is neither a string nor an integer',
  invalid_tenant_id: `tenant.id is not ${tenantIdRule}`,
  tenant_not_allowed: 'the API key may not write to tenant',
};

/** The tenant.id attribute of a list: undefined when absent, otherwise a resolution. */
export function tenantOf(attributes: readonly KeyValue[] | null | undefined): Resolution | undefined {
  if (attributes === null || attributes === undefined) return undefined;
  for (const kv of attributes) {
    if (kv.key !== tenantAttribute) continue;
    const v = kv.value;
    let id: string;
    if (v?.value === 'stringValue') id = v.stringValue ?? '';
    else if (v?.value === 'intValue') id = int64Text(v.intValue);
    else return { ok: false, reason: 'invalid_tenant_type' };
    return isValidTenantId(id) ? { ok: true, tenant: id } : { ok: false, reason: 'invalid_tenant_id' };
  }
  return undefined;
}

/** Resolves tenants for one request's principal, remembering access decisions per tenant. */
export class TenantResolver {
  readonly #principal: Principal;
  readonly #allowed = new Map<string, boolean>();

  constructor(principal: Principal) {
    this.#principal = principal;
  }

  /**
   * The first tenant this request may write (rows resolved so far), for fair
   * scheduling of the writer: a request normally carries one tenant, and a
   * mixed one is scheduled as its first. Empty when none.
   */
  get firstTenant(): string {
    for (const [tenant, allowed] of this.#allowed) if (allowed) return tenant;
    return '';
  }

  /** The resolution for an item, given its resource's resolution (undefined when the resource has no tenant.id). */
  resolve(resource: Resolution | undefined, itemAttributes: readonly KeyValue[] | null | undefined): Resolution {
    return this.authorize(resource ?? tenantOf(itemAttributes) ?? { ok: false, reason: 'missing_tenant' });
  }

  /** Checks that the key may write a found tenant. */
  authorize(found: Resolution): Resolution {
    if (!found.ok) return found;
    let allowed = this.#allowed.get(found.tenant);
    if (allowed === undefined) {
      allowed = canAccessTenant(this.#principal, found.tenant);
      this.#allowed.set(found.tenant, allowed);
    }
    return allowed ? found : { ok: false, reason: 'tenant_not_allowed', tenant: found.tenant };
  }
}
