// The one retry schedule (src/backoff.ts) of the operator's reconciles and watches and the gateway's INSERT retries.
import { expect } from 'chai';
import { backoffDelay } from '../../src/backoff.ts';

describe('backoff', () => {
  it('doubles up to the cap, with bounded jitter', () => {
    const p = { baseMs: 500, maxMs: 60_000 };
    expect([1, 2, 3, 10].map((n) => backoffDelay(p, n, () => 0.5))).to.deep.equal([500, 1000, 2000, 60_000]);
    expect(backoffDelay(p, 1, () => 0)).to.equal(400);
    expect(backoffDelay(p, 1, () => 1)).to.equal(600);
  });

  it('stays a number after many failures, even from a zero base', () => {
    expect(backoffDelay({ baseMs: 100, maxMs: 5000 }, 10_000, () => 0.5)).to.equal(5000);
    expect(backoffDelay({ baseMs: 0, maxMs: 5000 }, 10_000, () => 0.5)).to.equal(0);
  });
});
