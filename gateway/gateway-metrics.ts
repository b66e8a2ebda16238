// The gateway's Prometheus metrics, registered on the process registry.
// /metrics may be read by whoever reaches the port (TENANTRY_METRICS_KEY
// unset), so tenant ids appear in it only when the deployment opts in
// (TENANTRY_METRICS_TENANT_LABELS), and then only ids that earned a label by
// accepted volume: a key sending items for tenants it may not write (or
// rejected items of any kind) cannot plant names there.
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { TenantShare } from './limits/tenant-shares.ts';
import { allTenants, noTenant, TenantLabels } from './tenant-labels.ts';
import type { InsertStats } from './writer/block-inserter.ts';
import type { WriterObserver } from './writer/logged-writer.ts';

/** The writer's observer also needs somewhere to send health changes (readiness, logs). */
export type HealthSink = WriterObserver['health'];

/** Where a throttled request was refused: before its body was read (a key bound to one tenant), or once decoded. */
export type ThrottleStage = 'before_body' | 'after_decode';

/** Per-tenant counters, under a bounded tenant label (tenant-labels.ts). */
export interface TenantMetrics {
  /** Counts one request's items and bytes per tenant, accepted and rejected by reason. */
  record(signal: string, shares: readonly TenantShare[]): void;
  /** Counts a request refused with 429 / RESOURCE_EXHAUSTED because its tenants are over their ingest limits. */
  throttled(tenant: string, protocol: 'http' | 'grpc', signal: string, stage: ThrottleStage): void;
}

export interface GatewayMetrics {
  readonly tenants: TenantMetrics;
  readonly acceptedItems: Counter<'signal'>;
  readonly rejectedItems: Counter<'signal' | 'reason'>;
  readonly truncations: Counter<'signal' | 'reason'>;
  readonly requests: Counter<'protocol' | 'signal' | 'status'>;
  readonly requestSeconds: Histogram<'protocol' | 'signal'>;
  readonly writer: WriterObserver;
  /** Where the write-ahead-log gauge reads its bytes from, at scrape time. */
  logBytesFrom(read: () => number): void;
}

/** `tenantLabels`: per-tenant series under the tenants' ids (TENANTRY_METRICS_TENANT_LABELS); false: all under tenant="__all__". */
export function gatewayMetrics(registry: Registry, health: HealthSink, tenantLabels = false): GatewayMetrics {
  const registers = [registry];
  const acceptedItems = new Counter({ name: 'tenantry_gateway_accepted_items_total', help: 'Items stored, per signal', labelNames: ['signal'], registers });
  const rejectedItems = new Counter({
    name: 'tenantry_gateway_rejected_items_total',
    help: 'Items rejected through partial success, per signal and reason',
    labelNames: ['signal', 'reason'],
    registers,
  });
  const truncations = new Counter({
    name: 'tenantry_gateway_truncations_total',
    help: 'Values truncated or dropped to fit a per-item limit (attributes, events and links dropped are counted one by one), per signal and limit',
    labelNames: ['signal', 'reason'],
    registers,
  });
  const requests = new Counter({
    name: 'tenantry_gateway_requests_total',
    help: 'Export requests by protocol, signal and answer (HTTP status or gRPC code name)',
    labelNames: ['protocol', 'signal', 'status'],
    registers,
  });
  const requestSeconds = new Histogram({
    name: 'tenantry_gateway_request_duration_seconds',
    help: 'Export request latency, from first byte to answer',
    labelNames: ['protocol', 'signal'],
    registers,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });
  const batchRows = new Histogram({
    name: 'tenantry_gateway_batch_rows',
    help: 'Rows per INSERT',
    labelNames: ['table'],
    registers,
    buckets: [1, 10, 100, 1000, 10_000, 50_000, 100_000, 250_000, 1_000_000],
  });
  const batchBytes = new Histogram({
    name: 'tenantry_gateway_batch_bytes',
    help: 'Bytes per INSERT',
    labelNames: ['table'],
    registers,
    buckets: [1e3, 1e4, 1e5, 1e6, 4e6, 16e6, 64e6],
  });
  const insertSeconds = new Histogram({
    name: 'tenantry_gateway_insert_duration_seconds',
    help: 'INSERT latency',
    labelNames: ['table', 'ok'],
    registers,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  });
  const tenants = tenantMetrics(registers, tenantLabels);
  let readLogBytes = (): number => 0;
  new Gauge({
    name: 'tenantry_gateway_wal_bytes',
    help: 'Bytes acknowledged and held in the write-ahead log, not yet in ClickHouse',
    registers,
    collect() {
      this.set(readLogBytes());
    },
  });
  const admissionSeconds = new Histogram({
    name: 'tenantry_gateway_admission_wait_seconds',
    help: 'Time a request waited to enter the write-ahead log while ClickHouse was behind (0 when it entered at once)',
    labelNames: ['table'],
    registers,
    buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  });
  const appendSeconds = new Histogram({
    name: 'tenantry_gateway_wal_append_duration_seconds',
    help: "Time to write and fsync a request's rows into the write-ahead log (group commit)",
    labelNames: ['table'],
    registers,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  });
  const deadLetters = new Counter({
    name: 'tenantry_gateway_dead_letter_rows_total',
    help: 'Acknowledged rows ClickHouse refused for a reason of their own, kept in the dead-letter folder',
    labelNames: ['table'],
    registers,
  });
  return {
    acceptedItems,
    rejectedItems,
    truncations,
    requests,
    requestSeconds,
    tenants,
    logBytesFrom: (read) => {
      readLogBytes = read;
    },
    writer: {
      inserted: (s: InsertStats) => {
        batchRows.observe({ table: s.table }, s.rows);
        batchBytes.observe({ table: s.table }, s.bytes);
        insertSeconds.observe({ table: s.table, ok: String(s.ok) }, s.seconds);
      },
      deadLettered: (table, rows) => {
        deadLetters.inc({ table }, rows);
      },
      submitted: (table, waitSeconds, appendSeconds_) => {
        admissionSeconds.observe({ table }, waitSeconds);
        appendSeconds.observe({ table }, appendSeconds_);
      },
      health,
    },
  };
}

