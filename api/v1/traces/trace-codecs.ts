// Request codec of POST /v1/tenants/:tenant_id/traces.
import * as t from 'io-ts';
import { AttributeFilter, Bool, closed, enumList, refined, StringList, TimeValue } from '../../http/codecs.ts';
import { Pagination } from '../../http/pagination.ts';
import { attributeFields, withFilterLimits } from '../query/filter-limits.ts';

export const spanKinds = ['SERVER', 'CLIENT', 'INTERNAL', 'PRODUCER', 'CONSUMER'] as const;
export const statusCodes = ['OK', 'ERROR', 'UNSET'] as const;

/** Longest span duration a filter may name: 10^18 ns (about 31.7 years), well inside the UInt64 column and exact as a JSON number's integer part. */
export const maxDurationNs = 1e18;

const Duration = refined(t.number, `a number of nanoseconds from 0 to ${maxDurationNs}`, (n) => Number.isFinite(n) && n >= 0 && n <= maxDurationNs, {
  type: 'number',
  minimum: 0,
  maximum: maxDurationNs,
});

export const TraceQuery = closed(
  'TraceQuery',
  { startTime: TimeValue },
  {
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
  },
);

export type TraceQuery = t.TypeOf<typeof TraceQuery>;

/** TraceQuery with its filters within the per-request limits (what the route decodes with). */
export const TraceRequest = withFilterLimits(TraceQuery, (q) => [
  ...(['traceId', 'spanId', 'parentSpanId', 'spanName'] as const).map((path) => ({ path, values: q[path] ?? [] })),
  ...attributeFields('attributes', q.attributes),
]);
