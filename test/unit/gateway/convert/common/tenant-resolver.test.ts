import { expect } from 'chai';
import fc from 'fast-check';
import type { Principal } from '../../../../../src/auth/api-keys.ts';
import { TenantResolver, tenantOf } from '../../../../../gateway/convert/common/tenant-resolver.ts';
import { fail, ok } from '../../../../../src/result.ts';
import { isValidTenantId } from '../../../../../src/tenant/tenant-id.ts';
import type { KeyValue } from '../../../../../gateway/wire/otlp-messages.ts';

const all: Principal = { name: 'all', scopes: new Set(['ingest']), tenants: '*' };
const onlyA: Principal = { name: 'a', scopes: new Set(['ingest']), tenants: new Set(['a']) };
const str = (v: string): KeyValue[] => [{ key: 'tenant.id', value: { stringValue: v, value: 'stringValue' } }];

describe('tenant-resolver', () => {
  it('accepts 1-150 bytes of the allowed characters, except . and ..', () => {
    expect(isValidTenantId("aZ09._~!*'()-")).to.equal(true);
    expect(isValidTenantId('x'.repeat(150))).to.equal(true);
    for (const bad of ['', '.', '..', 'x'.repeat(151), 'a b', 'a/b', 'é', 'a\nb', 'a%b']) expect(isValidTenantId(bad), bad).to.equal(false);
    expect(isValidTenantId('...')).to.equal(true);
  });

  it('agrees with the rule on arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (s) => {
        const expected = s.length >= 1 && Buffer.byteLength(s) <= 150 && /^[A-Za-z0-9._~!*'()-]+$/.test(s) && s !== '.' && s !== '..';
        return isValidTenantId(s) === expected;
      }),
    );
  });

  it('reads strings as is and integers in decimal; other types are invalid', () => {
    expect(tenantOf(str('t1'))).to.deep.equal(ok('t1'));
    expect(tenantOf([{ key: 'tenant.id', value: { intValue: -12, value: 'intValue' } }])).to.deep.equal(ok('-12'));
    expect(tenantOf([{ key: 'tenant.id', value: { intValue: 12, value: 'intValue' } }])).to.deep.equal(ok('12'));
    expect(tenantOf([{ key: 'tenant.id', value: { intValue: { low: -1, high: 0x7fffffff, unsigned: false } as never, value: 'intValue' } }])).to.deep.equal(
      ok('9223372036854775807'),
    );
    expect(tenantOf([{ key: 'tenant.id', value: { boolValue: true, value: 'boolValue' } }])).to.deep.equal(fail({ reason: 'invalid_tenant_type' }));
    expect(tenantOf([{ key: 'tenant.id', value: {} }])).to.deep.equal(fail({ reason: 'invalid_tenant_type' }));
    expect(tenantOf([{ key: 'other', value: { stringValue: 'x', value: 'stringValue' } }])).to.equal(undefined);
  });

  it('lets the resource win, falls back to the item, and enforces the key', () => {
    const resolver = new TenantResolver(onlyA);
    expect(resolver.resolve(tenantOf(str('a')), str('b'))).to.deep.equal(ok('a'));
    expect(resolver.resolve(undefined, str('a'))).to.deep.equal(ok('a'));
    expect(resolver.resolve(undefined, str('b'))).to.deep.equal(fail({ reason: 'tenant_not_allowed', tenant: 'b' }));
    expect(resolver.resolve(tenantOf(str('..')), str('a'))).to.deep.equal(fail({ reason: 'invalid_tenant_id' }));
    expect(resolver.resolve(undefined, [])).to.deep.equal(fail({ reason: 'missing_tenant' }));
    expect(new TenantResolver(all).resolve(undefined, str('b'))).to.deep.equal(ok('b'));
  });

  it('names the first tenant the request may write, for fair scheduling of the writer', () => {
    const resolver = new TenantResolver(onlyA);
    expect(resolver.firstTenant).to.equal('');
    resolver.authorize(ok('b')); // not allowed: not whom the rows are for
    resolver.authorize(ok('a'));
    expect(resolver.firstTenant).to.equal('a');
    const mixed = new TenantResolver(all);
    mixed.authorize(ok('y'));
    mixed.authorize(ok('x'));
    expect(mixed.firstTenant).to.equal('y');
  });

  it('rejects the items of a tenant over its ingest limit (rate_limited), asking the limiter once per tenant, and counts items per tenant', () => {
    const asked: string[] = [];
    const resolver = new TenantResolver(all, {
      admits: (tenant) => {
        asked.push(tenant);
        return tenant !== 'flood';
      },
    });
    expect(resolver.authorize(ok('flood'))).to.deep.equal(fail({ reason: 'rate_limited', tenant: 'flood' }));
    expect(resolver.authorize(ok('flood'))).to.deep.equal(fail({ reason: 'rate_limited', tenant: 'flood' }));
    expect(resolver.authorize(ok('calm'))).to.deep.equal(ok('calm'));
    expect(asked).to.deep.equal(['flood', 'calm']);
    expect(resolver.firstTenant).to.equal('calm');
    expect([...resolver.tenants].map(([t, s]) => [t, s.items, s.refused?.error.reason])).to.deep.equal([
      ['flood', 2, 'rate_limited'],
      ['calm', 1, undefined],
    ]);
  });

  it('does not ask the limiter about a tenant the key may not write', () => {
    const resolver = new TenantResolver(onlyA, {
      admits: () => {
        throw new Error('asked');
      },
    });
    expect(resolver.authorize(ok('b'))).to.deep.equal(fail({ reason: 'tenant_not_allowed', tenant: 'b' }));
  });
});
