// OTLP/JSON ExportLogsServiceRequest → RowBinary rows of the logs table
// (schema v1), in the order of rowColumns.logs, through the generated
// message; logs/protobuf.ts writes the same rows. Severity comes from the
// severity number, or from the severity text when the number is 0; the
// timestamp falls back to the observed timestamp when unset (OTLP says 0
// means unknown); log_id is log.record.uid when present.
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import { RowWriter } from '../../rowbinary/row-writer.ts';
import { ExportLogsServiceRequest } from '../../wire/otlp-messages.ts';
import type { ResourceLogs } from '../../wire/otlp-messages.ts';
import { readOtlpJson } from '../common/otlp-json.ts';
import { anyValueText, attributeText, clampInt, nanosNumber, resourceScopeColumns, writeAttributes, writeHex, writeNanos } from '../common/otlp-values.ts';
import type { RowConverter } from '../common/row-converter.ts';
import { RejectionTally, tenantOf } from '../common/tenant-resolver.ts';
import type { TenantResolver } from '../common/tenant-resolver.ts';
import type { LogIdGenerator } from './log-id.ts';
import { severityNumber } from './severity.ts';

/** Converts the log records of a decoded request. */
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

/** OTLP/JSON logs; records without log.record.uid get an id from `ids` at `now()`. */
export function logsFromJson(ids: LogIdGenerator, now: () => number): RowConverter {
  return {
    convert(body, tenants) {
      const request = readOtlpJson('logs', body, (root) => ExportLogsServiceRequest.fromObject(root));
      return request.ok ? { ok: true, batch: logRows(request.value.resourceLogs, tenants, ids, now()) } : request;
    },
  };
}
