import { expect } from 'chai';
import fc from 'fast-check';
import { preferredTenantName, sanitiseTenantId, tenantObjectName } from '../../../../operator/tenants/tenant-name.ts';

const dns1123Subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const tenantIdChar = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~!*'()-".split(''));
const tenantId = fc.string({ unit: tenantIdChar, minLength: 1, maxLength: 150 }).filter((s) => s !== '.' && s !== '..');
const none = (): string | undefined => undefined;

describe('operator tenant object names', () => {
  it('a DNS-safe id keeps its readable name', () => {
    expect(preferredTenantName('demo', 'acme')).to.equal('demo-acme');
    expect(preferredTenantName('demo', 'team.prod-1')).to.equal('demo-team.prod-1');
  });

  it('a lossy mapping appends a hash of the exact id, so ids differing in case do not collide', () => {
    expect(sanitiseTenantId('Acme (EU)!')).to.equal('acme-eu');
    const upper = preferredTenantName('demo', 'Acme');
    expect(upper).to.match(/^demo-acme-[0-9a-f]{8}$/);
    expect(upper).not.to.equal(preferredTenantName('demo', 'acme'));
    expect(preferredTenantName('demo', '~~~')).to.match(/^demo-[0-9a-f]{8}$/);
  });

  it('a name held by a Tenant of another id gets the hash, then a counter', () => {
    const held = new Map([['demo-acme', 'other-id']]);
    const first = tenantObjectName('demo', 'acme', (n) => held.get(n));
    expect(first).to.match(/^demo-acme-[0-9a-f]{8}$/);
    held.set(first, 'third-id');
    expect(tenantObjectName('demo', 'acme', (n) => held.get(n))).to.equal(`${first}-2`);
    expect(tenantObjectName('demo', 'acme', (n) => (n === 'demo-acme' ? 'acme' : undefined))).to.equal('demo-acme');
  });

  it('property: every valid tenant id maps to a valid object name of at most 253 characters', () => {
    fc.assert(
      fc.property(tenantId, (id) => {
        const name = tenantObjectName('stack-with-a-thirty-char-name1', id, none);
        return name.length <= 253 && dns1123Subdomain.test(name);
      }),
      { numRuns: 2000 },
    );
  });

  it('property: distinct ids get distinct names', () => {
    fc.assert(
      fc.property(tenantId, tenantId, (a, b) => a === b || preferredTenantName('s', a) !== preferredTenantName('s', b)),
      { numRuns: 2000 },
    );
  });
});
