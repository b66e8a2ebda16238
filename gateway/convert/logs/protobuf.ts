// Protobuf ExportLogsServiceRequest → RowBinary rows of the logs table,
// straight from the wire bytes (docs/adr/0002-byte-level-converters.md);
// writes exactly what logs/json.ts writes for the same request in OTLP/JSON
// (held together by a property test).
import { fail } from '../../../src/result.ts';
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import { RangeList, WireReader, WireType, nextDelimited, readWire } from '../../protobuf/wire-reader.ts';
import { ScratchWriter } from '../../rowbinary/row-writer.ts';
import { clampInt, nanosOfMillis, writeNanosParts } from '../common/otlp-values.ts';
import { AnyValueView, Found, Lookup, attributeMapOf, lookupAttributesOf } from '../common/protobuf-attributes.ts';
import { enumRejection } from '../common/field-checks.ts';
import { RequestLimits } from '../common/item-limits.ts';
import type { ItemLimits } from '../common/item-limits.ts';
import type { TenantSettingsView } from '../../../src/tenant/settings/tenant-settings.ts';
import { forEachScope } from '../common/protobuf-resource-scope.ts';
import type { RowConverter } from '../common/row-converter.ts';
import type { Resolution, TenantResolver } from '../common/tenant-resolver.ts';
import type { LogIdGenerator } from './log-id.ts';
import { severityNumber } from './severity.ts';

/** The scalar fields of one log record and the ranges of its string/bytes fields (-1 when absent). */
class LogFields {
  severityText = -1;
  severityTextEnd = 0;
  body = -1;
  bodyEnd = 0;
  traceId = -1;
  traceIdEnd = 0;
  spanId = -1;
  spanIdEnd = 0;
  eventName = -1;
  eventNameEnd = 0;
  timeLo = 0;
  timeHi = 0;
  observedLo = 0;
  observedHi = 0;
  severity = 0;
  flags = 0;
  droppedAttributes = 0;
  readonly attributes = new RangeList();

  read(r: WireReader, start: number, end: number): void {
    this.severityText = this.body = this.traceId = this.spanId = this.eventName = -1;
    this.timeLo = this.timeHi = this.observedLo = this.observedHi = this.severity = this.flags = this.droppedAttributes = 0;
    this.attributes.clear();
    r.pos = start;
    r.end = end;
    while (r.more()) {
      const tag = r.tag();
      switch (tag) {
        case (1 << 3) | WireType.fixed64:
          r.fixed64();
          this.timeLo = r.lo;
          this.timeHi = r.hi;
          break;
        case (2 << 3) | WireType.varint:
          this.severity = r.uint32() | 0;
          break;
        case (3 << 3) | WireType.bytes:
          this.severityTextEnd = r.delimited();
          this.severityText = r.pos;
          r.pos = this.severityTextEnd;
          break;
        case (5 << 3) | WireType.bytes:
          this.bodyEnd = r.delimited();
          this.body = r.pos;
          r.pos = this.bodyEnd;
          break;
        case (6 << 3) | WireType.bytes: {
          const e = r.delimited();
          this.attributes.push(r.pos, e);
          r.pos = e;
          break;
        }
        case (7 << 3) | WireType.varint:
          this.droppedAttributes = r.uint32();
          break;
        case (8 << 3) | WireType.fixed32:
          this.flags = r.fixed32();
          break;
        case (9 << 3) | WireType.bytes:
          this.traceIdEnd = r.delimited();
          this.traceId = r.pos;
          r.pos = this.traceIdEnd;
          break;
        case (10 << 3) | WireType.bytes:
          this.spanIdEnd = r.delimited();
          this.spanId = r.pos;
          r.pos = this.spanIdEnd;
          break;
        case (11 << 3) | WireType.fixed64:
          r.fixed64();
          this.observedLo = r.lo;
          this.observedHi = r.hi;
          break;
        case (12 << 3) | WireType.bytes:
          this.eventNameEnd = r.delimited();
          this.eventName = r.pos;
          r.pos = this.eventNameEnd;
          break;
        default:
          r.skip(tag & 7);
      }
    }
  }
}

const scratch = new ScratchWriter(1 << 20);

