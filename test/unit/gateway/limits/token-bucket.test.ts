// Token bucket arithmetic: refill, burst cap, debt and its cap, retry times, reconfiguration.
import { expect } from 'chai';
import { TokenBucket } from '../../../../gateway/limits/token-bucket.ts';

describe('token bucket', () => {
  it('starts full, refills at its rate and never holds more than its burst', () => {
    const b = new TokenBucket(1000, 4000, 0);
    expect(b.tokens(0)).to.equal(4000);
    b.charge(3000, 0);
    expect(b.tokens(0)).to.equal(1000);
    expect(b.tokens(500)).to.equal(1500);
    expect(b.tokens(10_000)).to.equal(4000);
    expect(b.full(10_000)).to.equal(true);
  });

  it('admits while it holds tokens, goes into debt by the request that crosses zero, and admits again once the debt is repaid', () => {
    const b = new TokenBucket(1000, 2000, 0);
    expect(b.admits(0)).to.equal(true);
    b.charge(1500, 0);
    expect(b.admits(0)).to.equal(true);
    b.charge(1500, 0);
    expect(b.tokens(0)).to.equal(-1000);
    expect(b.admits(0)).to.equal(false);
    expect(b.secondsUntilAdmitted(0)).to.equal(2); // 1,001 bytes at 1,000 bytes/s
    expect(b.admits(1000)).to.equal(false); // exactly zero is not enough
    expect(b.admits(1001)).to.equal(true);
  });

  it('does not cap the debt: requests larger than the burst are held to the rate too', () => {
    const b = new TokenBucket(1000, 2000, 0);
    b.charge(100_000, 0);
    expect(b.tokens(0)).to.equal(-98_000);
    expect(b.secondsUntilAdmitted(0)).to.equal(99);
    expect(b.admits(98_000)).to.equal(false);
    expect(b.admits(98_001)).to.equal(true);
    // 16 KB requests every 10 ms against 1 KB/s and a 1 KB burst: one per 16 s, not one per second.
    const small = new TokenBucket(1000, 1000, 0);
    let accepted = 0;
    for (let t = 0; t < 64_000; t += 10) {
      if (small.admits(t)) {
        small.charge(16_000, t);
        accepted += 16_000;
      }
    }
    // The burst plus 64 s at the rate is 65 KB: four requests, and the one that crossed it (a cap of one burst let 64 through).
    expect(accepted).to.equal(5 * 16_000);
  });

  it('answers at least 1 second to retry, and refunds with a negative charge', () => {
    const b = new TokenBucket(1e9, 1e9, 0);
    b.charge(1e9, 0);
    expect(b.secondsUntilAdmitted(0)).to.equal(1);
    b.charge(-500, 0);
    expect(b.tokens(0)).to.equal(500);
  });

  it('keeps its tokens when reconfigured, dropping those above the new burst', () => {
    const b = new TokenBucket(1000, 4000, 0);
    b.charge(1000, 0);
    b.reconfigure(500, 2000, 0);
    expect(b.tokens(0)).to.equal(2000);
    b.charge(2000, 0);
    expect(b.tokens(1000)).to.equal(500);
    expect([b.rate, b.burst]).to.deep.equal([500, 2000]);
  });

  it('accepts rate × time + burst over a long flood, within one request', () => {
    const b = new TokenBucket(10_000, 20_000, 0);
    let accepted = 0;
    // A client sending 3 KB every millisecond (300 KB/s, 30× the rate) for 10 s.
    for (let t = 0; t < 10_000; t++) {
      if (b.admits(t)) {
        b.charge(3000, t);
        accepted += 3000;
      }
    }
    const expected = 10_000 * 10 + 20_000;
    expect(accepted).to.be.within(expected - 3000, expected + 3000);
  });
});
