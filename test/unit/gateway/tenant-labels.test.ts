// The bounded tenant label of the per-tenant metrics.
import { expect } from 'chai';
import { noTenant, otherTenants, TenantLabels } from '../../../gateway/tenant-labels.ts';

describe('tenant labels', () => {
  it('labels the first k tenants, puts the rest under __other__, and items without a tenant under __none__', () => {
    const labels = new TenantLabels(
      () => undefined,
      2,
      1000,
      () => 0,
    );
    expect([labels.label('a', 1), labels.label('b', 1), labels.label('c', 1), labels.label('a', 1)]).to.deep.equal(['a', 'b', otherTenants, 'a']);
    expect(labels.label('', 1)).to.equal(noTenant);
  });

  it('gives the labels to the top k tenants of each window and demotes the others', () => {
    let now = 0;
    const demoted: string[] = [];
    const labels = new TenantLabels(
      (t) => {
        demoted.push(t);
      },
      2,
      1000,
      () => now,
    );
    labels.label('a', 10);
    labels.label('b', 10);
    labels.label('big', 1000);
    labels.label('big2', 500);
    now = 1000;
    expect(labels.label('big', 1)).to.equal('big');
    expect(demoted.sort()).to.deep.equal(['a', 'b']);
    expect(labels.label('big2', 1)).to.equal('big2');
    expect(labels.label('a', 1)).to.equal(otherTenants);
  });
});
