// Pushing declared settings through a fake TenantDirectory (the port): a PUT
// only where the API's values of the pushed source differ from the declared
// ones, replace semantics, failures as values.
import { expect } from 'chai';
import { fail, ok } from '../../../../src/result.ts';
import type { Result } from '../../../../src/result.ts';
import type { SettingSource, SettingValues } from '../../../../src/tenant/settings/tenant-settings.ts';
import { pushDeclaredSettings, pushTenantDefaults } from '../../../../operator/tenants/settings-push.ts';
import type { StoredTenant, TenantDirectory } from '../../../../operator/tenants/tenant-directory.ts';

/** A directory that records calls; tenant answers carry the declared values with source 'tenant'. */
class FakeDirectory implements TenantDirectory {
  readonly calls: string[] = [];
  defaults: Required<SettingValues> | undefined = { limits: {}, retention: {} };
  failPuts = false;

  async list(): Promise<Result<StoredTenant[], string>> {
    return Promise.resolve(ok([]));
  }
  async get(): Promise<Result<StoredTenant | undefined, string>> {
    return Promise.resolve(ok(undefined));
  }
  async rename(id: string, name: string): Promise<Result<StoredTenant, string>> {
    return Promise.resolve(ok({ id, name }));
  }

  async putDeclaredSettings(id: string, declared: Required<SettingValues>): Promise<Result<StoredTenant, string>> {
    this.calls.push(`PUT ${id}?source=tenant ${JSON.stringify(declared)}`);
    if (this.failPuts) return Promise.resolve(fail('HTTP 400: limits.maxQueryDays must be at least 1'));
    return Promise.resolve(ok(tenantWith(id, declared, 'tenant')));
  }

  async getTenantDefaults(): Promise<Result<Required<SettingValues> | undefined, string>> {
    this.calls.push('GET defaults');
    return Promise.resolve(ok(this.defaults));
  }

  async putTenantDefaults(values: Required<SettingValues>): Promise<Result<Required<SettingValues>, string>> {
    this.calls.push(`PUT defaults ${JSON.stringify(values)}`);
    this.defaults = values;
    return Promise.resolve(ok(values));
  }
}

function tenantWith(id: string, values: SettingValues, source: SettingSource): StoredTenant {
  const from = (o: object | undefined): Record<string, SettingSource> => Object.fromEntries(Object.keys(o ?? {}).map((k) => [k, source]));
  return {
    id,
    name: '',
    settings: { limits: { ...values.limits }, retention: { ...values.retention }, sources: { limits: from(values.limits), retention: from(values.retention) } },
  };
}