/** Converts an encoded ExportLogsServiceRequest; throws WireError on malformed input. */
function logRows(body: Buffer, resolver: TenantResolver, ids: LogIdGenerator, nowMs: number, limits: RequestLimits): RowBatch {
  const w = scratch.take();
  const value = new AnyValueView();
  const record = new LogFields();
  const r = new WireReader(body);
  let rowCount = 0;
  const maxValue = limits.limits.maxAttributeValueBytes;
  const received = nanosOfMillis(nowMs);
  forEachScope(r, value, limits, true, (resource, scope, slStart, slEnd) => {
    const records = new WireReader(body, slStart, slEnd);
    for (let end = nextDelimited(records, 2); end >= 0; end = nextDelimited(records, 2)) {
      const start = records.pos;
      records.pos = end;
      record.read(r, start, end);
      const item = new Found();
      lookupAttributesOf(r, record.attributes, Lookup.tenant | Lookup.logUid, item, value, limits);
      const found: Resolution | undefined = resource.tenant ?? item.tenant(r, value);
      const tenant = resolver.authorize(found ?? fail({ reason: 'missing_tenant' }));
      if (!tenant.ok) {
        limits.reject(tenant.error);
        continue;
      }
      // Unset (0) times fall back to the observed time, and that to the time the request was received.
      const observedSet = record.observedLo !== 0 || record.observedHi !== 0;
      const observedLo = observedSet ? record.observedLo : received.low;
      const observedHi = observedSet ? record.observedHi : received.high;
      const timeSet = record.timeLo !== 0 || record.timeHi !== 0;
      const timeLo = timeSet ? record.timeLo : observedLo;
      const timeHi = timeSet ? record.timeHi : observedHi;
      const rejection = limits.rejectionBefore(
        tenant.value,
        timeLo,
        timeHi,
        w.pos,
        resource.tooDeep || scope.tooDeep,
        enumRejection('severity number', record.severity),
      );
      if (rejection !== undefined) {
        limits.reject(rejection);
        continue;
      }
      // In rowColumns.logs order.
      const rowStart = limits.beginRow(w);
      w.text(tenant.value);
      writeNanosParts(w, timeLo, timeHi);
      writeNanosParts(w, observedLo, observedHi);
      if (item.logUidSeen) {
        if (item.logUidStart >= 0) value.read(r, item.logUidStart, item.logUidEnd).writeText(w, body, limits, maxValue, 'attribute_value_bytes');
        else w.empty();
      } else {
        w.text(ids.next(nowMs));
      }
      w.hexField(body, record.traceId, record.traceIdEnd);
      w.hexField(body, record.spanId, record.spanIdEnd);
      w.u8(record.flags & 0xff);
      const severityText =
        record.severityText >= 0 && clampInt(record.severity, 0, 255) === 0 ? body.toString('utf8', record.severityText, record.severityTextEnd) : undefined;
      w.u8(severityNumber(record.severity, severityText));
      w.field(body, record.severityText, record.severityTextEnd);
      w.field(body, record.eventName, record.eventNameEnd);
      if (record.body >= 0) value.read(r, record.body, record.bodyEnd).writeText(w, body, limits, limits.limits.maxLogBodyBytes, 'log_body_bytes');
      else w.empty();
      w.bytes(resource.bytes);
      w.bytes(scope.bytes);
      const dropped = attributeMapOf(r, record.attributes, 0, item, w, value, limits);
      // What a limit dropped is added to what the sender dropped.
      w.u32(clampInt(record.droppedAttributes + dropped, 0, 0xffffffff));
      if (limits.endRow(w, rowStart, undefined)) rowCount++;
    }
  });
  return { table: 'logs', rows: w.copy(), rowCount, rejected: limits.tally };
}

/** Protobuf logs (OTLP/HTTP and gRPC) under `limits`; records without log.record.uid get an id from `ids` at `now()`. */
export function logsFromProtobuf(ids: LogIdGenerator, now: () => number, limits: ItemLimits, settings?: TenantSettingsView): RowConverter {
  return {
    convert(body, tenants) {
      const nowMs = now();
      const batch = readWire(() => logRows(body, tenants, ids, nowMs, new RequestLimits(limits, 'logs', nowMs, body.length, settings)));
      return batch;
    },
  };
}
