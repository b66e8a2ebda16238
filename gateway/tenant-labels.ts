// A bounded `tenant` label for the gateway's per-tenant metrics: at most
// `k` tenants have their own label, the others share `otherTenants`. Labels
// go to the top tenants by decoded bytes: while fewer than k tenants are
// labelled, a new tenant gets its own at once; every window the top k of the
// window's volume keep or take the labels, and the series of a tenant that
// lost its label are removed (`onDemote`), so the number of series stays
// bounded however many tenants come and go. Both placeholders contain `_`,
// which no tenant id may (src/tenant/tenant-id.ts), so they never collide
// with a tenant.

/** Tenants with a label of their own in the gateway's per-tenant metrics (the rest are `__other__`). */
export const metricTenantLabels = 20;

/** How often the labels are given to the top tenants by volume. */
export const labelWindowMs = 60_000;

/** The label of the tenants without one of their own. */
export const otherTenants = '__other__';

/** The label of items with no valid tenant id, or one their key may not write. */
export const noTenant = '__none__';
/** The one label of every tenant while per-tenant labels are off (TENANTRY_METRICS_TENANT_LABELS). */
export const allTenants = '__all__';

/** Tenants whose volume is tracked in one window (beyond it, new tenants wait for the next window). */
const maxTracked = 10_000;

export class TenantLabels {
  readonly #k: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #onDemote: (tenant: string) => void;
  readonly #labelled = new Set<string>();
  #volume = new Map<string, number>();
  #windowEnd: number;

  constructor(onDemote: (tenant: string) => void, k = metricTenantLabels, windowMs = labelWindowMs, now: () => number = () => performance.now()) {
    this.#onDemote = onDemote;
    this.#k = k;
    this.#windowMs = windowMs;
    this.#now = now;
    this.#windowEnd = now() + windowMs;
  }

  /** Counts `bytes` for `tenant` and answers its label. */
  label(tenant: string, bytes: number): string {
    if (tenant === '') return noTenant;
    if (this.#now() >= this.#windowEnd) this.#rebalance();
    const seen = this.#volume.get(tenant);
    if (seen !== undefined || this.#volume.size < maxTracked) this.#volume.set(tenant, (seen ?? 0) + bytes);
    if (this.#labelled.has(tenant)) return tenant;
    if (this.#labelled.size < this.#k) {
      this.#labelled.add(tenant);
      return tenant;
    }
    return otherTenants;
  }

  /** The label `tenant` holds now, without counting volume for it or giving it one: for counts that must not earn a label (rejections). */
  known(tenant: string): string {
    if (tenant === '') return noTenant;
    return this.#labelled.has(tenant) ? tenant : otherTenants;
  }

  /** The top k tenants of the window ending now keep or take the labels. */
  #rebalance(): void {
    const top = new Set(
      [...this.#volume]
        .sort((a, b) => b[1] - a[1])
        .slice(0, this.#k)
        .map(([tenant]) => tenant),
    );
    for (const tenant of this.#labelled) {
      if (top.has(tenant)) continue;
      this.#labelled.delete(tenant);
      this.#onDemote(tenant);
    }
    for (const tenant of top) this.#labelled.add(tenant);
    this.#volume = new Map();
    this.#windowEnd = this.#now() + this.#windowMs;
  }
}
