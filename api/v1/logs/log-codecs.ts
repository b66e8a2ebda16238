// Request codec of POST /v1/tenants/:tenant_id/logs.
import type * as t from 'io-ts';
import { AttributeFilter, Bool, closed, enumList, StringList, TimeValue } from '../../http/codecs.ts';
import { Pagination } from '../../http/pagination.ts';
import { severities } from '../query/filters.ts';

export const LogQuery = closed('LogQuery', { startTime: TimeValue }, {
  endTime: TimeValue,
  body: StringList,
  traceId: StringList,
  spanId: StringList,
  logId: StringList,
  severity: enumList(severities),
  attributes: AttributeFilter,
  includeAttributes: Bool,
  pagination: Pagination,
});

export type LogQuery = t.TypeOf<typeof LogQuery>;
