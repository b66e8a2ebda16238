// Request codec of POST /v1/tenants/:tenant_id/usage.
import * as t from 'io-ts';
import { closed, TimeValue, withSchema } from '../../http/codecs.ts';

export const UsageInterval = withSchema(t.keyof({ day: null, month: null }, 'one of "day", "month"'), {
  type: 'string',
  enum: ['day', 'month'],
  default: 'day',
});

export const UsageQuery = closed('UsageQuery', { startTime: TimeValue }, { endTime: TimeValue, interval: UsageInterval });

export type UsageQuery = t.TypeOf<typeof UsageQuery>;
