// The one interface every converter implements: the body of an
// Export*ServiceRequest in one wire format, and the request's tenant
// resolver, in; RowBinary rows for the signal's table, or the reason the
// body is not a valid request, out. Bad input is a returned value, never an
// exception. There is one converter per signal and wire format
// (convert/<signal>/<format>.ts); convert/row-converters.ts puts them in one
// table.
import type { Result } from '../../../src/result.ts';
import type { RowBatch } from '../../rowbinary/row-batch.ts';
import type { TenantResolver } from './tenant-resolver.ts';

export interface RowConverter {
  /** Converts one request body; the items whose tenant `tenants` refuses are tallied in the batch, not written. */
  convert(body: Buffer, tenants: TenantResolver): Result<RowBatch, string>;
}
