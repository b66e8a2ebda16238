// Request codec of POST /v1/tenants/:tenant_id/traces.
import * as t from 'io-ts';
import { AttributeFilter, Bool, closed, enumList, refined, StringList, TimeValue } from '../../http/codecs.ts';
import { Pagination } from '../../http/pagination.ts';
import { attributeFields, withFilterLimits } from '../query/filter-limits.ts';

export const spanKinds = ['SERVER', 'CLIENT', 'INTERNAL', 'PRODUCER', 'CONSUMER'] as const;
export const statusCodes = ['OK', 'ERROR', 'UNSET'] as const;

const Duration = refined(t.number, 'a non-negative number of nanoseconds', (n) => Number.isFinite(n) && n >= 0, { type: 'number', minimum: 0 });

export const TraceQuery = closed('TraceQuery', { startTime: TimeValue }, {
  endTime: TimeValue,
  traceId: StringList,
  spanId: StringList,
  parentSpanId: StringList,
  spanName: StringList,
  spanKind: enumList(spanKinds),
  statusCode: enumList(statusCodes),
  durationMin: Duration,
  durationMax: Duration,
  attributes: AttributeFilter,
  includeAttributes: Bool,
  pagination: Pagination,
});

export type TraceQuery = t.TypeOf<typeof TraceQuery>;

/** TraceQuery with its filters within the per-request limits (what the route decodes with). */
export const TraceRequest = withFilterLimits(TraceQuery, (q) => [
  ...(['traceId', 'spanId', 'parentSpanId', 'spanName'] as const).map((path) => ({ path, values: q[path] ?? [] })),
  ...attributeFields('attributes', q.attributes),
]);
