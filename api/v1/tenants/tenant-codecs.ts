// Request codecs of the tenant routes.
import * as t from 'io-ts';
import { closed, refined, Str, withSchema } from '../../http/codecs.ts';
import { LimitParameter } from '../../http/pagination.ts';
import { LimitChanges, RetentionChanges } from './settings-codecs.ts';

export const TenantName = refined(t.string, 'a string of at most 256 characters', (s) => Array.from(s).length <= 256, {
  type: 'string',
  maxLength: 256,
  default: '',
});

/** PUT /v1/tenants/:id: a name, and limits and retention to set (a number) or unset (null). */
export const TenantUpdate = closed('TenantUpdate', {}, { name: TenantName, limits: LimitChanges, retention: RetentionChanges });
export type TenantUpdate = t.TypeOf<typeof TenantUpdate>;

/** The query parameters of PUT /v1/tenants/:id: `source=tenant` is the operator's (values declared in a Tenant resource). */
export const TenantUpdateQuery = closed(
  'TenantUpdateQuery',
  {},
  {
    source: withSchema(t.keyof({ api: null, tenant: null }, 'api or tenant'), { type: 'string', enum: ['api', 'tenant'], default: 'api' }),
  },
);
export type TenantUpdateQuery = t.TypeOf<typeof TenantUpdateQuery>;

/** PUT /v1/settings/tenant-defaults: the stack's complete set of defaults (null or absent: not set). */
export const TenantDefaults = closed('TenantDefaults', {}, { limits: LimitChanges, retention: RetentionChanges });
export type TenantDefaults = t.TypeOf<typeof TenantDefaults>;

/** The query parameters of GET /v1/tenants. */
export const TenantListQuery = closed('TenantListQuery', {}, { limit: LimitParameter, page: Str, search: Str });
export type TenantListQuery = t.TypeOf<typeof TenantListQuery>;

/** GET /v1/tenants/:id takes no input. */
export const NoInput = closed('NoInput', {}, {});
