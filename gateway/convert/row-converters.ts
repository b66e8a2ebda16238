// The converter of every signal and wire format, in one table the receivers
// index as converters[signal][format].
import type { SignalName, WireFormat } from '../wire/otlp-messages.ts';
import { defaultItemLimits } from './common/item-limits.ts';
import type { ItemLimits } from './common/item-limits.ts';
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
 * request's time window and stamps the log ids drawn from `ids`.
 */
export function rowConverters(ids: LogIdGenerator = new LogIdGenerator(), now: () => number = Date.now, limits: ItemLimits = defaultItemLimits): RowConverters {
  return {
    traces: { protobuf: tracesFromProtobuf(limits, now), json: tracesFromJson(limits, now) },
    logs: { protobuf: logsFromProtobuf(ids, now, limits), json: logsFromJson(ids, now, limits) },
    metrics: { protobuf: metricsFromProtobuf(limits, now), json: metricsFromJson(limits, now) },
  };
}
