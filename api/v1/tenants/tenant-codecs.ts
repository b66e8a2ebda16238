// Request codecs of the tenant routes.
import * as t from 'io-ts';
import { closed, refined } from '../../http/codecs.ts';

export const TenantName = refined(t.string, 'a string of at most 256 characters', (s) => Array.from(s).length <= 256, { type: 'string', maxLength: 256, default: '' });

export const RenameTenant = closed('RenameTenant', {}, { name: TenantName });

export const tenantListParameters = ['limit', 'page', 'search'] as const;
