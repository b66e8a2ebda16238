// OTLP/JSON ExportLogsServiceRequest → RowBinary rows of the logs table
// (schema v1), in the order of rowColumns.logs, read straight from the
// parsed JSON (common/otlp-json.ts); logs/protobuf.ts writes the same rows.
// Severity comes from the severity number, or from the severity text when
// the number is 0; the timestamp falls back to the observed timestamp when
// unset (OTLP says 0 means unknown); log_id is log.record.uid when present.
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import { RowWriter } from '../../rowbinary/row-writer.ts';
import { anyValueText, attributeText, resourcePart, scopePart, tenantOf, writeAttributes } from '../common/json-attributes.ts';
import { SeverityNumber } from '../common/otlp-enums.ts';
import { enumValue, fixed64, hexId, messageField, messageList, readOtlpJson, text, uint32 } from '../common/otlp-json.ts';
import type { Json } from '../common/otlp-json.ts';
import { clampInt, writeNanos } from '../common/otlp-values.ts';
import type { RowConverter } from '../common/row-converter.ts';
import { RejectionTally } from '../common/tenant-resolver.ts';
import type { TenantResolver } from '../common/tenant-resolver.ts';
import type { LogIdGenerator } from './log-id.ts';
import { severityNumber } from './severity.ts';

const v1 = '.opentelemetry.proto.logs.v1.';
const names = {
  resourceLogs: '.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest.resourceLogs', resource: `${v1}ResourceLogs.resource`,
  scopeLogs: `${v1}ResourceLogs.scopeLogs`, scope: `${v1}ScopeLogs.scope`, logRecords: `${v1}ScopeLogs.logRecords`,
  body: `${v1}LogRecord.body`, attributes: `${v1}LogRecord.attributes`,
} as const;

/**
 * The columns of one record after tenant_id, with its resource's and scope's
 * columns rendered; `logId` draws an id for a record without log.record.uid.
 * A record's body is at depth 4 (request, ResourceLogs, ScopeLogs, LogRecord, AnyValue), so are its KeyValues.
 */
function writeRecord(w: RowWriter, record: Json, resource: Buffer, scope: Buffer, logId: () => string): void {
  const observed = fixed64(record['observedTimeUnixNano']);
  const time = fixed64(record['timeUnixNano']);
  writeNanos(w, time.low !== 0 || time.high !== 0 ? time : observed);
  writeNanos(w, observed);
  w.text(attributeText(record['attributes'], 'log.record.uid', 4) ?? logId());
  w.text(hexId(record['traceId'], 'traceId'));
  w.text(hexId(record['spanId'], 'spanId'));
  w.u8(clampInt(uint32(record['flags']), 0, 0xffffffff) & 0xff);
  w.u8(severityNumber(enumValue(record['severityNumber'], SeverityNumber), text(record['severityText'])));
  w.text(text(record['severityText']));
  w.text(text(record['eventName']));
  const body = messageField(record['body'], names.body);
  w.text(body === undefined ? '' : anyValueText(body, 4));
  w.bytes(resource);
  w.bytes(scope);
  writeAttributes(w, record['attributes'], names.attributes, 4);
  w.u32(clampInt(uint32(record['droppedAttributesCount']), 0, 0xffffffff));
}

/**
 * Converts the log records of a parsed request. A rejected record is written
 * too (a bad field refuses the whole request, as before), without drawing a
 * log id, and then cut off again.
 */
function logRows(root: Json, resolver: TenantResolver, ids: LogIdGenerator, nowMs: number): RowBatch {
  const rejected = new RejectionTally();
  const w = new RowWriter();
  let rowCount = 0;
  const nextId = (): string => ids.next(nowMs);
  const noId = (): string => '';
  for (const rl of messageList(root['resourceLogs'], names.resourceLogs)) {
    const resource = resourcePart(rl['resource'], rl['schemaUrl'], names.resource);
    for (const sl of messageList(rl['scopeLogs'], names.scopeLogs)) {
      const scope = scopePart(sl['scope'], names.scope, true, sl['schemaUrl']);
      for (const record of messageList(sl['logRecords'], names.logRecords)) {
        const tenant = resolver.authorize(resource.tenant ?? tenantOf(record['attributes'], 4) ?? { ok: false, reason: 'missing_tenant' });
        const rowStart = w.pos;
        w.text(tenant.ok ? tenant.tenant : '');
        writeRecord(w, record, resource.bytes, scope, tenant.ok ? nextId : noId);
        if (tenant.ok) {
          rowCount++;
        } else {
          rejected.add(tenant);
          w.pos = rowStart;
        }
      }
    }
  }
  return { table: 'logs', rows: w.rows(), rowCount, rejected };
}

/** OTLP/JSON logs; records without log.record.uid get an id from `ids` at `now()`. */
export function logsFromJson(ids: LogIdGenerator, now: () => number): RowConverter {
  return {
    convert(body, tenants) {
      const request = readOtlpJson(body, (root) => logRows(root, tenants, ids, now()));
      return request.ok ? { ok: true, batch: request.value } : request;
    },
  };
}
