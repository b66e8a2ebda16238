// The tenant settings store (src/tenant/settings/settings-store.ts) on embedded ClickHouse.
import { expect } from 'chai';
import type { Store } from '../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { SettingsCache } from '../../../src/tenant/settings/settings-cache.ts';
import { createSettingsStore } from '../../../src/tenant/settings/settings-store.ts';
import { builtInDefaults } from '../../../src/tenant/settings/tenant-settings.ts';
import type { SettingsStore, StoredSettings } from '../../../src/tenant/settings/settings-store.ts';
import { migratedStore } from '../../support/embedded-store.ts';

async function read(settings: SettingsStore): Promise<StoredSettings> {
  const all = await settings.readAll();
  if (!all.ok) throw new Error(all.error.message);
  return all.value;
}

describe('tenant settings store', () => {
  let store: Store;
  let settings: SettingsStore;
  before(async () => {
    store = await migratedStore('settings_store');
    settings = createSettingsStore(store, { database: store.database, cluster: undefined });
  });
  after(async () => {
    await store.close();
  });

  it('reads nothing from an empty table', async () => {
    expect(await read(settings)).to.deep.equal({ stack: { limits: {}, retention: {} }, tenants: new Map() });
  });

  it("writes one source's fields, leaves the others, and unsets a field with null", async () => {
    expect((await settings.write('api', 'acme', { limits: { maxQueryDays: 10, maxConcurrentQueries: 2 }, retention: { logsDays: 5 } })).ok).to.equal(true);
    expect((await settings.write('tenant', 'acme', { limits: { maxQueryDays: 3 } })).ok).to.equal(true);
    expect((await settings.write('api', 'acme', { limits: { maxConcurrentQueries: null } })).ok).to.equal(true);
    const all = await read(settings);
    expect(all.tenants.get('acme')).to.deep.equal({
      api: { limits: { maxQueryDays: 10 }, retention: { logsDays: 5 } },
      tenant: { limits: { maxQueryDays: 3 }, retention: {} },
    });
  });

  it("replaces a source's complete set: fields absent are unset; stack values live under no tenant", async () => {
    await settings.write('stack', 'ignored', { limits: { ingestBytesPerSecond: 1_048_576 }, retention: { metricsDays: 14 } });
    await settings.replace('stack', '', { retention: { tracesDays: 9 } });
    await settings.replace('tenant', 'acme', {});
    const all = await read(settings);
    expect(all.stack).to.deep.equal({ limits: {}, retention: { tracesDays: 9 } });
    expect(all.tenants.get('acme')).to.deep.equal({ api: { limits: { maxQueryDays: 10 }, retention: { logsDays: 5 } } });
    expect(all.tenants.has('ignored')).to.equal(false);
  });

  it('keeps large byte values exactly', async () => {
    await settings.write('api', 'big', { limits: { ingestBurstBytes: 100 * 1024 ** 3 } });
    expect((await read(settings)).tenants.get('big')?.api?.limits?.ingestBurstBytes).to.equal(100 * 1024 ** 3);
  });

  it("carries a write on one replica's cache to another's at its next re-read", async () => {
    const cache = (): SettingsCache =>
      new SettingsCache(createSettingsStore(store, { database: store.database, cluster: undefined }), {
        defaults: builtInDefaults,
        refreshMs: 5000,
        log: silentLogger,
      });
    const one = cache();
    const two = cache();
    await Promise.all([one.refresh(), two.refresh()]);
    expect((await one.write('api', 'shared', { limits: { maxConcurrentQueries: 3 } })).ok).to.equal(true);
    expect(one.effective('shared').limits.maxConcurrentQueries, 'the writer at once').to.equal(3);
    expect(two.effective('shared').limits.maxConcurrentQueries, 'the other before its re-read').to.equal(8);
    const generation = two.generation;
    expect(await two.refresh()).to.equal(true);
    expect(two.effective('shared').limits.maxConcurrentQueries).to.equal(3);
    expect(two.generation).to.equal(generation + 1);
  });
});
