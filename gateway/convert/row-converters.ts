// The converter of every signal and wire format, in one table the receivers
// index as converters[signal][format].
import type { SignalName, WireFormat } from '../wire/otlp-messages.ts';
import { logsFromJson } from './logs/json.ts';
import { LogIdGenerator } from './logs/log-id.ts';
import { logsFromProtobuf } from './logs/protobuf.ts';
import { metricsFromJson } from './metrics/json.ts';
import { metricsFromProtobuf } from './metrics/protobuf.ts';
import type { RowConverter } from './common/row-converter.ts';
import { tracesFromJson } from './traces/json.ts';
import { tracesFromProtobuf } from './traces/protobuf.ts';

export type RowConverters = Readonly<Record<SignalName, Readonly<Record<WireFormat, RowConverter>>>>;

/** The converters of one gateway; log ids come from `ids`, stamped with `now()` (ms). */
export function rowConverters(ids: LogIdGenerator = new LogIdGenerator(), now: () => number = Date.now): RowConverters {
  return {
    traces: { protobuf: tracesFromProtobuf, json: tracesFromJson },
    logs: { protobuf: logsFromProtobuf(ids, now), json: logsFromJson(ids, now) },
    metrics: { protobuf: metricsFromProtobuf, json: metricsFromJson },
  };
}
