// Per-item limits (docs/gateway.md, "Limits"), applied while a request is
// converted, before anything is acknowledged: a row ClickHouse would store
// badly, or that would make one request cost far more than its size, never
// reaches the write-ahead log. Sizes over a limit are truncated (like
// Tempo's max_attribute_bytes and the OTel SDKs' attribute limits) and
// counted; what cannot be stored meaningfully is rejected per item through
// partial success: a timestamp outside [now − retention, now + skew] (the
// retention of the item's tenant for the signal, from the tenant settings,
// or the process default without them), a value nested too deep, and the
// items of a request whose rows outgrow it.
import type { SignalName } from '../../wire/otlp-messages.ts';
import type { ItemLimitsConfig } from '../../../src/config/config.ts';
import { retentionDaysOf } from '../../../src/tenant/settings/tenant-settings.ts';
import type { TenantSettingsView } from '../../../src/tenant/settings/tenant-settings.ts';
import type { RowWriter } from '../../rowbinary/row-writer.ts';
import { ItemTally } from './item-tally.ts';
import type { ItemRejection } from './item-tally.ts';

/** The limits of every request: the decoded TENANTRY_* settings. */
export type ItemLimits = ItemLimitsConfig;

/** The defaults of the TENANTRY_* settings (a unit test holds them to src/config/variables.ts). */
export const defaultItemLimits: ItemLimits = {
  maxAttributes: 128,
  maxAttributeKeyBytes: 1024,
  maxAttributeValueBytes: 16 * 1024,
  maxLogBodyBytes: 256 * 1024,
  maxSpanNameBytes: 1024,
  maxSpanEvents: 128,
  maxSpanLinks: 128,
  maxValueDepth: 16,
  maxFutureSkewMs: 600_000,
  maxRequestExpansion: 16,
  retention: { logsDays: 30, tracesDays: 30, metricsDays: 90 },
};

/** A request may always render this many bytes of rows, whatever its size. */
export const minRowBudgetBytes = 32 * 1024 * 1024;

const tooDeep: ItemRejection = { reason: 'value_too_deep' };
const tooOld: ItemRejection = { reason: 'timestamp_too_old' };
const tooNew: ItemRejection = { reason: 'timestamp_too_new' };
const tooExpansive: ItemRejection = { reason: 'request_too_expansive' };
const dayMs = 86_400_000;
const twoTo32 = 4_294_967_296;

const retentionOf: Readonly<Record<SignalName, { readonly days: (l: ItemLimits) => number; readonly variable: string; readonly field: string }>> = {
  traces: { days: (l) => l.retention.tracesDays, variable: 'TENANTRY_TRACES_RETENTION_DAYS', field: 'retention.tracesDays' },
  logs: { days: (l) => l.retention.logsDays, variable: 'TENANTRY_LOGS_RETENTION_DAYS', field: 'retention.logsDays' },
  metrics: { days: (l) => l.retention.metricsDays, variable: 'TENANTRY_METRICS_RETENTION_DAYS', field: 'retention.metricsDays' },
};

/**
 * The oldest timestamp (Unix ns, as a double) a tenant's items of a signal
 * may carry: now − the tenant's effective retention. Asked once per tenant
 * and request (RequestLimits keeps the answer).
 */
export function tenantOldestNs(settings: TenantSettingsView, signal: SignalName, tenant: string, nowMs: number): number {
  return (nowMs - retentionDaysOf(settings.effective(tenant), signal) * dayMs) * 1e6;
}

/**
 * The end of the longest prefix of buf[start, end) of at most `max` bytes
 * that does not split a UTF-8 sequence (a cut never lands on a continuation
 * byte; at most three are given back).
 */
export function utf8Cut(buf: Buffer, start: number, end: number, max: number): number {
  if (end - start <= max) return end;
  let cut = start + max;
  for (let i = 0; i < 3 && cut > start && ((buf[cut] ?? 0) & 0xc0) === 0x80; i++) cut--;
  return cut;
}

