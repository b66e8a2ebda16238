// Tempo's request parameters: Go durations, logfmt tags, bounded integers,
// trace ids, time windows (retention, maxQueryDays), and stored attribute
// text read back as typed OTLP values.
import { expect } from 'chai';
import { typedValue } from '../../../../../api/compat/tempo/otlp-json.ts';
import { parseGoDuration } from '../../../../../api/query/durations.ts';
import { boundedInt, parseLogfmt } from '../../../../../api/compat/tempo/tempo-params.ts';
import { lookupWindow, recentNs, searchWindow } from '../../../../../api/compat/tempo/tempo-window.ts';
import { parseTraceId } from '../../../../../api/compat/tempo/trace-by-id.ts';
import { searchTraceId } from '../../../../../api/compat/tempo/trace-search.ts';
import type { TenantScan } from '../../../../../api/query/tenant-scan.ts';
import { scanOf, settingsWith } from '../../../../support/tenant-scans.ts';
import { nsPerDay } from '../../../../../src/tenant/settings/tenant-settings.ts';
import { defaultSettingsView } from '../../../../../support/fixed-settings.ts';

const settings = defaultSettingsView().effective('t');
const scan = (at: bigint, maxQueryDays?: number): TenantScan =>
  scanOf('t', 'traces', at, maxQueryDays === undefined ? undefined : settingsWith((s) => ({ ...s, limits: { ...s.limits, maxQueryDays } })));
const now = 1_800_000_000n * 1_000_000_000n;

describe('Tempo parameters', () => {
  it('reads Go durations', () => {
    expect(parseGoDuration('100ms')).to.equal(100_000_000n);
    expect(parseGoDuration('1m30s')).to.equal(90_000_000_000n);
    expect(parseGoDuration('1.5s')).to.equal(1_500_000_000n);
    expect(parseGoDuration('10')).to.equal(undefined);
    expect(parseGoDuration('ms')).to.equal(undefined);
  });

  it('reads logfmt tags, quoted values included', () => {
    const tags = parseLogfmt('service.name=cart http.url="/a b" k=');
    expect(tags.ok && [...tags.value]).to.deep.equal([
      ['service.name', 'cart'],
      ['http.url', '/a b'],
      ['k', ''],
    ]);
    expect(parseLogfmt('"oops').ok).to.equal(false);
  });

  it('bounds limit-like integers with a message naming the parameter', () => {
    expect(boundedInt(undefined, 'limit', 20, 100)).to.deep.equal({ ok: true, value: 20 });
    expect(boundedInt('101', 'limit', 20, 100)).to.deep.equal({ ok: false, error: 'invalid limit: 101 is more than the most this server allows (100)' });
    expect(boundedInt('0', 'spss', 3, 100).ok).to.equal(false);
    expect(boundedInt('-1', 'spss', 3, 100).ok).to.equal(false);
  });

  it('reads trace ids as Tempo does: hex, padded to 32 digits; search shows them without leading zeros', () => {
    expect(parseTraceId('ABCD')).to.deep.equal({ ok: true, value: '0000000000000000000000000000abcd' });
    expect(parseTraceId('zz')).to.deep.equal({ ok: false, error: "trace IDs can only contain hex characters: invalid character 'z' at position 1" });
    expect(parseTraceId('a'.repeat(33)).ok).to.equal(false);
    expect(searchTraceId('000abc')).to.equal('abc');
    expect(searchTraceId('0000')).to.equal('0');
  });

  it('looks back an hour without start, refuses a range longer than maxQueryDays, and clamps a lookup to retention', () => {
    const w = searchWindow({}, scan(now), now);
    expect(w.ok && w.value.startNs).to.equal(now + 60_000_000_000n - recentNs);
    const tooLong = searchWindow({ start: '1', end: '1800000000' }, scan(now, 1), now);
    expect(tooLong.ok).to.equal(false);
    expect(searchWindow({ start: 'x' }, scan(now), now)).to.deep.equal({ ok: false, error: 'invalid start: "x" is not a Unix time in seconds' });
    const lookup = lookupWindow({}, scan(now), now);
    expect(lookup.ok && lookup.value.startNs).to.equal(now - BigInt(settings.retention.tracesDays) * nsPerDay);
  });

  it('reads stored attribute text back as typed OTLP values', () => {
    expect(typedValue('42')).to.deep.equal({ intValue: '42' });
    expect(typedValue('-0.5')).to.deep.equal({ doubleValue: -0.5 });
    expect(typedValue('true')).to.deep.equal({ boolValue: true });
    expect(typedValue('GET')).to.deep.equal({ stringValue: 'GET' });
    expect(typedValue('1e3')).to.deep.equal({ doubleValue: 1000 });
  });
});
