// How a request's items and decoded bytes divide among its tenants.
import { expect } from 'chai';
import { tenantShares } from '../../../../gateway/limits/tenant-shares.ts';
import type { TenantItems } from '../../../../gateway/convert/common/tenant-resolver.ts';
import { fail } from '../../../../src/result.ts';

const admitted = (items: number): TenantItems => ({ items, refused: undefined });
const limited = (tenant: string, items: number): TenantItems => ({ items, refused: fail({ reason: 'rate_limited', tenant }) });

const plain = (shares: ReturnType<typeof tenantShares>): unknown =>
  shares.map((s) => ({ tenant: s.tenant, accepted: s.accepted, rejected: Object.fromEntries(s.rejected), charged: s.charged }));

describe('tenant shares', () => {
  it('gives one tenant the whole request, with what a later limit rejected', () => {
    const shares = tenantShares(new Map([['a', admitted(10)]]), 8, { count: 2, byReason: new Map([['timestamp_too_old', 2]]) }, 1000);
    expect(plain(shares)).to.deep.equal([
      { tenant: 'a', accepted: { items: 8, bytes: 800 }, rejected: { timestamp_too_old: { items: 2, bytes: 200 } }, charged: 1000 },
    ]);
  });

  it('splits bytes by items, rejects a limited tenant exactly without charging it, and puts tenantless items under ""', () => {
    const tenants = new Map([
      ['flood', limited('flood', 6)],
      ['a', admitted(3)],
      ['b', admitted(1)],
    ]);
    const shares = tenantShares(
      tenants,
      4,
      {
        count: 8,
        byReason: new Map([
          ['rate_limited', 6],
          ['missing_tenant', 2],
        ]),
      },
      1200,
    );
    expect(plain(shares)).to.deep.equal([
      { tenant: 'flood', accepted: { items: 0, bytes: 0 }, rejected: { rate_limited: { items: 6, bytes: 600 } }, charged: 0 },
      { tenant: 'a', accepted: { items: 3, bytes: 300 }, rejected: {}, charged: 300 },
      { tenant: 'b', accepted: { items: 1, bytes: 100 }, rejected: {}, charged: 100 },
      { tenant: '', accepted: { items: 0, bytes: 0 }, rejected: { missing_tenant: { items: 2, bytes: 200 } }, charged: 0 },
    ]);
  });

  it('divides later rejections among admitted tenants by their share of items, all of them and no more', () => {
    const shares = tenantShares(
      new Map([
        ['a', admitted(3)],
        ['b', admitted(3)],
        ['c', admitted(4)],
      ]),
      7,
      { count: 3, byReason: new Map([['value_too_deep', 3]]) },
      100,
    );
    const rejected = shares.map((s) => s.rejected.get('value_too_deep')?.items ?? 0);
    expect(rejected.reduce((x, y) => x + y, 0)).to.equal(3);
    expect(shares.reduce((x, s) => x + s.accepted.items, 0)).to.equal(7);
  });

  it('is empty for an empty request', () => {
    expect(tenantShares(new Map(), 0, { count: 0, byReason: new Map() }, 0)).to.deep.equal([]);
  });
});
