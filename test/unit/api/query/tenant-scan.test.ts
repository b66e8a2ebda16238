// The one way a read API starts a statement (api/query/tenant-scan.ts):
// retention and maxQueryDays on every range, the tenant bound first, the
// budget carried to the runner.
import { expect } from 'chai';
import { DirectoryScan, TenantScan } from '../../../../api/query/tenant-scan.ts';
import type { Principal } from '../../../../src/auth/api-keys.ts';
import { nsPerDay } from '../../../../src/tenant/settings/tenant-settings.ts';
import { settingsWith } from '../../../support/tenant-scans.ts';

const now = 1_800_000_000n * 1_000_000_000n;
const key: Principal = { name: 'k', scopes: new Set(['read'] as const), tenants: new Set(['acme', 'initech']) };
const settings = settingsWith((s) => ({
  ...s,
  limits: { ...s.limits, maxQueryDays: 2, maxConcurrentQueries: 3, queryTimeoutSeconds: 7 },
  retention: { ...s.retention, logsDays: 5 },
}));
const open = (signal: 'logs' | 'metrics' | 'usage', abort?: AbortSignal): TenantScan =>
  TenantScan.open({ now: () => now, settings }, { principal: key, tenantId: 'acme', ...(abort === undefined ? {} : { abort }) }, signal);

describe('TenantScan', () => {
  it("moves a range's start up to the oldest row retention keeps, and empties a range wholly past it", () => {
    const scan = open('logs');
    expect(scan.visibleFromNs).to.equal(now - 5n * nsPerDay);
    expect(scan.window({ startNs: now - 6n * nsPerDay, endNs: now - 4n * nsPerDay })).to.deep.equal({
      ok: true,
      value: { startNs: now - 5n * nsPerDay, endNs: now - 4n * nsPerDay },
    });
    expect(scan.window({ startNs: now - 9n * nsPerDay, endNs: now - 8n * nsPerDay })).to.deep.equal({
      ok: true,
      value: { startNs: now - 8n * nsPerDay, endNs: now - 8n * nsPerDay },
    });
  });

  it('refuses a visible range longer than maxQueryDays, counting the grace a read adds before a checked range', () => {
    const scan = open('logs');
    const long = scan.window({ startNs: now - 3n * nsPerDay, endNs: now });
    expect(!long.ok && long.error.message).to.match(/spans 3 days .* more than this tenant's limits\.maxQueryDays \(2\)/);
    expect(scan.window({ startNs: now - 2n * nsPerDay, endNs: now }).ok).to.equal(true);
    const lookback = { startNs: now - 2n * nsPerDay - 300_000_000_000n, endNs: now };
    expect(scan.window(lookback).ok).to.equal(false);
    expect(scan.window(lookback, { graceNs: 300_000_000_000n }).ok).to.equal(true);
    // Retention clips first: six days asked, five visible, still too long; a range past retention is not.
    expect(scan.window({ startNs: now - 6n * nsPerDay, endNs: now }).ok).to.equal(false);
  });

  it('holds usage to neither retention nor the range limit', () => {
    const scan = open('usage');
    expect(scan.window({ startNs: 0n, endNs: now })).to.deep.equal({ ok: true, value: { startNs: 0n, endNs: now } });
  });

  it("binds the tenant first in every statement and carries the tenant's budget", () => {
    const abort = new AbortController().signal;
    const scan = open('metrics', abort);
    const statement = scan.statement();
    expect(statement.tenantIs()).to.equal('tenant_id = {p0:String}');
    expect(statement.params.values).to.deep.equal({ p0: 'acme' });
    const built = statement.finish(`SELECT 1 FROM t WHERE ${statement.tenantIs()} AND x = ${statement.bind(5, 'Int64')}`);
    expect(built.params.values).to.deep.equal({ p0: 'acme', p1: 5 });
    expect(built.budget).to.deep.equal({ caller: { key, tenant: { id: 'acme', maxConcurrentQueries: 3 } }, timeoutMs: 7000, abort });
    expect(scan.statement().params.values).to.deep.equal({ p0: 'acme' });
  });

  it("reads the tenants directory only within the key's tenants, and across all for an all-tenants key", () => {
    const some = new DirectoryScan({ principal: key }).statement();
    expect(some.tenantIs()).to.equal('tenant_id IN {p0:Array(String)}');
    expect(some.params.values).to.deep.equal({ p0: ['acme', 'initech'] });
    const all = new DirectoryScan({ principal: { ...key, tenants: '*' } }).statement();
    expect(all.tenantIs()).to.equal('true');
    expect(new DirectoryScan({ principal: key }).tenant('acme').tenantIs()).to.equal('tenant_id = {p0:String}');
  });
});
