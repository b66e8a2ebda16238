// Request codecs of the tenant routes.
import * as t from 'io-ts';
import { closed, refined, Str } from '../../http/codecs.ts';
import { LimitParameter } from '../../http/pagination.ts';

export const TenantName = refined(t.string, 'a string of at most 256 characters', (s) => Array.from(s).length <= 256, { type: 'string', maxLength: 256, default: '' });

export const RenameTenant = closed('RenameTenant', {}, { name: TenantName });
export type RenameTenant = t.TypeOf<typeof RenameTenant>;

/** The query parameters of GET /v1/tenants. */
export const TenantListQuery = closed('TenantListQuery', {}, { limit: LimitParameter, page: Str, search: Str });
export type TenantListQuery = t.TypeOf<typeof TenantListQuery>;

/** GET /v1/tenants/:id takes no input. */
export const NoInput = closed('NoInput', {}, {});
