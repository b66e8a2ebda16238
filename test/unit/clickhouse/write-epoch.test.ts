// The write epoch's listeners (src/clickhouse/write-epoch.ts): told after a
// write that may have touched their table ends with the table quiet, never
// for another table's write, and no longer once unsubscribed.
import { expect } from 'chai';
import { WriteEpoch } from '../../../src/clickhouse/write-epoch.ts';

/** Resolves after the listeners queued for this turn have run (they run on a later turn: setImmediate). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('clickhouse: the write epoch tells listeners when their table is quiet again', () => {
  it("tells a table's listener after its own write ends, not another table's", async () => {
    const epoch = new WriteEpoch();
    const told: string[] = [];
    epoch.onQuiet('db.metrics', () => told.push('metrics'));
    const logs = epoch.begin('db.logs');
    logs.end();
    await turn();
    expect(told).to.deep.equal([]);
    const metrics = epoch.begin('db.metrics');
    await turn();
    expect(told, 'not while the write runs').to.deep.equal([]);
    metrics.end();
    metrics.end();
    await turn();
    expect(told, 'once per write, however often end is called').to.deep.equal(['metrics']);
  });

  it('waits until the last of overlapping writes ends, counts a write of unknown table against every table, and stops when unsubscribed', async () => {
    const epoch = new WriteEpoch();
    let told = 0;
    const stop = epoch.onQuiet('db.metrics', () => (told += 1));
    const a = epoch.begin('db.metrics');
    const b = epoch.begin('db.metrics');
    a.end();
    await turn();
    expect(told, 'another write still runs').to.equal(0);
    b.end();
    await turn();
    expect(told).to.equal(1);
    epoch.begin().end();
    await turn();
    expect(told, 'DDL may touch any table').to.equal(2);
    stop();
    epoch.begin('db.metrics').end();
    await turn();
    expect(told).to.equal(2);
  });
});
