// The audit every API harness runs at close (support/tenant-predicate-audit.ts):
// what it accepts and refuses, and that a harness really sees the API's statements.
import { expect } from 'chai';
import { auditedStore, namesItsTenant } from './support/tenant-predicate-audit.ts';
import { keys, startHarness } from './support/api-harness.ts';
import { migratedStore } from '../../support/embedded-store.ts';

describe('tenant predicate audit', function () {
  this.timeout(60_000);

  it("accepts a statement that binds its tenant, refuses one over tenants' rows that does not", () => {
    expect(namesItsTenant('SELECT count() FROM db.logs WHERE tenant_id = {p0:String} AND timestamp > now()')).to.equal(true);
    expect(namesItsTenant('SELECT * FROM db.metric_series WHERE tenant_id IN {p1:Array(String)}')).to.equal(true);
    expect(namesItsTenant('SELECT 1')).to.equal(true);
    expect(namesItsTenant('SELECT id FROM db.tenants ORDER BY id')).to.equal(true);
    expect(namesItsTenant('SELECT count() FROM db.spans')).to.equal(false);
    expect(namesItsTenant("SELECT count() FROM db.metrics WHERE tenant_id = 'acme'")).to.equal(false);
    expect(namesItsTenant('SELECT count() FROM db.usage_daily WHERE tenant_id != {p0:String}')).to.equal(false);
    expect(namesItsTenant('WITH x AS (SELECT 1) SELECT * FROM db.logs')).to.equal(false);
    // DDL reads nothing back: the retention TTL covers every tenant's rows at once.
    expect(namesItsTenant('ALTER TABLE db.logs MODIFY TTL toDateTime(timestamp) + toIntervalDay(30)')).to.equal(true);
  });

  it('records what goes through the store it wraps', async () => {
    const store = await migratedStore('audit_wrap');
    try {
      const audit = auditedStore(store);
      await (await audit.store.client.query({ query: `SELECT count() FROM ${store.database}.logs`, format: 'JSONEachRow' })).json();
      expect(audit.seen()).to.equal(1);
      expect(audit.offenders()).to.have.length(1);
    } finally {
      await store.close();
    }
  });

  it('sees the statements of an API query through the harness', async () => {
    const h = await startHarness('audit_harness');
    const reply = await h.call('GET', '/prometheus/api/v1/query?query=up', { key: keys.readAcme });
    expect(reply.status, reply.text).to.equal(200);
    expect(h.statementsSeen(), 'the series index statement').to.be.greaterThan(0);
    await h.close();
  });
});
