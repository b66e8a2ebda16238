// Log records → rows of the logs table (schema v1). Severity comes from the
// severity number, or from the severity text when the number is 0; the
// timestamp falls back to the observed timestamp when unset (OTLP says 0
// means unknown); log_id is log.record.uid when present.
import type { ResourceLogs } from '../wire/otlp-messages.ts';
import type { LogIdGenerator } from './log-id.ts';
import { anyValueText, attributeText, attributesJson, clampInt, hexText, nanosNumber, nanosText, str } from './otlp-values.ts';
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
  let rows = '';
  let rowCount = 0;
  for (const rl of resourceLogs) {
    const resourceAttributes = rl.resource?.attributes;
    const resourceTenant = tenantOf(resourceAttributes);
    const resourcePart = `,"service_name":${str(attributeText(resourceAttributes, 'service.name'))}` +
      `,"resource_schema_url":${str(rl.schemaUrl)},"resource_attributes":${attributesJson(resourceAttributes)}`;
    for (const sl of rl.scopeLogs ?? []) {
      const scopePart = `,"scope_name":${str(sl.scope?.name)},"scope_version":${str(sl.scope?.version)}` +
        `,"scope_schema_url":${str(sl.schemaUrl)},"scope_attributes":${attributesJson(sl.scope?.attributes)}`;
      for (const record of sl.logRecords ?? []) {
        const tenant = resolver.resolve(resourceTenant, record.attributes);
        if (!tenant.ok) {
          rejected.add(tenant);
          continue;
        }
        const observed = record.observedTimeUnixNano;
        const timestamp = nanosNumber(record.timeUnixNano) !== 0 ? record.timeUnixNano : observed;
        const logId = attributeText(record.attributes, 'log.record.uid') ?? ids.next(nowMs);
        rows += `{"tenant_id":${str(tenant.tenant)},"timestamp":${nanosText(timestamp)},"observed_timestamp":${nanosText(observed)}` +
          `,"log_id":${str(logId)},"trace_id":${str(hexText(record.traceId))},"span_id":${str(hexText(record.spanId))}` +
          `,"trace_flags":${clampInt(record.flags, 0, 0xffffffff) & 0xff}` +
          `,"severity_number":${severityNumber(record.severityNumber, record.severityText)},"severity_text":${str(record.severityText)}` +
          `,"event_name":${str(record.eventName)},"body":${str(anyValueText(record.body))}` +
          resourcePart + scopePart + `,"log_attributes":${attributesJson(record.attributes)}` +
          `,"dropped_attributes_count":${clampInt(record.droppedAttributesCount, 0, 0xffffffff)}}\n`;
        rowCount++;
      }
    }
  }
  return { table: 'logs', rows, rowCount, rejected };
}
