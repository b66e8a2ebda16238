// Request objects (as the generated fromObject takes them) as OTLP/JSON
// bodies, and their conversion by an OTLP/JSON converter: the unit tests of
// the JSON converters write their requests as objects and read the rows.
import { expect } from 'chai';
import { defaultItemLimits } from '../../../../gateway/convert/common/item-limits.ts';
import type { ItemLimits } from '../../../../gateway/convert/common/item-limits.ts';
import type { RowConverter } from '../../../../gateway/convert/common/row-converter.ts';
import { TenantResolver } from '../../../../gateway/convert/common/tenant-resolver.ts';
import type { RowBatch } from '../../../../gateway/rowbinary/row-batch.ts';
import type { Principal } from '../../../../src/auth/api-keys.ts';

/** The default limits, except that every timestamp below 2^63 ns is in range: for tests of the mapping, not of the time window. */
export const anyTime: ItemLimits = {
  ...defaultItemLimits,
  maxFutureSkewMs: Number.MAX_SAFE_INTEGER,
  retention: { logsDays: 36500, tracesDays: 36500, metricsDays: 36500 },
};

/** The clock of the converters under test (2023-11-14T22:13:20Z). */
export const testNow = (): number => 1_700_000_000_000;

const hexIdFields = new Set(['traceId', 'spanId', 'parentSpanId']);

/** A request as OTLP/JSON: ids in hex, other bytes in base64, NaN and infinities as strings. */
export function jsonBody(request: object): Buffer {
  return Buffer.from(
    JSON.stringify(request, function replace(this: Record<string, unknown>, key, value: unknown) {
      const raw = this[key]; // a Buffer before its toJSON
      if (raw instanceof Uint8Array) return Buffer.from(raw).toString(hexIdFields.has(key) ? 'hex' : 'base64');
      if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
      return value;
    }),
  );
}

/** The rows `converter` writes for `request` in OTLP/JSON, for a key of `principal`. */
export function jsonRows(converter: RowConverter, request: object, principal: Principal): RowBatch {
  const result = converter.convert(jsonBody(request), new TenantResolver(principal));
  if (!result.ok) expect.fail(result.error);
  return result.value;
}
