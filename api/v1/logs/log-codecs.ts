// Request codec of POST /v1/tenants/:tenant_id/logs.
import type * as t from 'io-ts';
import { AttributeFilter, Bool, closed, enumList, StringList, TimeValue } from '../../http/codecs.ts';
import { Pagination } from '../../http/pagination.ts';
import { severities } from '../query/filters.ts';
import { attributeFields, withFilterLimits } from '../query/filter-limits.ts';

export const LogQuery = closed(
  'LogQuery',
  { startTime: TimeValue },
  {
    endTime: TimeValue,
    body: StringList,
    traceId: StringList,
    spanId: StringList,
    logId: StringList,
    severity: enumList(severities),
    attributes: AttributeFilter,
    includeAttributes: Bool,
    pagination: Pagination,
  },
);

export type LogQuery = t.TypeOf<typeof LogQuery>;

/** LogQuery with its filters within the per-request limits (what the route decodes with). */
export const LogRequest = withFilterLimits(LogQuery, (q) => [
  ...(['body', 'traceId', 'spanId', 'logId'] as const).map((path) => ({ path, values: q[path] ?? [] })),
  ...attributeFields('attributes', q.attributes),
]);
