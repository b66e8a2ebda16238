// Log records → RowBinary rows of the logs table (schema v1), in the order
// of rowColumns.logs. Severity comes from the
// severity number, or from the severity text when the number is 0; the
// timestamp falls back to the observed timestamp when unset (OTLP says 0
// means unknown); log_id is log.record.uid when present.
import { RowWriter } from '../direct/row-writer.ts';
import type { ResourceLogs } from '../wire/otlp-messages.ts';
import type { LogIdGenerator } from './log-id.ts';
import { anyValueText, attributeText, clampInt, nanosNumber, resourceScopeColumns, writeAttributes, writeHex, writeNanos } from './otlp-values.ts';
import type { RowBatch } from './row-batch.ts';
import { RejectionTally, tenantOf } from './tenant-resolver.ts';
import type { TenantResolver } from './tenant-resolver.ts';

const severityByText: readonly (readonly [string, number])[] = [
  ['TRACE', 1], ['DEBUG', 5], ['INFO', 9], ['NOTICE', 10], ['WARN', 13], ['ERR', 17], ['CRIT', 18], ['ALERT', 19], ['EMERG', 21], ['FATAL', 21], ['PANIC', 21],
];

/** The OTLP severity number for a record: its own, or one derived from its text (syslog/log4j names too). */
export function severityNumber(number: number | null | undefined, text: string | null | undefined): number {
  const n = clampInt(number, 0, 255);
  if (n !== 0 || text === null || text === undefined || text === '') return n;
  const upper = text.trim().toUpperCase();
  for (const [prefix, value] of severityByText) if (upper.startsWith(prefix)) return value;
  return 0;
}

/** Converts the log records of a request. */
export function logRows(resourceLogs: readonly ResourceLogs[], resolver: TenantResolver, ids: LogIdGenerator, nowMs: number): RowBatch {
  const rejected = new RejectionTally();
  const w = new RowWriter();
  let rowCount = 0;
  for (const rl of resourceLogs) {
    const resourceAttributes = rl.resource?.attributes;
    const resourceTenant = tenantOf(resourceAttributes);
    for (const sl of rl.scopeLogs ?? []) {
      const sharedPart = resourceScopeColumns(resourceAttributes, rl.schemaUrl, sl.scope, sl.schemaUrl ?? '');
      for (const record of sl.logRecords ?? []) {
        const tenant = resolver.resolve(resourceTenant, record.attributes);
        if (!tenant.ok) {
          rejected.add(tenant);
          continue;
        }
        const observed = record.observedTimeUnixNano;
        const timestamp = nanosNumber(record.timeUnixNano) !== 0 ? record.timeUnixNano : observed;
        w.text(tenant.tenant);
        writeNanos(w, timestamp);
        writeNanos(w, observed);
        w.text(attributeText(record.attributes, 'log.record.uid') ?? ids.next(nowMs));
        writeHex(w, record.traceId);
        writeHex(w, record.spanId);
        w.u8(clampInt(record.flags, 0, 0xffffffff) & 0xff);
        w.u8(severityNumber(record.severityNumber, record.severityText));
        w.text(record.severityText ?? '');
        w.text(record.eventName ?? '');
        w.text(anyValueText(record.body));
        w.bytes(sharedPart);
        writeAttributes(w, record.attributes);
        w.u32(clampInt(record.droppedAttributesCount, 0, 0xffffffff));
        rowCount++;
      }
    }
  }
  return { table: 'logs', rows: w.rows(), rowCount, rejected };
}
