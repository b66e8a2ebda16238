// How the API writes per-tenant settings: the writes of one source, whose
// store failures become API errors. Routes read a tenant's effective values
// from the settings port itself (RouteDeps.settings).
import type { StoreFailure } from '../../src/clickhouse/clickhouse-error.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { Result } from '../../src/result.ts';
import { fail, ok } from '../../src/result.ts';
import type { SettingValues } from '../../src/tenant/settings/tenant-settings.ts';
import type { ApiError } from '../http/api-error.ts';
import { internal, unavailable } from '../http/api-error.ts';
import type { RouteDeps } from './deps.ts';

/** A settings write's failure as the API answers it. */
export function settingsWriteError(failure: StoreFailure, log: Logger | undefined): ApiError {
  if (failure.kind === 'unavailable' || failure.kind === 'timeout') return unavailable('the settings store is unavailable; retry shortly');
  log?.error('settings write failed', { error: failure.message, code: failure.code });
  return internal();
}

/** The fields of changes that are set (null dropped): a source's complete set under replace semantics. */
export function setValues(changes: {
  readonly limits?: Readonly<Record<string, number | null | undefined>>;
  readonly retention?: Readonly<Record<string, number | null | undefined>>;
}): SettingValues {
  const keep = (group: Readonly<Record<string, number | null | undefined>> | undefined): Record<string, number> =>
    Object.fromEntries(Object.entries(group ?? {}).filter((e): e is [string, number] => typeof e[1] === 'number'));
  return { limits: keep(changes.limits), retention: keep(changes.retention) };
}

/** Runs a settings write; a store failure becomes the API's error. */
export async function writeSettings(
  deps: RouteDeps,
  write: (admin: RouteDeps['settings']) => Promise<Result<undefined, StoreFailure>>,
): Promise<Result<undefined, ApiError>> {
  const written = await write(deps.settings);
  return written.ok ? ok(undefined) : fail(settingsWriteError(written.error, deps.log));
}