function tenantMetrics(registers: Registry[], tenantLabels: boolean): TenantMetrics {
  const acceptedItems = new Counter({
    name: 'tenantry_gateway_tenant_accepted_items_total',
    help: 'Items stored, per tenant (with TENANTRY_METRICS_TENANT_LABELS the top tenants by accepted volume, the rest are tenant="__other__"; else tenant="__all__") and signal',
    labelNames: ['tenant', 'signal'],
    registers,
  });
  const acceptedBytes = new Counter({
    name: 'tenantry_gateway_tenant_accepted_bytes_total',
    help: "Decoded OTLP bytes of the items stored (the request's bytes split by its tenants' shares of items), per tenant and signal",
    labelNames: ['tenant', 'signal'],
    registers,
  });
  const rejectedItems = new Counter({
    name: 'tenantry_gateway_tenant_rejected_items_total',
    help: 'Items rejected, per tenant (a tenant\'s own label only once its accepted items earned it; tenant="__none__": no valid tenant id or one the key may not write), signal and reason (rate_limited: over the tenant\'s ingest limit)',
    labelNames: ['tenant', 'signal', 'reason'],
    registers,
  });
  const rejectedBytes = new Counter({
    name: 'tenantry_gateway_tenant_rejected_bytes_total',
    help: 'Decoded OTLP bytes of the items rejected, per tenant, signal and reason',
    labelNames: ['tenant', 'signal', 'reason'],
    registers,
  });
  const throttled = new Counter({
    name: 'tenantry_gateway_throttled_requests_total',
    help: 'Requests answered 429 / RESOURCE_EXHAUSTED because their tenants are over their ingest limits, per tenant, protocol, signal and stage (before_body: refused before the body was read)',
    labelNames: ['tenant', 'protocol', 'signal', 'stage'],
    registers,
  });
  const all = [acceptedItems, acceptedBytes, rejectedItems, rejectedBytes, throttled];
  // A tenant that lost its label loses its series (its counts go on under __other__).
  const labels = new TenantLabels((tenant) => {
    for (const counter of all) {
      void counter.get().then((metric) => {
        for (const v of metric.values) if (v.labels['tenant'] === tenant) counter.remove(v.labels as Record<string, string>);
      });
    }
  });
  // Only accepted items give a tenant a label (and rank it); everything else is counted under the label the tenant already has.
  const accepted = (tenant: string, bytes: number): string => (tenantLabels ? labels.label(tenant, bytes) : allTenants);
  const known = (tenant: string): string => (tenantLabels ? labels.known(tenant) : allTenants);
  return {
    record(signal, shares) {
      for (const share of shares) {
        const tenant = share.accepted.items > 0 ? accepted(share.tenant, share.accepted.bytes) : known(share.tenant);
        if (share.accepted.items > 0) {
          acceptedItems.inc({ tenant, signal }, share.accepted.items);
          acceptedBytes.inc({ tenant, signal }, share.accepted.bytes);
        }
        for (const [reason, r] of share.rejected) {
          // Items for a tenant the key may not write are not that tenant's.
          const label = reason === 'tenant_not_allowed' && tenantLabels ? noTenant : tenant;
          rejectedItems.inc({ tenant: label, signal, reason }, r.items);
          rejectedBytes.inc({ tenant: label, signal, reason }, r.bytes);
        }
      }
    },
    throttled(tenant, protocol, signal, stage) {
      throttled.inc({ tenant: known(tenant), protocol, signal, stage });
    },
  };
}
