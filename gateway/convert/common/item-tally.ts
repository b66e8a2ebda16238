// What converting one request refused or cut: items rejected per reason
// (tenant rules, item limits) and values truncated or dropped per limit, and
// the partial-success message that names each limit and its value. The
// truncations of an item count only once the converter keeps its row.
import type { Rejections } from '../../rowbinary/row-batch.ts';
import type { ItemLimits, TruncateReason } from './item-limits.ts';
import { reasonText as tenantReasonText } from './tenant-resolver.ts';
import type { RejectReason as TenantReason } from './tenant-resolver.ts';

/** The order in which messages list truncations, whatever order they happened in. */
const truncateReasons: readonly TruncateReason[] = [
  'attribute_count',
  'attribute_key_bytes',
  'attribute_value_bytes',
  'log_body_bytes',
  'span_name_bytes',
  'span_events',
  'span_links',
];

export type LimitReason = 'timestamp_too_old' | 'timestamp_too_new' | 'value_too_deep' | 'request_too_expansive' | 'enum_out_of_range' | 'bound_not_finite';
export type RejectReason = TenantReason | LimitReason;

/** Why an item is rejected: a reason, the tenant refused, an example value for the message. */
export interface ItemRejection {
  readonly reason: RejectReason;
  readonly tenant?: string | undefined;
  readonly example?: string | undefined;
}

/** The truncations of a batch, per limit (read by the ingest pipeline for its metrics). */
export interface Truncations {
  readonly truncated: ReadonlyMap<TruncateReason, number>;
}

/** Whether a batch's rejections also carry truncations (every converter's do). */
export const hasTruncations = (r: Rejections): r is Rejections & Truncations => r instanceof ItemTally;

/** Everything an ItemTally counted, as plain data: what a conversion worker sends back (gateway/convert/worker/). */
export interface TallyState {
  readonly retention: string;
  readonly count: number;
  readonly byReason: readonly (readonly [RejectReason, number])[];
  readonly examples: readonly (readonly [RejectReason, string])[];
  readonly deniedTenants: readonly string[];
  readonly truncated: readonly (readonly [TruncateReason, number])[];
}

export class ItemTally implements Rejections, Truncations {
  readonly #limits: ItemLimits;
  readonly #retention: string;
  #count = 0;
  readonly #byReason = new Map<RejectReason, number>();
  readonly #examples = new Map<RejectReason, string>();
  readonly #deniedTenants = new Set<string>();
  readonly #truncated = new Map<TruncateReason, number>();
  readonly #pending = new Map<TruncateReason, number>();

  /** `retention` describes the signal's retention for messages ("traces retention of 30 days (…)"). */
  constructor(limits: ItemLimits, retention: string) {
    this.#limits = limits;
    this.#retention = retention;
  }

  /** The tally of `state` (taken in a worker) under the same `limits`: it answers exactly as the worker's did. */
  static restore(limits: ItemLimits, state: TallyState): ItemTally {
    const tally = new ItemTally(limits, state.retention);
    tally.#count = state.count;
    for (const [reason, n] of state.byReason) tally.#byReason.set(reason, n);
    for (const [reason, example] of state.examples) tally.#examples.set(reason, example);
    for (const tenant of state.deniedTenants) tally.#deniedTenants.add(tenant);
    for (const [reason, n] of state.truncated) tally.#truncated.set(reason, n);
    return tally;
  }

