import { expect } from 'chai';
import type { StoreFailure } from '../../../src/clickhouse/clickhouse-error.ts';
import { createLogger } from '../../../src/log/logger.ts';
import { fail, ok } from '../../../src/result.ts';
import type { Result } from '../../../src/result.ts';
import { SettingsCache } from '../../../src/tenant/settings/settings-cache.ts';
import type { SettingsStore, StoredSettings } from '../../../src/tenant/settings/settings-store.ts';
import { builtInDefaults } from '../../../src/tenant/settings/tenant-settings.ts';
import { ManualClock } from '../../support/manual-clock.ts';

/** A store port whose contents and failures the test sets; writes are recorded. */
class FakeStore implements SettingsStore {
  contents: StoredSettings = { stack: {}, tenants: new Map() };
  failing: StoreFailure | undefined;
  reads = 0;
  readonly writes: string[] = [];

  readAll(): Promise<Result<StoredSettings, StoreFailure>> {
    this.reads++;
    return Promise.resolve(this.failing === undefined ? ok(this.contents) : fail(this.failing));
  }

  write(source: string, tenantId: string): Promise<Result<undefined, StoreFailure>> {
    this.writes.push(`write ${source} ${tenantId}`);
    return Promise.resolve(ok(undefined));
  }

  replace(source: string, tenantId: string): Promise<Result<undefined, StoreFailure>> {
    this.writes.push(`replace ${source} ${tenantId}`);
    return Promise.resolve(ok(undefined));
  }
}

function cacheWith(store: FakeStore, clock: ManualClock, lines: string[] = []): SettingsCache {
  return new SettingsCache(store, {
    defaults: builtInDefaults,
    refreshMs: 5000,
    clock,
    log: createLogger('info', {}, (line) => {
      lines.push(line);
    }),
  });
}

describe('the tenant settings cache', () => {
  it('resolves stored values over the stack over the defaults, per tenant', async () => {
    const store = new FakeStore();
    store.contents = {
      stack: { limits: { maxQueryDays: 30 }, retention: { logsDays: 7 } },
      tenants: new Map([['acme', { tenant: { limits: { maxQueryDays: 2 } }, api: { limits: { maxQueryDays: 3, maxConcurrentQueries: 4 } } }]]),
    };
    const cache = cacheWith(store, new ManualClock());
    expect(await cache.refresh()).to.equal(true);
    const acme = cache.effective('acme');
    expect(acme.limits.maxQueryDays).to.equal(2);
    expect(acme.sources.limits).to.include({ maxQueryDays: 'tenant', maxConcurrentQueries: 'api', queryTimeoutSeconds: 'default' });
    expect(acme.retention.logsDays).to.equal(7);
    expect(acme.sources.retention.logsDays).to.equal('stack');
    const other = cache.effective('globex');
    expect(other.limits.maxQueryDays).to.equal(30);
    expect(other.sources.limits.maxQueryDays).to.equal('stack');
    expect(cache.stackValues()).to.deep.equal({ limits: { maxQueryDays: 30 }, retention: { logsDays: 7 } });
  });

  it('re-reads every refresh period after start, and bumps the generation only on a change', async () => {
    const clock = new ManualClock();
    const store = new FakeStore();
    const cache = cacheWith(store, clock);
    await cache.start();
    expect(store.reads).to.equal(1);
    const first = cache.generation;
    await clock.advance(5000);
    expect(store.reads).to.equal(2);
    expect(cache.generation, 'nothing changed').to.equal(first);
    store.contents = { stack: {}, tenants: new Map([['acme', { api: { retention: { tracesDays: 3 } } }]]) };
    expect(cache.effective('acme').retention.tracesDays).to.equal(30);
    await clock.advance(5000);
    expect(store.reads).to.equal(3);
    expect(cache.generation).to.equal(first + 1);
    expect(cache.effective('acme').retention.tracesDays).to.equal(3);
    cache.stop();
    await clock.advance(20_000);
    expect(store.reads, 'stopped').to.equal(3);
  });

  it('keeps the last good settings when a read fails, and logs a warning', async () => {
    const clock = new ManualClock();
    const store = new FakeStore();
    store.contents = { stack: {}, tenants: new Map([['acme', { api: { limits: { maxConcurrentQueries: 2 } } }]]) };
    const lines: string[] = [];
    const cache = cacheWith(store, clock, lines);
    await cache.start();
    store.failing = { kind: 'unavailable', message: 'connection refused', code: undefined };
    await clock.advance(5000);
    expect(store.reads).to.equal(2);
    expect(cache.effective('acme').limits.maxConcurrentQueries).to.equal(2);
    expect(lines.some((l) => l.includes('"level":"warn"') && l.includes('cannot read tenant settings'))).to.equal(true);
    store.failing = undefined;
    store.contents = { stack: {}, tenants: new Map() };
    await clock.advance(5000);
    expect(cache.effective('acme').limits.maxConcurrentQueries, 'recovered').to.equal(8);
    cache.stop();
  });

  it('refreshes right after each write, so this replica sees its own change at once', async () => {
    const store = new FakeStore();
    const cache = cacheWith(store, new ManualClock());
    await cache.refresh();
    store.contents = { stack: {}, tenants: new Map([['acme', { api: { limits: { maxQueryDays: 9 } } }]]) };
    expect((await cache.write('api', 'acme', { limits: { maxQueryDays: 9 } })).ok).to.equal(true);
    expect(store.writes).to.deep.equal(['write api acme']);
    expect(cache.effective('acme').limits.maxQueryDays).to.equal(9);
    store.contents = { stack: { limits: { maxQueryDays: 11 } }, tenants: new Map() };
    await cache.replace('stack', '', { limits: { maxQueryDays: 11 } });
    expect(cache.effective('acme').limits.maxQueryDays).to.equal(11);
    expect(cache.effective('acme').sources.limits.maxQueryDays).to.equal('stack');
  });
});
