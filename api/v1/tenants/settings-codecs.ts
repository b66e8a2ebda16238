// Request codecs of per-tenant settings (limits and retention): the field
// names and bounds of src/tenant/settings/tenant-settings.ts, unknown fields
// refused, and `null` kept (it unsets a field), unlike the closed objects of
// the other routes, where null reads as absent.
import * as t from 'io-ts';
import { pathOf, withSchema } from '../../http/codecs.ts';
import type { JsonSchema } from '../../http/codecs.ts';
import { boundViolation, limitBounds, retentionBounds } from '../../../src/tenant/settings/tenant-settings.ts';
import type { Bound } from '../../../src/tenant/settings/tenant-settings.ts';

type Changes<F extends string> = Readonly<Partial<Record<F, number | null>>>;

const describe: Readonly<Record<string, string>> = {
  ingestBytesPerSecond: 'decoded OTLP bytes per second, all signals together, across all gateway replicas',
  ingestBurstBytes: 'decoded OTLP bytes a tenant may send at once above its rate (token bucket size)',
  maxConcurrentQueries: 'queries of the tenant in flight at once, per API replica; one more waits up to 2 s, then 429',
  maxQueryDays: 'longest time range of one query, in days, measured after its start is moved up to the retention; longer is 400',
  queryTimeoutSeconds: 'time limit of one query; ClickHouse cancels it beyond and the API answers 503',
  logsDays: 'days log records stay visible and stored',
  tracesDays: 'days spans stay visible and stored',
  metricsDays: 'days metric points stay visible and stored',
};

/** JSON Schema of one group: each field an integer within its bounds (or null where `nullable`). */
export function groupSchema(bounds: Readonly<Record<string, Bound>>, nullable: boolean): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(
      Object.entries(bounds).map(([f, b]) => [
        f,
        {
          type: nullable ? ['integer', 'null'] : 'integer',
          minimum: b.min,
          maximum: b.max,
          description: describe[f],
        },
      ]),
    ),
  };
}

/** An object of some of `bounds`' fields, each an integer within its bounds or null. */
function changesOf<F extends string>(name: string, bounds: Readonly<Record<F, Bound>>): t.Type<Changes<F>, unknown> {
  const known = new Set<string>(Object.keys(bounds));
  return withSchema(
    new t.Type<Changes<F>, unknown, unknown>(
      name,
      (u): u is Changes<F> => typeof u === 'object' && u !== null,
      (u, c) => {
        const at = pathOf(c) || name;
        if (typeof u !== 'object' || u === null || Array.isArray(u)) return t.failure(u, c, `${at} must be a JSON object`);
        const errors: t.ValidationError[] = [];
        const out: Partial<Record<F, number | null>> = {};
        for (const [field, value] of Object.entries(u as Record<string, unknown>)) {
          if (!known.has(field)) {
            errors.push({ value, context: c, message: `unknown field "${at}.${field}" (known: ${[...known].join(', ')})` });
            continue;
          }
          if (value === null) {
            out[field as F] = null;
            continue;
          }
          const bound = bounds[field as F];
          const why = typeof value === 'number' ? boundViolation(bound, value) : `must be an integer from ${bound.min} to ${bound.max}`;
          if (why !== undefined) errors.push({ value, context: c, message: `${at}.${field} is ${JSON.stringify(value)}: it ${why}` });
          else out[field as F] = value as number;
        }
        return errors.length > 0 ? t.failures(errors) : t.success(out);
      },
      t.identity,
    ),
    groupSchema(bounds, true),
  );
}

export const LimitChanges = changesOf('limits', limitBounds);
export const RetentionChanges = changesOf('retention', retentionBounds);
