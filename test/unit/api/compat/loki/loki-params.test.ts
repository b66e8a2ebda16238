import { expect } from 'chai';
import { parseBounds, parseDirection, parseLimit, parseStep, parseTimestamp } from '../../../../../api/compat/loki/loki-params.ts';
import type { Form } from '../../../../../api/compat/loki/loki-params.ts';

const form =
  (values: Record<string, string>): Form =>
  (name) =>
    values[name];
const now = 1_795_490_000_000_000_000n;

describe('Loki query parameters', () => {
  it('reads timestamps as Loki does: ns integers, seconds of 10 digits or fewer, float seconds, RFC3339', () => {
    expect(parseTimestamp('1795490000123456789')).to.equal(1_795_490_000_123_456_789n);
    expect(parseTimestamp('1795490000')).to.equal(1_795_490_000_000_000_000n);
    expect(parseTimestamp('1795490000.5')).to.equal(1_795_490_000_500_000_000n);
    expect(parseTimestamp('2026-11-24T03:00:00.25Z')).to.equal(BigInt(Date.UTC(2026, 10, 24, 3)) * 1_000_000n + 250_000_000n);
    expect(parseTimestamp('yesterday')).to.equal(undefined);
  });

  it('defaults end to now and start to end - since (1h)', () => {
    expect(parseBounds(form({}), now)).to.deep.equal({ ok: true, value: { startNs: now - 3_600_000_000_000n, endNs: now } });
    expect(parseBounds(form({ since: '5m' }), now)).to.deep.equal({ ok: true, value: { startNs: now - 300_000_000_000n, endNs: now } });
    const bad = parseBounds(form({ start: 'soon' }), now);
    expect(bad.ok ? '' : bad.error).to.include("could not parse 'start'");
  });

  it("takes Loki's default step and refuses more than 11,000 points", () => {
    const bounds = { startNs: 0n, endNs: 3_600_000_000_000n };
    expect(parseStep(form({}), bounds)).to.deep.equal({ ok: true, value: 14_000_000_000n });
    expect(parseStep(form({ step: '30s' }), bounds)).to.deep.equal({ ok: true, value: 30_000_000_000n });
    expect(parseStep(form({ step: '0.5' }), bounds)).to.deep.equal({ ok: true, value: 500_000_000n });
    const tooFine = parseStep(form({ step: '0.1' }), bounds);
    expect(tooFine.ok ? '' : tooFine.error).to.include('11,000 points');
    const zero = parseStep(form({ step: '0' }), bounds);
    expect(zero.ok ? '' : zero.error).to.include('zero or negative');
  });

  it('reads limit (100 by default, at most 5000) and direction', () => {
    expect(parseLimit(form({}))).to.deep.equal({ ok: true, value: 100 });
    expect(parseLimit(form({ limit: '5000' }))).to.deep.equal({ ok: true, value: 5000 });
    const over = parseLimit(form({ limit: '5001' }));
    expect(over.ok ? '' : over.error).to.include('max entries limit per query exceeded');
    expect(parseDirection(form({ direction: 'FORWARD' }))).to.deep.equal({ ok: true, value: 'forward' });
    expect(parseDirection(form({}))).to.deep.equal({ ok: true, value: 'backward' });
    expect(parseDirection(form({ direction: 'up' })).ok).to.equal(false);
  });
});
