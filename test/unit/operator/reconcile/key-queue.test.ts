import { expect } from 'chai';
import { backoffDelay } from '../../../../operator/reconcile/backoff.ts';
import { KeyQueue } from '../../../../operator/reconcile/key-queue.ts';
import type { HandlerResult } from '../../../../operator/reconcile/key-queue.ts';

const tick = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('operator key queue', () => {
  it('runs one key at a time, and once more when it was added while running', async () => {
    let running = 0;
    let maxRunning = 0;
    const runs: string[] = [];
    let release: () => void = () => undefined;
    const queue = new KeyQueue(async (key): Promise<HandlerResult> => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      runs.push(key);
      if (runs.length === 1) await new Promise<void>((r) => { release = r; });
      running--;
      return { ok: true };
    }, { baseMs: 1, maxMs: 1 }, 4);
    queue.add('a');
    await tick();
    queue.add('a');
    queue.add('a');
    queue.add('b');
    await tick();
    expect(runs).to.deep.equal(['a', 'b']);
    release();
    await tick(20);
    expect(runs).to.deep.equal(['a', 'b', 'a']);
    expect(maxRunning).to.equal(2);
    await queue.stop();
  });

  it('retries a failing key with growing delays and resets after success', async () => {
    const at: number[] = [];
    const start = Date.now();
    const queue = new KeyQueue((): Promise<HandlerResult> => {
      at.push(Date.now() - start);
      return Promise.resolve(at.length < 4 ? { ok: false, message: 'boom' } : { ok: true });
    }, { baseMs: 20, maxMs: 1000 }, 1);
    queue.add('k');
    await tick(400);
    expect(at).to.have.length(4);
    const gaps = at.slice(1).map((t, i) => t - (at[i] ?? 0));
    expect(gaps[1] ?? 0).to.be.greaterThan((gaps[0] ?? 0) * 1.2);
    expect(gaps[2] ?? 0).to.be.greaterThan((gaps[1] ?? 0) * 1.2);
    await queue.stop();
  });

  it('addUnlessScheduled keeps a pending backoff; add supersedes it', async () => {
    let calls = 0;
    const queue = new KeyQueue((): Promise<HandlerResult> => { calls++; return Promise.resolve({ ok: false, message: 'down' }); }, { baseMs: 10_000, maxMs: 10_000 }, 1);
    queue.add('k');
    await tick();
    queue.addUnlessScheduled('k');
    await tick();
    expect(calls).to.equal(1);
    queue.add('k');
    await tick();
    expect(calls).to.equal(2);
    await queue.stop();
  });

  it('backoff doubles up to the cap, with bounded jitter', () => {
    const p = { baseMs: 500, maxMs: 60_000 };
    expect([1, 2, 3, 10].map((n) => backoffDelay(p, n, () => 0.5))).to.deep.equal([500, 1000, 2000, 60_000]);
    expect(backoffDelay(p, 1, () => 0)).to.equal(400);
    expect(backoffDelay(p, 1, () => 1)).to.equal(600);
  });
});
