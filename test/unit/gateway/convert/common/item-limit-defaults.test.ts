// The gateway's default item limits are the defaults of the TENANTRY_* settings.
import { expect } from 'chai';
import { defaultItemLimits } from '../../../../../gateway/convert/common/item-limits.ts';
import { decodeConfig } from '../../../../../src/config/config.ts';

describe('item limit defaults', () => {
  it('are the defaults of the TENANTRY_* settings', () => {
    const decoded = decodeConfig('all', {});
    if (!decoded.ok || decoded.value.target !== 'all') expect.fail('the defaults do not decode');
    expect(decoded.value.gateway.items).to.deep.equal(defaultItemLimits);
  });
});
