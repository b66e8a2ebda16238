// Tenant resolution (DESIGN.md section 3): the resource attribute tenant.id
// wins when present; otherwise the item's own attribute. Strings are used as
// is, integers in decimal, anything else is invalid; a valid id is 1-150
// bytes of [A-Za-z0-9._~!*'()-] and not "." or "..". The key must be allowed
// to write the tenant, and the tenant must be within its ingest limit
// (gateway/limits/): both are decided once per tenant and request.
import { canAccessTenant } from '../../../src/auth/api-keys.ts';
import type { Principal } from '../../../src/auth/api-keys.ts';
import { fail, ok } from '../../../src/result.ts';
import type { Fail, Result } from '../../../src/result.ts';
import { isValidTenantId, tenantIdRule } from '../../../src/tenant/tenant-id.ts';
import type { KeyValue } from '../../wire/otlp-messages.ts';
import { int64Text } from './otlp-values.ts';

export const tenantAttribute = 'tenant.id';

export type RejectReason = 'missing_tenant' | 'invalid_tenant_type' | 'invalid_tenant_id' | 'tenant_not_allowed' | 'rate_limited';

/** Why an item's tenant is refused; `tenant` when one was found but may not be written now. */
export interface TenantRefusal {
  readonly reason: RejectReason;
  readonly tenant?: string;
}

/** An item's tenant, or why it has none that may be written. */
export type Resolution = Result<string, TenantRefusal>;

/** Describes each reason in partial-success error messages. */
export const reasonText: Readonly<Record<RejectReason, string>> = {
  missing_tenant: 'no tenant.id attribute on the resource or the item',
  invalid_tenant_type: 'tenant.id is neither a string nor an integer',
  invalid_tenant_id: `tenant.id is not ${tenantIdRule}`,
  tenant_not_allowed: 'the API key may not write to tenant',
  rate_limited: 'the tenant is over its ingest limit (limits.ingestBytesPerSecond): retry later',
};

/** Whether a tenant's items may be accepted now (the gateway's ingest limiter); asked once per tenant and request. */
export interface TenantAdmission {
  admits(tenant: string): boolean;
}

/** What a request carried for one tenant: its items, and why they were all rejected (undefined when accepted). */
export interface TenantItems {
  items: number;
  readonly refused: Fail<TenantRefusal> | undefined;
}

/** The tenant.id attribute of a list: undefined when absent, otherwise a resolution. */
export function tenantOf(attributes: readonly KeyValue[] | null | undefined): Resolution | undefined {
  if (attributes === null || attributes === undefined) return undefined;
  for (const kv of attributes) {
    if (kv.key !== tenantAttribute) continue;
    const v = kv.value;
    let id: string;
    if (v?.value === 'stringValue') id = v.stringValue ?? '';
    else if (v?.value === 'intValue') id = int64Text(v.intValue);
    else return fail({ reason: 'invalid_tenant_type' });
    return isValidTenantId(id) ? ok(id) : fail({ reason: 'invalid_tenant_id' });
  }
  return undefined;
}

/** Resolves tenants for one request's principal, remembering access decisions per tenant. */
export class TenantResolver {
  readonly #principal: Principal;
  readonly #admission: TenantAdmission | undefined;
  readonly #tenants = new Map<string, TenantItems>();

  constructor(principal: Principal, admission?: TenantAdmission) {
    this.#principal = principal;
    this.#admission = admission;
  }

  /** The key the request came with: who is charged for what it sent before a tenant was known. */
  get principal(): Principal {
    return this.#principal;
  }

  /** Per tenant found (in order of appearance): its items, and the rejection of a refused tenant. */
  get tenants(): ReadonlyMap<string, Readonly<TenantItems>> {
    return this.#tenants;
  }

  /**
   * The first tenant this request may write (rows resolved so far), for fair
   * scheduling of the writer: a request normally carries one tenant, and a
   * mixed one is scheduled as its first. Empty when none.
   */
  get firstTenant(): string {
    for (const [tenant, found] of this.#tenants) if (found.refused === undefined) return tenant;
    return '';
  }

  /** Whether the ingest limiter admits `tenant` now: a conversion worker asks it, through this request's resolver, once per tenant. */
  admits(tenant: string): boolean {
    return this.#admission === undefined || this.#admission.admits(tenant);
  }

  /** Takes the tenants a conversion worker's resolver found for this request, as if this resolver had found them. */
  adopt(found: Iterable<readonly [string, TenantItems]>): void {
    for (const [tenant, items] of found) this.#tenants.set(tenant, { items: items.items, refused: items.refused });
  }

  /** The resolution for an item, given its resource's resolution (undefined when the resource has no tenant.id). */
  resolve(resource: Resolution | undefined, itemAttributes: readonly KeyValue[] | null | undefined): Resolution {
    return this.authorize(resource ?? tenantOf(itemAttributes) ?? fail({ reason: 'missing_tenant' }));
  }

  /** Checks that the key may write a found tenant and that the tenant is within its ingest limit. */
  authorize(found: Resolution): Resolution {
    if (!found.ok) return found;
    let seen = this.#tenants.get(found.value);
    if (seen === undefined) {
      seen = { items: 0, refused: this.#refusal(found.value) };
      this.#tenants.set(found.value, seen);
    }
    seen.items++;
    return seen.refused ?? found;
  }

  /** Why a tenant's items are all rejected in this request, or undefined when they are not. */
  #refusal(tenant: string): Fail<TenantRefusal> | undefined {
    if (!canAccessTenant(this.#principal, tenant)) return fail({ reason: 'tenant_not_allowed', tenant });
    if (this.#admission !== undefined && !this.#admission.admits(tenant)) return fail({ reason: 'rate_limited', tenant });
    return undefined;
  }
}
