// Tenant selection for the compatibility endpoints (DESIGN.md section 9): the
// Prometheus, Loki and Tempo APIs and Prometheus remote write. The key comes
// as on /v1 (Bearer, x-api-key) or as the password of HTTP Basic, which is what
// Grafana data sources and Prometheus' remote_write send most easily; the
// tenant comes from X-Scope-OrgID, the header Loki, Mimir and Tempo read, and
// may be left out when the key names exactly one tenant.
import type { KeyRing, Principal, Scope } from './api-keys.ts';
import { canAccessTenant, hasScope, presentedKey } from './api-keys.ts';
import { isValidTenantId, tenantIdRule } from '../tenant/tenant-id.ts';
import type { Result } from '../result.ts';
import { fail, ok } from '../result.ts';

/** The header that names the tenant of a request. */
export const orgIdHeader = 'x-scope-orgid';

/** Who a compatibility request is and which tenant it is about. */
export interface SelectedTenant {
  readonly principal: Principal;
  readonly tenantId: string;
}

/** Why a request has no tenant, as the status each upstream system would answer and a message for a person. */
export interface SelectionFailure {
  readonly status: 400 | 401 | 403 | 404;
  readonly message: string;
}

/** The key of `Authorization: Basic …` (the password; the user name is not read), or undefined. */
function basicPassword(authorization: string): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(authorization);
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/** The key a compatibility request presents: Bearer, Basic's password, else x-api-key. */
export function presentedCompatKey(authorization: string | undefined, xApiKey: string | undefined): string | undefined {
  const basic = authorization === undefined ? undefined : basicPassword(authorization);
  return basic !== undefined && basic !== '' ? basic : presentedKey(authorization, xApiKey);
}

type Headers = Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : value?.[0];
}

/**
 * The tenant of a request: authenticated by its key, needing `scope`, and
 * named by X-Scope-OrgID or, when that is absent, by a key bound to one
 * tenant. A tenant outside the key's list is "not found", as on /v1, so a
 * key learns nothing about other tenants; it is checked before the scope.
 */
export function selectTenant(keys: KeyRing, headers: Headers, scope: Scope): Result<SelectedTenant, SelectionFailure> {
  const principal = keys.authenticate(presentedCompatKey(header(headers, 'authorization'), header(headers, 'x-api-key')));
  if (principal === undefined)
    return fail({ status: 401, message: 'missing or unknown API key: send "Authorization: Bearer <key>", or the key as the password of HTTP Basic' });
  const named = header(headers, orgIdHeader)?.trim();
  let tenantId: string;
  if (named !== undefined && named !== '') {
    if (!isValidTenantId(named))
      return fail({ status: 400, message: `X-Scope-OrgID ${JSON.stringify(named)} is not a tenant id (${tenantIdRule}; one tenant per request)` });
    tenantId = named;
  } else if (principal.tenants !== '*' && principal.tenants.size === 1) {
    tenantId = [...principal.tenants][0] ?? '';
  } else {
    return fail({ status: 400, message: 'this API key may read several tenants: name one in the X-Scope-OrgID header' });
  }
  if (!canAccessTenant(principal, tenantId)) return fail({ status: 404, message: `tenant "${tenantId}" not found` });
  if (!hasScope(principal, scope)) return fail({ status: 403, message: `this API key lacks the "${scope}" scope` });
  return ok({ principal, tenantId });
}
