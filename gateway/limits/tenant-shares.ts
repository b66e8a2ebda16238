// How one converted request divides among its tenants, for the ingest limits,
// the per-tenant metrics and the rejected-usage table. Bytes are the request's
// decoded OTLP bytes split by each tenant's share of the request's items (the
// converters do not measure items one by one; a request normally carries one
// tenant, whose share is then exact). Items the tenant resolver refused
// (tenant_not_allowed, rate_limited) are exact per tenant; items rejected
// after their tenant was admitted (timestamps, depth, expansion) are counted
// per reason only, so they are divided among the admitted tenants by their
// share of items. Items with no valid tenant belong to tenant ''.
import type { Rejections } from '../rowbinary/row-batch.ts';
import type { TenantItems } from '../convert/common/tenant-resolver.ts';

export interface Counted {
  readonly items: number;
  readonly bytes: number;
}

export interface TenantShare {
  /** '' for items with no valid tenant id. */
  readonly tenant: string;
  readonly accepted: Counted;
  /** Rejected items and bytes per reason. */
  readonly rejected: ReadonlyMap<string, Counted>;
  /** Bytes charged to the tenant's ingest limit: every item admitted, stored or rejected later; 0 for a refused tenant. */
  readonly charged: number;
}

/** Reasons decided per tenant by the resolver, or for items without a tenant. */
const resolverReasons: ReadonlySet<string> = new Set(['missing_tenant', 'invalid_tenant_type', 'invalid_tenant_id', 'tenant_not_allowed', 'rate_limited']);
const tenantlessReasons = ['missing_tenant', 'invalid_tenant_type', 'invalid_tenant_id'] as const;

/** The shares of a request of `bodyBytes` decoded bytes converted into `rowCount` rows and `rejected` items. */
export function tenantShares(
  tenants: ReadonlyMap<string, Readonly<TenantItems>>,
  rowCount: number,
  rejected: Pick<Rejections, 'count' | 'byReason'>,
  bodyBytes: number,
): TenantShare[] {
  const total = rowCount + rejected.count;
  const perItem = total === 0 ? 0 : bodyBytes / total;
  const counted = (items: number): Counted => ({ items, bytes: Math.round(items * perItem) });
  const shares: TenantShare[] = [];
  const admitted: [string, number][] = [];
  for (const [tenant, seen] of tenants) {
    if (seen.refused === undefined) admitted.push([tenant, seen.items]);
    else shares.push({ tenant, accepted: counted(0), rejected: new Map([[seen.refused.error.reason, counted(seen.items)]]), charged: 0 });
  }
  const later = [...rejected.byReason].filter(([reason]) => !resolverReasons.has(reason));
  const admittedItems = admitted.reduce((sum, [, items]) => sum + items, 0);
  const left = new Map(later);
  admitted.forEach(([tenant, items], i) => {
    const last = i === admitted.length - 1;
    const mine = new Map<string, Counted>();
    let rejectedItems = 0;
    for (const [reason, n] of later) {
      const remaining = left.get(reason) ?? 0;
      const part = last ? remaining : Math.min(remaining, Math.round((n * items) / admittedItems));
      left.set(reason, remaining - part);
      if (part > 0) mine.set(reason, counted(part));
      rejectedItems += part;
    }
    shares.push({ tenant, accepted: counted(Math.max(0, items - rejectedItems)), rejected: mine, charged: Math.round(items * perItem) });
  });
  const tenantless = new Map<string, Counted>();
  for (const reason of tenantlessReasons) {
    const n = rejected.byReason.get(reason) ?? 0;
    if (n > 0) tenantless.set(reason, counted(n));
  }
  if (tenantless.size > 0) shares.push({ tenant: '', accepted: counted(0), rejected: tenantless, charged: 0 });
  return shares;
}
