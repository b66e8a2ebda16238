// Request codecs of the tenant routes.
import * as t from 'io-ts';
import { closed, refined } from '../../http/codecs.ts';

/** DESIGN.md section 3: 1–150 bytes of [A-Za-z0-9._~!*'()-], not "." or "..". */
export const isValidTenantId = (id: string): boolean => /^[A-Za-z0-9._~!*'()-]{1,150}$/.test(id) && id !== '.' && id !== '..';

export const TenantName = refined(t.string, 'a string of at most 256 characters', (s) => Array.from(s).length <= 256, { type: 'string', maxLength: 256, default: '' });

export const RenameTenant = closed('RenameTenant', {}, { name: TenantName });

export const tenantListParameters = ['limit', 'page', 'search'] as const;
