import { expect } from 'chai';
import { openStore } from '../../../src/clickhouse/store.ts';

describe('opening the store', () => {
  it('explains in one line what to do when the optional chdb package is missing', async () => {
    const result = await openStore({ kind: 'embedded', dataDir: '/nonexistent/never-created', database: 'tenantry' }, () => Promise.resolve(undefined));
    expect(result.ok).to.equal(false);
    const message = result.ok ? '' : result.error;
    expect(message).to.not.contain('\n');
    expect(message).to.contain('"chdb"').and.contain('npm install').and.contain('TENANTRY_CLICKHOUSE_URL');
  });

  it('opens server mode without touching chdb', async () => {
    const result = await openStore({ kind: 'server', url: 'http://127.0.0.1:1', user: 'default', password: '', database: 'tenantry', cluster: 'main' }, () =>
      Promise.reject(new Error('must not load chdb')),
    );
    if (!result.ok) throw new Error(result.error);
    expect([result.value.mode, result.value.database, result.value.cluster]).to.deep.equal(['server', 'tenantry', 'main']);
    await result.value.close();
  });
});