/** Unix nanoseconds as an ISO date when representable, else as the number itself. */
function describeNanos(ns: number): string {
  const ms = Math.floor(ns / 1e6);
  return Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : `${ns} ns`;
}

/**
 * The limits as they apply to one request: its time window (fixed when it
 * arrives), its row budget, a flag set when a value nests too deep, and the
 * tally of what was rejected and truncated.
 */
export class RequestLimits {
  readonly limits: ItemLimits;
  readonly tally: ItemTally;
  /** Bytes of rows the request may render: its decoded size × maxRequestExpansion, at least minRowBudgetBytes. */
  readonly rowBudget: number;
  /** Set by the writers when a value nests deeper than maxValueDepth; the converter resets it per part and row. */
  tooDeep = false;
  readonly #signal: SignalName;
  readonly #nowMs: number;
  readonly #settings: TenantSettingsView | undefined;
  readonly #newestNs: number;
  /** The oldest time allowed for the last tenant asked about (a request usually has one), and for the others. */
  #lastTenant: string | undefined;
  #lastOldestNs: number;
  readonly #oldestNs = new Map<string, number>();

  /** Without `settings` every tenant has the process's retention (`limits.retention`); with them, its own. */
  constructor(limits: ItemLimits, signal: SignalName, nowMs: number, bodyBytes: number, settings?: TenantSettingsView) {
    this.limits = limits;
    const retention = retentionOf[signal];
    const days = retention.days(limits);
    this.tally = new ItemTally(
      limits,
      settings === undefined ? `${signal} retention of ${days} days (${retention.variable})` : `${signal} retention of its tenant (${retention.field})`,
    );
    this.rowBudget = Math.max(minRowBudgetBytes, bodyBytes * limits.maxRequestExpansion);
    this.#signal = signal;
    this.#nowMs = nowMs;
    this.#settings = settings;
    this.#lastTenant = settings === undefined ? undefined : '';
    this.#lastOldestNs = (nowMs - days * dayMs) * 1e6;
    this.#newestNs = (nowMs + limits.maxFutureSkewMs) * 1e6;
  }