describe('operator settings push', () => {
  it('pushes a Tenant’s declared set when the API holds other tenant-source values, and nothing when equal', async () => {
    const dir = new FakeDirectory();
    const declared = { limits: { maxQueryDays: 7 }, retention: { logsDays: 3 } };
    const first = await pushDeclaredSettings(dir, 'acme', declared, { id: 'acme', name: '' });
    expect(first.ok && first.value.pushed).to.equal(true);
    expect(dir.calls).to.deep.equal([`PUT acme?source=tenant ${JSON.stringify(declared)}`]);
    const stored = first.ok && first.value.pushed ? first.value.now : undefined;
    const again = await pushDeclaredSettings(dir, 'acme', declared, stored);
    expect(again).to.deep.equal(ok({ pushed: false }));
    expect(dir.calls).to.have.length(1);
  });

  it('reverts a tenant-source value changed behind the operator’s back (replace: the whole declared set)', async () => {
    const dir = new FakeDirectory();
    const declared = { limits: { maxQueryDays: 7 }, retention: {} };
    const drifted = tenantWith('acme', { limits: { maxQueryDays: 99, queryTimeoutSeconds: 5 } }, 'tenant');
    const r = await pushDeclaredSettings(dir, 'acme', declared, drifted);
    expect(r.ok && r.value.pushed ? r.value.was : undefined).to.deep.equal({ limits: { maxQueryDays: 99, queryTimeoutSeconds: 5 }, retention: {} });
    expect(dir.calls).to.deep.equal([`PUT acme?source=tenant ${JSON.stringify(declared)}`]);
  });

  it('an equal value from another source is not the declared one: pushed, so it takes the tenant source', async () => {
    const dir = new FakeDirectory();
    const r = await pushDeclaredSettings(
      dir,
      'acme',
      { limits: { maxQueryDays: 7 }, retention: {} },
      tenantWith('acme', { limits: { maxQueryDays: 7 } }, 'api'),
    );
    expect(r.ok && r.value.pushed).to.equal(true);
  });

  it('a Tenant that declares nothing removes the tenant-source values the API holds, and costs nothing otherwise', async () => {
    const dir = new FakeDirectory();
    const none = { limits: {}, retention: {} };
    expect(await pushDeclaredSettings(dir, 'a', none, { id: 'a', name: '' })).to.deep.equal(ok({ pushed: false }));
    expect(await pushDeclaredSettings(dir, 'b', none, undefined)).to.deep.equal(ok({ pushed: false }));
    expect(await pushDeclaredSettings(dir, 'c', none, tenantWith('c', { limits: { maxQueryDays: 3 } }, 'api'))).to.deep.equal(ok({ pushed: false }));
    expect(dir.calls).to.deep.equal([]);
    const r = await pushDeclaredSettings(dir, 'd', none, tenantWith('d', { retention: { logsDays: 3 } }, 'tenant'));
    expect(r.ok && r.value.pushed).to.equal(true);
    expect(dir.calls).to.deep.equal([`PUT d?source=tenant ${JSON.stringify(none)}`]);
  });

  it('returns a refused PUT as a failure value', async () => {
    const dir = new FakeDirectory();
    dir.failPuts = true;
    const r = await pushDeclaredSettings(dir, 'acme', { limits: { maxQueryDays: 7 }, retention: {} }, undefined);
    expect(r).to.deep.equal(fail('HTTP 400: limits.maxQueryDays must be at least 1'));
  });

  it('pushes stack tenantDefaults when they differ from the API’s, replacing them', async () => {
    const dir = new FakeDirectory();
    const declared = { limits: { maxConcurrentQueries: 4 }, retention: { tracesDays: 14 } };
    const r = await pushTenantDefaults(dir, declared);
    expect(r.ok && r.value.pushed).to.equal(true);
    expect(await pushTenantDefaults(dir, declared)).to.deep.equal(ok({ pushed: false }));
    dir.defaults = { limits: { maxConcurrentQueries: 4, maxQueryDays: 1 }, retention: { tracesDays: 14 } };
    const reverted = await pushTenantDefaults(dir, declared);
    expect(reverted.ok && reverted.value.pushed ? reverted.value.was : undefined).to.deep.equal({
      limits: { maxConcurrentQueries: 4, maxQueryDays: 1 },
      retention: { tracesDays: 14 },
    });
    const removed = await pushTenantDefaults(dir, { limits: {}, retention: {} });
    expect(removed.ok && removed.value.pushed).to.equal(true);
    expect(dir.calls.filter((c) => c.startsWith('PUT'))).to.deep.equal([
      `PUT defaults ${JSON.stringify(declared)}`,
      `PUT defaults ${JSON.stringify(declared)}`,
      `PUT defaults ${JSON.stringify({ limits: {}, retention: {} })}`,
    ]);
  });

  it('an API without settings routes is fine until the stack declares tenantDefaults', async () => {
    const dir = new FakeDirectory();
    dir.defaults = undefined;
    expect(await pushTenantDefaults(dir, { limits: {}, retention: {} })).to.deep.equal(ok({ pushed: false }));
    const r = await pushTenantDefaults(dir, { limits: { maxQueryDays: 7 }, retention: {} });
    expect(r.ok ? '' : r.error).to.contain('/v1/settings/tenant-defaults');
  });
});
