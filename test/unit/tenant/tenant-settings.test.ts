import { expect } from 'chai';
import {
  boundViolation,
  builtInDefaults,
  limitBounds,
  limitFields,
  oldestVisibleNs,
  resolveEffective,
  retentionBounds,
  retentionDaysOf,
  retentionFields,
} from '../../../src/tenant/settings/tenant-settings.ts';
import { defaultSettingsView } from '../../../support/fixed-settings.ts';

const defaults = builtInDefaults;
const nsPerDay = 86_400n * 1_000_000_000n;

describe('tenant settings', () => {
  it('gives every field its default, from source "default", when no source sets it', () => {
    const s = resolveEffective({}, defaults);
    expect(s.limits).to.deep.equal(defaults.limits);
    expect(s.retention).to.deep.equal(defaults.retention);
    for (const f of limitFields) expect(s.sources.limits[f]).to.equal('default');
    for (const f of retentionFields) expect(s.sources.retention[f]).to.equal('default');
  });

  it('resolves each field on its own: tenant before api before stack before default', () => {
    const s = resolveEffective(
      {
        tenant: { limits: { maxQueryDays: 1 } },
        api: { limits: { maxQueryDays: 2, maxConcurrentQueries: 3 }, retention: { logsDays: 4 } },
        stack: { limits: { maxQueryDays: 5, maxConcurrentQueries: 6, queryTimeoutSeconds: 7 }, retention: { logsDays: 8, tracesDays: 9 } },
      },
      defaults,
    );
    expect(s.limits).to.deep.equal({ ...defaults.limits, maxQueryDays: 1, maxConcurrentQueries: 3, queryTimeoutSeconds: 7 });
    expect(s.sources.limits).to.deep.equal({
      ingestBytesPerSecond: 'default',
      ingestBurstBytes: 'default',
      maxQueryDays: 'tenant',
      maxConcurrentQueries: 'api',
      queryTimeoutSeconds: 'stack',
    });
    expect(s.retention).to.deep.equal({ logsDays: 4, tracesDays: 9, metricsDays: defaults.retention.metricsDays });
    expect(s.sources.retention).to.deep.equal({ logsDays: 'api', tracesDays: 'stack', metricsDays: 'default' });
  });

  it('reads retention per signal and hides rows older than it', () => {
    const s = resolveEffective({ api: { retention: { logsDays: 5 } } }, defaults);
    expect(retentionDaysOf(s, 'logs')).to.equal(5);
    expect(retentionDaysOf(s, 'traces')).to.equal(30);
    expect(retentionDaysOf(s, 'metrics')).to.equal(90);
    const now = 1_700_000_000_000_000_000n;
    expect(oldestVisibleNs(s, 'logs', now)).to.equal(now - 5n * nsPerDay);
    expect(oldestVisibleNs(s, 'metrics', now)).to.equal(now - 90n * nsPerDay);
  });

  it('checks bounds inclusively and refuses fractions', () => {
    expect(boundViolation(limitBounds.maxConcurrentQueries, 1)).to.equal(undefined);
    expect(boundViolation(limitBounds.maxConcurrentQueries, 1000)).to.equal(undefined);
    expect(boundViolation(limitBounds.maxConcurrentQueries, 0)).to.equal('must be at least 1');
    expect(boundViolation(limitBounds.maxConcurrentQueries, 1001)).to.equal('must be at most 1000');
    expect(boundViolation(limitBounds.ingestBytesPerSecond, 1023)).to.equal('must be at least 1024');
    expect(boundViolation(limitBounds.ingestBurstBytes, 100 * 1024 ** 3 + 1)).to.equal(`must be at most ${100 * 1024 ** 3}`);
    expect(boundViolation(retentionBounds.logsDays, 1.5)).to.equal('must be an integer from 1 to 36500');
  });

  it('keeps the built-in defaults within their bounds', () => {
    for (const f of limitFields) expect(boundViolation(limitBounds[f], builtInDefaults.limits[f]), f).to.equal(undefined);
    for (const f of retentionFields) expect(boundViolation(retentionBounds[f], builtInDefaults.retention[f]), f).to.equal(undefined);
  });

  it('gives every tenant the defaults in the default view', () => {
    const view = defaultSettingsView({ ...defaults, limits: { ...defaults.limits, maxQueryDays: 9 } });
    expect(view.effective('a').limits.maxQueryDays).to.equal(9);
    expect(view.effective('b').sources.limits.maxQueryDays).to.equal('default');
    expect(view.generation).to.equal(0);
  });
});
