// OTLP/JSON ExportLogsServiceRequest → RowBinary rows of the logs table
// (schema v1), in the order of rowColumns.logs, read straight from the
// parsed JSON (common/otlp-json.ts); logs/protobuf.ts writes the same rows.
// Severity comes from the severity number, or from the severity text when
// the number is 0; the timestamp falls back to the observed timestamp when
// unset (OTLP says 0 means unknown), and an unset observed timestamp is the
// time the request was received (Tenantry observed it then); log_id is
// log.record.uid when present.
import { fail } from '../../../src/result.ts';
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import { RowWriter } from '../../rowbinary/row-writer.ts';
import { enumRejection } from '../common/field-checks.ts';
import { RequestLimits } from '../common/item-limits.ts';
import type { ItemLimits } from '../common/item-limits.ts';
import type { TenantSettingsView } from '../../../src/tenant/settings/tenant-settings.ts';
import { resourcePart, scopePart, tenantOf, writeAnyValue, writeAttributeValue, writeAttributes } from '../common/json-attributes.ts';
import { SeverityNumber } from '../common/otlp-enums.ts';
import { enumValue, fixed64, hexId, messageField, messageList, readOtlpJson, text, uint32 } from '../common/otlp-json.ts';
import type { Json } from '../common/otlp-json.ts';
import { clampInt, nanosOfMillis, writeNanos } from '../common/otlp-values.ts';
import type { RowConverter } from '../common/row-converter.ts';
import type { TenantResolver } from '../common/tenant-resolver.ts';
import type { Int64 } from '../../wire/otlp-messages.ts';
import type { LogIdGenerator } from './log-id.ts';
import { severityNumber } from './severity.ts';

const v1 = '.opentelemetry.proto.logs.v1.';
const names = {
  resourceLogs: '.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest.resourceLogs',
  resource: `${v1}ResourceLogs.resource`,
  scopeLogs: `${v1}ResourceLogs.scopeLogs`,
  scope: `${v1}ScopeLogs.scope`,
  logRecords: `${v1}ScopeLogs.logRecords`,
  body: `${v1}LogRecord.body`,
  attributes: `${v1}LogRecord.attributes`,
} as const;

const isSet = (t: Int64): boolean => t.low !== 0 || t.high !== 0;

/** A record's timestamp and observed timestamp: unset (0) ones fall back to the observed time, and that to `received`. */
function recordTimes(record: Json, received: Int64): { readonly time: Int64; readonly observed: Int64 } {
  const given = fixed64(record['observedTimeUnixNano']);
  const observed = isSet(given) ? given : received;
  const time = fixed64(record['timeUnixNano']);
  return { time: isSet(time) ? time : observed, observed };
}

/**
 * The columns of one record after tenant_id, with its resource's and scope's
 * columns rendered; `logId` draws an id for a record without log.record.uid.
 * A record's body is at depth 4 (request, ResourceLogs, ScopeLogs, LogRecord, AnyValue), so are its KeyValues.
 */
function writeRecord(
  w: RowWriter,
  record: Json,
  { time, observed }: { readonly time: Int64; readonly observed: Int64 },
  resource: Buffer,
  scope: Buffer,
  logId: () => string,
  limits: RequestLimits,
): void {
  writeNanos(w, time);
  writeNanos(w, observed);
  if (!writeAttributeValue(w, record['attributes'], 'log.record.uid', 4, limits)) w.text(logId());
  w.text(hexId(record['traceId'], 'traceId'));
  w.text(hexId(record['spanId'], 'spanId'));
  w.u8(clampInt(uint32(record['flags']), 0, 0xffffffff) & 0xff);
  w.u8(severityNumber(enumValue(record['severityNumber'], SeverityNumber), text(record['severityText'])));
  w.text(text(record['severityText']));
  w.text(text(record['eventName']));
  const body = messageField(record['body'], names.body);
  if (body === undefined) w.empty();
  else writeAnyValue(w, body, 4, limits, limits.limits.maxLogBodyBytes, 'log_body_bytes');
  w.bytes(resource);
  w.bytes(scope);
  const dropped = writeAttributes(w, record['attributes'], names.attributes, 4, limits);
  // What a limit dropped is added to what the sender dropped.
  w.u32(clampInt(uint32(record['droppedAttributesCount']) + dropped, 0, 0xffffffff));
}

/**
 * Converts the log records of a parsed request. A rejected record is written
 * too (a bad field refuses the whole request, as before), without drawing a
 * log id, and then cut off again.
 */
function logRows(root: Json, resolver: TenantResolver, ids: LogIdGenerator, nowMs: number, limits: RequestLimits): RowBatch {
  const w = new RowWriter();
  let rowCount = 0;
  const nextId = (): string => ids.next(nowMs);
  const noId = (): string => '';
  const received = nanosOfMillis(nowMs);
  for (const rl of messageList(root['resourceLogs'], names.resourceLogs)) {
    const resource = resourcePart(rl['resource'], rl['schemaUrl'], names.resource, limits);
    for (const sl of messageList(rl['scopeLogs'], names.scopeLogs)) {
      const scope = scopePart(sl['scope'], names.scope, true, sl['schemaUrl'], limits);
      for (const record of messageList(sl['logRecords'], names.logRecords)) {
        const tenant = resolver.authorize(resource.tenant ?? tenantOf(record['attributes'], 4) ?? fail({ reason: 'missing_tenant' }));
        const times = recordTimes(record, received);
        const severity = enumRejection('severity number', enumValue(record['severityNumber'], SeverityNumber));
        const rejection = tenant.ok
          ? limits.rejectionBefore(tenant.value, times.time.low >>> 0, times.time.high >>> 0, w.pos, resource.tooDeep || scope.tooDeep, severity)
          : tenant.error;
        const rowStart = limits.beginRow(w);
        w.text(tenant.ok ? tenant.value : '');
        writeRecord(w, record, times, resource.bytes, scope.bytes, rejection === undefined ? nextId : noId, limits);
        if (limits.endRow(w, rowStart, rejection)) rowCount++;
      }
    }
  }
  return { table: 'logs', rows: w.rows(), rowCount, rejected: limits.tally };
}

/** OTLP/JSON logs under `limits`; records without log.record.uid get an id from `ids` at `now()`. */
export function logsFromJson(ids: LogIdGenerator, now: () => number, limits: ItemLimits, settings?: TenantSettingsView): RowConverter {
  return {
    convert(body, tenants) {
      const nowMs = now();
      const request = readOtlpJson(body, (root) => logRows(root, tenants, ids, nowMs, new RequestLimits(limits, 'logs', nowMs, body.length, settings)));
      return request;
    },
  };
}