  /** What this tally counted, as plain data (pending truncations belong to no kept row and are left out). */
  get state(): TallyState {
    return {
      retention: this.#retention,
      count: this.#count,
      byReason: [...this.#byReason],
      examples: [...this.#examples],
      deniedTenants: [...this.#deniedTenants],
      truncated: [...this.#truncated],
    };
  }

  /** Rejects items (a refused tenant's resolution is a rejection); the first example of a reason is quoted in the message. */
  add(rejection: ItemRejection, items = 1): void {
    const { reason, tenant, example } = rejection;
    this.#count += items;
    this.#byReason.set(reason, (this.#byReason.get(reason) ?? 0) + items);
    if (tenant !== undefined && this.#deniedTenants.size < 10) this.#deniedTenants.add(tenant);
    if (example !== undefined && !this.#examples.has(reason)) this.#examples.set(reason, example);
  }

  /** Whether the message already has an example of `reason`. */
  hasExample(reason: RejectReason): boolean {
    return this.#examples.has(reason);
  }

  /** Records `n` truncations of the part or row being written (see keep and discard). */
  truncate(reason: TruncateReason, n: number): void {
    this.#pending.set(reason, (this.#pending.get(reason) ?? 0) + n);
  }

  /** The part or row just written is kept: its truncations count. */
  keep(): void {
    if (this.#pending.size === 0) return; // the usual case, once per row
    for (const [reason, n] of this.#pending) this.#truncated.set(reason, (this.#truncated.get(reason) ?? 0) + n);
    this.#pending.clear();
  }

  /** The row just written was cut off again: its truncations do not count. */
  discard(): void {
    if (this.#pending.size !== 0) this.#pending.clear();
  }

  get count(): number {
    return this.#count;
  }

  get byReason(): ReadonlyMap<RejectReason, number> {
    return this.#byReason;
  }

  get truncated(): ReadonlyMap<TruncateReason, number> {
    return this.#truncated;
  }

  #reasonText(reason: RejectReason): string {
    const l = this.#limits;
    switch (reason) {
      case 'timestamp_too_old':
        return `timestamp older than the ${this.#retention}`;
      case 'timestamp_too_new':
        return `timestamp more than ${l.maxFutureSkewMs / 1000} s in the future (TENANTRY_MAX_FUTURE_SKEW_SECONDS)`;
      case 'value_too_deep':
        return `attribute value or body nested deeper than ${l.maxValueDepth} levels (TENANTRY_MAX_VALUE_DEPTH)`;
      case 'request_too_expansive':
        return `the request's rows would outgrow ${l.maxRequestExpansion}× its size (TENANTRY_MAX_REQUEST_EXPANSION): resource and scope attributes are copied into every item, send fewer items per request`;
      case 'enum_out_of_range':
        return 'an enum value the OTLP definition does not have';
      case 'bound_not_finite':
        return 'a histogram bound that is NaN or infinite';
      default:
        return tenantReasonText[reason];
    }
  }

  #truncationText(reason: TruncateReason, n: number): string {
    const l = this.#limits;
    switch (reason) {
      case 'attribute_count':
        return `${n} attributes beyond ${l.maxAttributes} per list dropped (TENANTRY_MAX_ATTRIBUTES)`;
      case 'attribute_key_bytes':
        return `${n} attribute keys to ${l.maxAttributeKeyBytes} bytes (TENANTRY_MAX_ATTRIBUTE_KEY_BYTES)`;
      case 'attribute_value_bytes':
        return `${n} attribute values to ${l.maxAttributeValueBytes} bytes (TENANTRY_MAX_ATTRIBUTE_VALUE_BYTES)`;
      case 'log_body_bytes':
        return `${n} log bodies to ${l.maxLogBodyBytes} bytes (TENANTRY_MAX_LOG_BODY_BYTES)`;
      case 'span_name_bytes':
        return `${n} span names to ${l.maxSpanNameBytes} bytes (TENANTRY_MAX_SPAN_NAME_BYTES)`;
      case 'span_events':
        return `${n} events beyond ${l.maxSpanEvents} per span dropped (TENANTRY_MAX_SPAN_EVENTS)`;
      case 'span_links':
        return `${n} links beyond ${l.maxSpanLinks} per span dropped (TENANTRY_MAX_SPAN_LINKS)`;
    }
  }

  /**
   * The partial-success message naming `noun` (e.g. "spans"), '' when nothing was
   * rejected or truncated; truncations alone make a warning (OTLP allows an
   * error_message with nothing rejected).
   */
  message(noun: string): string {
    const truncations = truncateReasons.flatMap((reason) => {
      const n = this.#truncated.get(reason);
      return n === undefined ? [] : [this.#truncationText(reason, n)];
    });
    const truncated = truncations.length === 0 ? '' : `truncated: ${truncations.join(', ')}`;
    if (this.#count === 0) return truncated;
    const parts = [...this.#byReason].map(([reason, n]) => {
      const tenants = reason === 'tenant_not_allowed' ? ` ${[...this.#deniedTenants].map((t) => JSON.stringify(t)).join(', ')}` : '';
      const example = this.#examples.get(reason);
      return `${n} ${this.#reasonText(reason)}${tenants}${example === undefined ? '' : `, e.g. ${example}`}`;
    });
    return `${this.#count} ${noun} rejected: ${parts.join('; ')}${truncated === '' ? '' : `; ${truncated}`}`;
  }
}
