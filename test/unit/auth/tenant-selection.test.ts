import { expect } from 'chai';
import { parseKeys } from '../../../src/auth/api-keys.ts';
import type { KeyRing } from '../../../src/auth/api-keys.ts';
import { presentedCompatKey, selectTenant } from '../../../src/auth/tenant-selection.ts';

const oneTenantKey = 'read-key-for-acme-only';
const twoTenantKey = 'read-key-for-acme-globex';
const everyTenantKey = 'read-key-for-every-tenant';
const ingestKey = 'ingest-key-for-acme-only';

function ring(): KeyRing {
  const parsed = parseKeys(
    JSON.stringify([
      { key: oneTenantKey, scopes: ['read'], tenants: ['acme'] },
      { key: twoTenantKey, scopes: ['read'], tenants: ['acme', 'globex'] },
      { key: everyTenantKey, scopes: ['read'], tenants: ['*'] },
      { key: ingestKey, scopes: ['ingest'], tenants: ['acme'] },
    ]),
    'test',
  );
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
}

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('tenant selection of the compatibility endpoints', () => {
  const keys = ring();

  it('reads the key from Bearer, x-api-key, or the password of HTTP Basic (whatever the user name)', () => {
    expect(presentedCompatKey(`Bearer ${oneTenantKey}`, undefined)).to.equal(oneTenantKey);
    expect(presentedCompatKey(undefined, oneTenantKey)).to.equal(oneTenantKey);
    expect(presentedCompatKey(basic('grafana', oneTenantKey), undefined)).to.equal(oneTenantKey);
    expect(presentedCompatKey(basic('', 'pass:with:colons-0123'), undefined)).to.equal('pass:with:colons-0123');
    expect(presentedCompatKey(basic('only-user', ''), 'fallback-key-0123456')).to.equal('fallback-key-0123456');
    expect(presentedCompatKey('Basic !!!', undefined)).to.equal(undefined);
  });

  it('takes the tenant from X-Scope-OrgID, or from a key bound to one tenant when the header is absent', () => {
    const fromHeader = selectTenant(keys, { authorization: `Bearer ${twoTenantKey}`, 'x-scope-orgid': 'globex' }, 'read');
    expect(fromHeader.ok && fromHeader.value.tenantId).to.equal('globex');
    const implied = selectTenant(keys, { authorization: basic('x', oneTenantKey) }, 'read');
    expect(implied.ok && implied.value.tenantId).to.equal('acme');
    const anyTenant = selectTenant(keys, { 'x-api-key': everyTenantKey, 'x-scope-orgid': 'initech' }, 'read');
    expect(anyTenant.ok && anyTenant.value.tenantId).to.equal('initech');
  });

  it('answers 400 naming the header when a key for several tenants sends none, and for an id that is not a tenant id', () => {
    for (const key of [twoTenantKey, everyTenantKey]) {
      const missing = selectTenant(keys, { authorization: `Bearer ${key}` }, 'read');
      expect(missing.ok).to.equal(false);
      if (!missing.ok) {
        expect(missing.error.status).to.equal(400);
        expect(missing.error.message).to.contain('X-Scope-OrgID');
      }
    }
    const several = selectTenant(keys, { authorization: `Bearer ${everyTenantKey}`, 'x-scope-orgid': 'acme|globex' }, 'read');
    expect(!several.ok && several.error.status).to.equal(400);
  });

  it('answers 404 for a tenant outside the key, before looking at scopes, and 401 without a known key', () => {
    const outside = selectTenant(keys, { authorization: `Bearer ${oneTenantKey}`, 'x-scope-orgid': 'globex' }, 'read');
    expect(!outside.ok && outside.error).to.deep.equal({ status: 404, message: 'tenant "globex" not found' });
    const outsideWrongScope = selectTenant(keys, { authorization: `Bearer ${ingestKey}`, 'x-scope-orgid': 'globex' }, 'read');
    expect(!outsideWrongScope.ok && outsideWrongScope.error.status).to.equal(404);
    const wrongScope = selectTenant(keys, { authorization: `Bearer ${ingestKey}` }, 'read');
    expect(!wrongScope.ok && wrongScope.error.status).to.equal(403);
    const unknown = selectTenant(keys, { authorization: basic('acme', 'not-a-key-0123456789') }, 'read');
    expect(!unknown.ok && unknown.error.status).to.equal(401);
    const none = selectTenant(keys, {}, 'ingest');
    expect(!none.ok && none.error.status).to.equal(401);
  });
});
