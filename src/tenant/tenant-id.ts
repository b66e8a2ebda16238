// The tenant id rule of DESIGN.md section 3, shared by the gateway (ingestion)
// and the API (renames that create a record before any telemetry).

/** What a valid tenant id is, for error messages. */
export const tenantIdRule = '1-150 bytes of [A-Za-z0-9._~!*\'()-], not "." or ".."';

const validId = /^[A-Za-z0-9._~!*'()-]{1,150}$/;

/** True for a valid tenant id (every allowed character is ASCII, so characters = bytes). */
export function isValidTenantId(id: string): boolean {
  return validId.test(id) && id !== '.' && id !== '..';
}
