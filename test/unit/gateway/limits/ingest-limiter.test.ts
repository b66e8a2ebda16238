// Per-tenant limits on one replica (settings changes take effect, idle
// buckets are dropped) and two replicas sharing one global limit through the
// replica registry: each gets half, and when one stops beating the other gets
// the whole.
import { expect } from 'chai';
import { IngestLimiter } from '../../../../gateway/limits/ingest-limiter.ts';
import { livePeriods, ReplicaCount } from '../../../../gateway/limits/replica-count.ts';
import type { ReplicaRegistry } from '../../../../gateway/limits/replica-registry.ts';
import { ok } from '../../../../src/result.ts';
import { builtInDefaults, resolveEffective } from '../../../../src/tenant/settings/tenant-settings.ts';
import type { EffectiveSettings, TenantLimits, TenantSettingsView } from '../../../../src/tenant/settings/tenant-settings.ts';
import type { Clock } from '../../../../src/clock.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

/** Settings where every tenant has `limits` over the built-in defaults; set() changes them and the generation. */
class TestSettings implements TenantSettingsView {
  generation = 0;
  #effective: EffectiveSettings;

  constructor(limits: Partial<TenantLimits>) {
    this.#effective = resolveEffective({ api: { limits } }, builtInDefaults);
  }

  effective(): EffectiveSettings {
    return this.#effective;
  }

  set(limits: Partial<TenantLimits>): void {
    this.#effective = resolveEffective({ api: { limits } }, builtInDefaults);
    this.generation++;
  }
}

/** The gateway_replicas table in memory, on the test's clock. */
class MemoryRegistry implements ReplicaRegistry {
  readonly #seen = new Map<string, number>();
  readonly #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  beat(replicaId: string, liveWithinMs: number): ReturnType<ReplicaRegistry['beat']> {
    const now = this.#clock.now();
    this.#seen.set(replicaId, now);
    return Promise.resolve(ok([...this.#seen.values()].filter((at) => at > now - liveWithinMs).length));
  }
}

/** Bytes a flooding client gets accepted in `ms` on one limiter: 1 KB requests, one per millisecond. */
async function flood(clock: ManualClock, limiters: readonly IngestLimiter[], ms: number): Promise<number[]> {
  const accepted = limiters.map(() => 0);
  for (let t = 0; t < ms; t++) {
    limiters.forEach((l, i) => {
      if (l.admits('a')) {
        l.charge('a', 1000);
        accepted[i] = (accepted[i] ?? 0) + 1000;
      }
    });
    await clock.advance(1);
  }
  return accepted;
}

describe('ingest limiter', () => {
  it('refuses a tenant over its limit while another tenant is admitted, with a retry time', () => {
    const clock = new ManualClock();
    const limiter = new IngestLimiter(new TestSettings({ ingestBytesPerSecond: 1000, ingestBurstBytes: 2000 }), { count: 1 }, clock);
    limiter.charge('a', 2500);
    expect(limiter.admits('a')).to.equal(false);
    expect(limiter.retryAfterSeconds('a')).to.equal(1);
    expect(limiter.admits('b')).to.equal(true);
    expect(limiter.refusal('a')).to.contain('limits.ingestBytesPerSecond 1000 bytes/s');
  });

  it('follows a settings change at once (on the generation), keeping what the bucket owes', () => {
    const clock = new ManualClock();
    const settings = new TestSettings({ ingestBytesPerSecond: 1000, ingestBurstBytes: 2000 });
    const limiter = new IngestLimiter(settings, { count: 1 }, clock);
    limiter.charge('a', 3000);
    expect(limiter.retryAfterSeconds('a')).to.equal(2);
    settings.set({ ingestBytesPerSecond: 100_000, ingestBurstBytes: 200_000 });
    expect(limiter.share('a')).to.deep.equal({ rate: 100_000, burst: 200_000 });
    expect(limiter.retryAfterSeconds('a')).to.equal(1);
  });

  it('drops buckets that have refilled', async () => {
    const clock = new ManualClock();
    const limiter = new IngestLimiter(new TestSettings({ ingestBytesPerSecond: 1000, ingestBurstBytes: 2000 }), { count: 1 }, clock);
    limiter.charge('a', 2000);
    limiter.charge('b', 100);
    limiter.charge('c', 1500);
    await clock.advance(500); // b has refilled, a and c not yet
    limiter.sweep();
    expect(limiter.size).to.equal(2);
    await clock.advance(1600);
    limiter.sweep();
    expect(limiter.size).to.equal(0);
    expect(limiter.admits('a')).to.equal(true);
  });

  it('two replicas share one global limit: each gets half; when one stops beating the other gets the whole', async () => {
    const clock = new ManualClock();
    const registry = new MemoryRegistry(clock);
    const settings = new TestSettings({ ingestBytesPerSecond: 10_000, ingestBurstBytes: 10_000 });
    const periodMs = 1000;
    const one = new ReplicaCount(registry, { periodMs }, clock);
    const two = new ReplicaCount(registry, { periodMs }, clock);
    await one.start();
    await two.start();
    await clock.advance(periodMs); // both have seen both
    expect([one.count, two.count]).to.deep.equal([2, 2]);
    const limiters = [new IngestLimiter(settings, one, clock), new IngestLimiter(settings, two, clock)];
    expect(limiters[0]?.share('a')).to.deep.equal({ rate: 5000, burst: 5000 });

    // 10 s of flood on both: together they accept the global 10 KB/s (plus the burst), each half.
    const both = await flood(clock, limiters, 10_000);
    const total = both.reduce((a, b) => a + b, 0);
    expect(total).to.be.within(0.9 * 110_000, 1.1 * 110_000);
    expect(both[0]).to.be.within(0.9 * 55_000, 1.1 * 55_000);

    // Replica two stops; within the live window replica one counts itself alone and takes the whole limit.
    await two.stop();
    await clock.advance((livePeriods + 1) * periodMs);
    expect(one.count).to.equal(1);
    const alone = await flood(clock, limiters.slice(0, 1), 10_000);
    expect(alone[0]).to.be.within(0.9 * 100_000, 1.1 * 110_000);
    await one.stop();
  });

  it('keeps the last count when the registry fails, and starts at 1', async () => {
    const clock = new ManualClock();
    const failures: string[] = [];
    const count = new ReplicaCount(
      { beat: () => Promise.resolve({ ok: false, error: 'down' }) },
      {
        periodMs: 1000,
        onFailure: (m) => {
          failures.push(m);
        },
      },
      clock,
    );
    await count.start();
    expect(count.count).to.equal(1);
    expect(failures).to.deep.equal(['down']);
    await count.stop();
  });
});
