// A tenant's own limits on the window of a query: rows older than its
// retention are never returned (the window's start moves up to the oldest
// visible time, so lowering retention hides older rows at once), and the
// range that is left may span at most limits.maxQueryDays.
import type { Result } from '../../src/result.ts';
import { fail, ok } from '../../src/result.ts';
import { nsPerDay, oldestVisibleNs } from '../../src/tenant/settings/tenant-settings.ts';
import type { EffectiveSettings } from '../../src/tenant/settings/tenant-settings.ts';
import type { ApiError } from '../http/api-error.ts';
import { invalidRequest } from '../http/api-error.ts';
import type { TimeRange } from './time-range.ts';

/** The part of `range` the tenant may see (empty, at its end, when all of it is past retention), or a 400 when it is too long. */
export function tenantWindow(range: TimeRange, settings: EffectiveSettings, signal: 'logs' | 'traces' | 'metrics', nowNs: bigint): Result<TimeRange, ApiError> {
  const oldest = oldestVisibleNs(settings, signal, nowNs);
  const startNs = range.startNs > oldest ? range.startNs : oldest < range.endNs ? oldest : range.endNs;
  const maxDays = settings.limits.maxQueryDays;
  if (range.endNs - startNs > BigInt(maxDays) * nsPerDay) {
    const days = Number((range.endNs - startNs) * 10n / nsPerDay) / 10;
    return fail(invalidRequest(`the time range spans ${days} days (counted from the later of startTime and the start of this tenant's ${signal} retention), more than this tenant's limits.maxQueryDays (${maxDays}): narrow startTime/endTime`));
  }
  return ok({ startNs, endNs: range.endNs });
}
