// Request codec of POST /v1/tenants/:tenant_id/timeseries.
import * as t from 'io-ts';
import { AttributeFilter, closed, refined, TimeValue, withSchema } from '../../http/codecs.ts';
import { attributeFields, withFilterLimits } from '../query/filter-limits.ts';

export const operators = ['avg', 'sum', 'min', 'max', 'count', 'last', 'rate', 'increase', 'p50', 'p75', 'p90', 'p95', 'p99'] as const;
export type Operator = (typeof operators)[number];

const Operator = withSchema(t.keyof(Object.fromEntries(operators.map((o) => [o, null])) as Record<Operator, null>, `one of ${operators.join(', ')}`), {
  type: 'string',
  enum: operators,
  default: 'avg',
});

const Names = (what: string, min: number): t.Type<string[], unknown> =>
  refined(
    t.array(t.string),
    `an array of ${min === 0 ? '0' : min}–20 non-empty ${what}`,
    (a) => a.length >= min && a.length <= 20 && a.every((s) => s !== ''),
    { type: 'array', items: { type: 'string', minLength: 1 }, minItems: min, maxItems: 20 },
  );

export const SeriesQuery = closed(
  'SeriesQuery',
  { metrics: Names('metric names', 1) },
  {
    groupBy: Names('attribute names', 0),
    operator: Operator,
    attributes: AttributeFilter,
  },
);
export type SeriesQuery = t.TypeOf<typeof SeriesQuery>;

const Queries = withSchema(
  new t.Type<readonly SeriesQuery[], unknown, unknown>(
    'a query object or an array of 1–20 query objects',
    (u): u is readonly SeriesQuery[] => Array.isArray(u) && u.every((q) => SeriesQuery.is(q)),
    (u, c) => {
      if (Array.isArray(u)) {
        if (u.length === 0 || u.length > 20) return t.failure(u, c, 'queries must hold 1 to 20 query objects');
        return t.array(SeriesQuery).validate(u, c);
      }
      const one = SeriesQuery.validate(u, c);
      return one._tag === 'Left' ? one : t.success([one.right]);
    },
    t.identity,
  ),
  { oneOf: [{ $ref: '#/components/schemas/SeriesQuery' }, { type: 'array', items: { $ref: '#/components/schemas/SeriesQuery' }, minItems: 1, maxItems: 20 }] },
);

/** Widest bucket: 36,500 days, the longest range any tenant may query (limits.maxQueryDays). */
export const maxIntervalSeconds = 36_500 * 86_400;

const Interval = refined(
  t.number,
  `a number of seconds from 0.001 to ${maxIntervalSeconds}`,
  (n) => Number.isFinite(n) && n >= 0.001 && n <= maxIntervalSeconds,
  {
    type: 'number',
    minimum: 0.001,
    maximum: maxIntervalSeconds,
    description: 'Bucket width in seconds. Omitted: the smallest of 1, 5, 10, 15, 30, 60, 300, 900, 3600, 21600, 86400 giving at most 300 points.',
  },
);

export const TimeseriesRequest = closed('TimeseriesRequest', { queries: Queries, startTime: TimeValue }, { endTime: TimeValue, interval: Interval });
export type TimeseriesRequest = t.TypeOf<typeof TimeseriesRequest>;

/** TimeseriesRequest with the filters of all its queries within the per-request limits (what the route decodes with). */
export const BoundedTimeseriesRequest = withFilterLimits(TimeseriesRequest, (r) =>
  r.queries.flatMap((q, i) => attributeFields(`queries[${i}].attributes`, q.attributes)),
);
