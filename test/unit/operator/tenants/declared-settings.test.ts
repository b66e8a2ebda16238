// Declared settings, pure: reading specs and API answers, picking the values
// of one source, comparing, describing, and the status they become.
import { expect } from 'chai';
import {
  describeValues,
  heldBySource,
  reportedSettingsOf,
  sameValues,
  settingsStatus,
  settingValuesOf,
} from '../../../../operator/tenants/declared-settings.ts';

const apiTenant = {
  id: 'acme',
  name: 'ACME',
  limits: { ingestBytesPerSecond: 1048576, ingestBurstBytes: 4194304, maxConcurrentQueries: 8, maxQueryDays: 7, queryTimeoutSeconds: 30 },
  retention: { logsDays: 3, tracesDays: 30, metricsDays: 90 },
  sources: {
    limits: { ingestBytesPerSecond: 'tenant', ingestBurstBytes: 'stack', maxConcurrentQueries: 'default', maxQueryDays: 'api', queryTimeoutSeconds: 'default' },
    retention: { logsDays: 'tenant', tracesDays: 'default', metricsDays: 'default' },
  },
};

describe('operator declared settings', () => {
  it('reads the known numeric fields of a spec, both groups always present', () => {
    expect(settingValuesOf(undefined)).to.deep.equal({ limits: {}, retention: {} });
    expect(settingValuesOf({ displayName: 'x', limits: { maxQueryDays: 7, typo: 3, queryTimeoutSeconds: '9' }, retention: { logsDays: 3 } })).to.deep.equal({
      limits: { maxQueryDays: 7 },
      retention: { logsDays: 3 },
    });
  });

  it('reads effective values and sources from an API tenant, and nothing from one without settings', () => {
    expect(reportedSettingsOf({ id: 'old', name: 'API without settings' })).to.equal(undefined);
    const reported = reportedSettingsOf({ ...apiTenant, sources: { ...apiTenant.sources, retention: { logsDays: 'elsewhere' } } });
    expect(reported?.limits.maxQueryDays).to.equal(7);
    expect(reported?.sources.retention).to.deep.equal({});
  });

  it("picks the values of one source: the 'tenant' set is what a Tenant resource declared", () => {
    const reported = reportedSettingsOf(apiTenant);
    expect(heldBySource(reported, 'tenant')).to.deep.equal({ limits: { ingestBytesPerSecond: 1048576 }, retention: { logsDays: 3 } });
    expect(heldBySource(reported, 'api')).to.deep.equal({ limits: { maxQueryDays: 7 }, retention: {} });
    expect(heldBySource(undefined, 'tenant')).to.deep.equal({ limits: {}, retention: {} });
  });

  it('compares sets field by field: an absent group equals an empty one, a missing field differs', () => {
    expect(sameValues({}, { limits: {}, retention: {} })).to.equal(true);
    expect(sameValues({ limits: { maxQueryDays: 7 } }, { limits: { maxQueryDays: 7 }, retention: {} })).to.equal(true);
    expect(sameValues({ limits: { maxQueryDays: 7 } }, { limits: { maxQueryDays: 8 } })).to.equal(false);
    expect(sameValues({ limits: { maxQueryDays: 7 } }, {})).to.equal(false);
    expect(sameValues({ retention: { logsDays: 1 } }, { retention: { tracesDays: 1 } })).to.equal(false);
  });

  it('describes a set for events', () => {
    expect(describeValues({ limits: {}, retention: {} })).to.equal('nothing');
    expect(describeValues({ limits: { maxQueryDays: 7 }, retention: { logsDays: 3 } })).to.equal('limits.maxQueryDays=7, retention.logsDays=3');
  });

  it('status shows effective values and sources, integers only (the CRD status schema)', () => {
    const reported = reportedSettingsOf({ ...apiTenant, limits: { ...apiTenant.limits, maxQueryDays: 7.5 } });
    if (reported === undefined) throw new Error('no settings');
    const status = settingsStatus(reported);
    expect(status.limits).to.deep.equal({ ingestBytesPerSecond: 1048576, ingestBurstBytes: 4194304, maxConcurrentQueries: 8, queryTimeoutSeconds: 30 });
    expect(status.retention).to.deep.equal(apiTenant.retention);
    expect(status.sources).to.deep.equal(apiTenant.sources);
  });
});
