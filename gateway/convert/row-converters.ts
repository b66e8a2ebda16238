// The converter of every signal and wire format, in one table the receivers
// index as converters[signal][format].
import type { SignalName, WireFormat } from '../wire/otlp-messages.ts';
import { defaultItemLimits } from './common/item-limits.ts';
import type { ItemLimits } from './common/item-limits.ts';
import type { TenantSettingsView } from '../../src/tenant/settings/tenant-settings.ts';
import { logsFromJson } from './logs/json.ts';
import { LogIdGenerator } from './logs/log-id.ts';
import { logsFromProtobuf } from './logs/protobuf.ts';
import { metricsFromJson } from './metrics/json.ts';
import { metricsFromProtobuf } from './metrics/protobuf.ts';
import type { RowConverter } from './common/row-converter.ts';
import { tracesFromJson } from './traces/json.ts';
import { tracesFromProtobuf } from './traces/protobuf.ts';

export type RowConverters = Readonly<Record<SignalName, Readonly<Record<WireFormat, RowConverter>>>>;

/**
 * The converters of one gateway under `limits`; `now()` (ms) fixes each
 * request's time window and stamps the log ids drawn from `ids`. With
 * `settings`, an item older than its tenant's retention for the signal is
 * rejected; without, older than the process's (`limits.retention`).
 */
export function rowConverters(
  ids: LogIdGenerator = new LogIdGenerator(),
  now: () => number = Date.now,
  limits: ItemLimits = defaultItemLimits,
  settings?: TenantSettingsView,
): RowConverters {
  return {
    traces: { protobuf: tracesFromProtobuf(limits, now, settings), json: tracesFromJson(limits, now, settings) },
    logs: { protobuf: logsFromProtobuf(ids, now, limits, settings), json: logsFromJson(ids, now, limits, settings) },
    metrics: { protobuf: metricsFromProtobuf(limits, now, settings), json: metricsFromJson(limits, now, settings) },
  };
}