  /** A throwaway copy with its own tally, for parts that are checked but not stored. */
  scratch(signal: SignalName, nowMs: number): RequestLimits {
    return new RequestLimits(this.limits, signal, nowMs, 0, this.#settings);
  }

  /** The oldest timestamp (Unix ns) allowed for the tenant's items in this request. */
  #oldestFor(tenant: string): number {
    if (this.#settings === undefined || tenant === this.#lastTenant) return this.#lastOldestNs;
    let oldest = this.#oldestNs.get(tenant);
    if (oldest === undefined) {
      oldest = tenantOldestNs(this.#settings, this.#signal, tenant, this.#nowMs);
      this.#oldestNs.set(tenant, oldest);
    }
    this.#lastTenant = tenant;
    this.#lastOldestNs = oldest;
    return oldest;
  }

  /**
   * Why an item whose tenant was accepted must be rejected before its row is
   * written, checked in the same order by every converter (after the tenant):
   * its `timestamp` column (Unix ns as unsigned 32-bit halves) outside
   * [now − the tenant's retention, now + skew], the request's row budget spent
   * (`renderedBytes` kept so far), a value of its resource or scope nested
   * too deep, a field the converter found invalid (`invalid`: an enum out of
   * range, a bound not finite; see field-checks.ts). Tallies nothing.
   */
  rejectionBefore(tenant: string, lo: number, hi: number, renderedBytes: number, partTooDeep: boolean, invalid?: ItemRejection): ItemRejection | undefined {
    // A value of 2^63 ns or more is clamped to the largest DateTime64: far in the future.
    const ns = hi >= 0x80000000 ? Infinity : hi * twoTo32 + lo;
    // Only the first rejection of a reason needs its example: the message quotes one.
    if (ns < this.#oldestFor(tenant))
      return this.tally.hasExample('timestamp_too_old') ? tooOld : { reason: 'timestamp_too_old', example: this.#tooOldExample(tenant, ns) };
    if (ns > this.#newestNs) {
      return this.tally.hasExample('timestamp_too_new')
        ? tooNew
        : { reason: 'timestamp_too_new', example: hi >= 0x80000000 ? 'a time after 2262' : describeNanos(ns) };
    }
    if (renderedBytes > this.rowBudget) return tooExpansive;
    if (partTooDeep) return tooDeep;
    return invalid;
  }

  /** The first too-old item's time, and with per-tenant retention whose and how many days. */
  #tooOldExample(tenant: string, ns: number): string {
    if (this.#settings === undefined) return describeNanos(ns);
    const days = Math.round((this.#nowMs - this.#oldestFor(tenant) / 1e6) / dayMs);
    return `${describeNanos(ns)} for tenant ${JSON.stringify(tenant)} (${days} days)`;
  }

  /** Starts writing an item's row: returns where it starts, for endRow. */
  beginRow(w: RowWriter): number {
    this.tooDeep = false;
    return w.pos;
  }

  /**
   * Ends an item's row: keeps it (and the truncations made writing it), or,
   * when rejected before (`rejection`) or a value nested too deep, cuts it off
   * again and tallies why. Returns whether the row was kept.
   */
  endRow(w: RowWriter, rowStart: number, rejection: ItemRejection | undefined): boolean {
    const why = rejection ?? (this.tooDeep ? tooDeep : undefined);
    if (why === undefined) {
      this.tally.keep();
      return true;
    }
    w.pos = rowStart;
    this.tally.discard();
    this.tally.add(why);
    return false;
  }

  /** Rejects an item whose row is not written at all. */
  reject(rejection: ItemRejection): void {
    this.tally.add(rejection);
  }

  /** Writes buf[start, end) as a String of at most `max` bytes. */
  writeSlice(w: RowWriter, buf: Buffer, start: number, end: number, max: number, reason: TruncateReason): void {
    if (end - start <= max) {
      // the usual case, for every key and value
      w.string(buf, start, end);
      return;
    }
    const cut = utf8Cut(buf, start, end, max);
    if (cut < end) this.tally.truncate(reason, 1);
    w.string(buf, start, cut);
  }

  /** Writes a JS string as a UTF-8 String of at most `max` bytes. */
  writeText(w: RowWriter, s: string, max: number, reason: TruncateReason): void {
    if (s.length * 3 <= max) {
      // a UTF-16 unit is at most 3 UTF-8 bytes
      w.text(s);
      return;
    }
    const bytes = Buffer.from(s, 'utf8');
    this.writeSlice(w, bytes, 0, bytes.length, max, reason);
  }

  /** Writes buf[start, end) as base64 text of at most `max` bytes, encoding no more than it keeps. */
  writeBase64(w: RowWriter, buf: Buffer, start: number, end: number, max: number, reason: TruncateReason): void {
    if (Math.ceil((end - start) / 3) * 4 <= max) {
      w.text(buf.toString('base64', start, end));
      return;
    }
    const prefix = Math.min(end - start, Math.floor(max / 4) * 3 + 3);
    this.tally.truncate(reason, 1);
    w.text(buf.toString('base64', start, start + prefix).slice(0, max));
  }

  /** How many of `count` repeated elements to keep under `max`; tallies the rest as dropped. */
  keep(count: number, max: number, reason: TruncateReason): number {
    if (count <= max) return count;
    this.tally.truncate(reason, count - max);
    return max;
  }
}

export type TruncateReason =
  'attribute_count' | 'attribute_key_bytes' | 'attribute_value_bytes' | 'log_body_bytes' | 'span_name_bytes' | 'span_events' | 'span_links';
