import { expect } from 'chai';
import { KeyQueue, objectKeyId } from '../../../../operator/reconcile/key-queue.ts';
import type { Handled, ObjectKey } from '../../../../operator/reconcile/key-queue.ts';
import type { Clock } from '../../../../src/clock.ts';
import { fail, ok } from '../../../../src/result.ts';
import type { Result } from '../../../../src/result.ts';

/** A clock whose timers fire only when the test says so, at a virtual time. */
class ManualClock implements Clock {
  #now = 0;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();
  #next = 0;
  now(): number {
    return this.#now;
  }
  // The injected clock's timer: it fires only when the test advances time, never by real time.
  setTimeout(fn: () => void, ms: number): { cancel(): void } {
    const id = ++this.#next;
    this.#timers.set(id, { at: this.#now + ms, fn });
    return {
      cancel: () => {
        this.#timers.delete(id);
      },
    };
  }
  get pending(): number {
    return this.#timers.size;
  }
  /** Moves time to the earliest timer and fires it. */
  fireNext(): void {
    const [id, timer] = [...this.#timers].sort((a, b) => a[1].at - b[1].at)[0] ?? [];
    if (id === undefined || timer === undefined) throw new Error('no timer pending');
    this.#timers.delete(id);
    this.#now = timer.at;
    timer.fn();
  }
}

const k = (name: string): ObjectKey => ({ namespace: 'ns', name });

function queue(
  handler: (key: ObjectKey) => Promise<Result<Handled, string>>,
  backoff: { baseMs: number; maxMs: number },
  concurrency: number,
  clock = new ManualClock(),
): KeyQueue<ObjectKey> {
  return new KeyQueue<ObjectKey>({ handler, idOf: objectKeyId, backoff, concurrency, clock });
}

describe('operator key queue', () => {
  it('runs one key at a time, and once more when it was added while running', async () => {
    let running = 0;
    let maxRunning = 0;
    const runs: string[] = [];
    let release: () => void = () => undefined;
    const q = queue(
      async (key): Promise<Result<Handled, string>> => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        runs.push(key.name);
        if (runs.length === 1)
          await new Promise<void>((r) => {
            release = r;
          });
        running--;
        return ok({});
      },
      { baseMs: 1, maxMs: 1 },
      4,
    );
    // A handler starts synchronously on add: 'a' is running and blocked on release.
    q.add(k('a'));
    q.add(k('a'));
    q.add({ namespace: 'ns', name: 'a' });
    q.add(k('b'));
    expect(runs).to.deep.equal(['a', 'b']);
    release();
    await q.whenIdle();
    expect(runs).to.deep.equal(['a', 'b', 'a']);
    expect(maxRunning).to.equal(2);
    await q.stop();
  });

  it('keys are typed: the same name in two namespaces is two keys', async () => {
    const runs: string[] = [];
    const q = queue(
      (key) => {
        runs.push(objectKeyId(key));
        return Promise.resolve(ok({}));
      },
      { baseMs: 1, maxMs: 1 },
      1,
    );
    q.add({ namespace: 'a', name: 'x/y' });
    q.add({ namespace: 'a/x', name: 'y' });
    await q.whenIdle();
    expect(runs).to.have.length(2);
    await q.stop();
  });

  it('retries a failing key with growing delays and resets after success', async () => {
    const clock = new ManualClock();
    const at: number[] = [];
    const q = queue(
      (): Promise<Result<Handled, string>> => {
        at.push(clock.now());
        return Promise.resolve(at.length < 4 ? fail('boom') : ok({}));
      },
      { baseMs: 20, maxMs: 1000 },
      1,
      clock,
    );
    q.add(k('k'));
    for (let retry = 0; retry < 3; retry++) {
      await q.whenIdle();
      clock.fireNext();
    }
    await q.whenIdle();
    expect(at).to.have.length(4);
    expect(clock.pending, 'no retry after the success').to.equal(0);
    const gaps = at.slice(1).map((t, i) => t - (at[i] ?? 0));
    expect(gaps[1] ?? 0).to.be.greaterThan((gaps[0] ?? 0) * 1.2);
    expect(gaps[2] ?? 0).to.be.greaterThan((gaps[1] ?? 0) * 1.2);
    await q.stop();
  });

  it('addUnlessScheduled keeps a pending backoff; add supersedes it', async () => {
    let calls = 0;
    const clock = new ManualClock();
    const q = queue(
      (): Promise<Result<Handled, string>> => {
        calls++;
        return Promise.resolve(fail('down'));
      },
      { baseMs: 10_000, maxMs: 10_000 },
      1,
      clock,
    );
    q.add(k('k'));
    await q.whenIdle();
    expect(clock.pending).to.equal(1);
    q.addUnlessScheduled(k('k'));
    await q.whenIdle();
    expect(calls).to.equal(1);
    q.add(k('k'));
    await q.whenIdle();
    expect(calls).to.equal(2);
    await q.stop();
    expect(clock.pending, 'stop clears the timers').to.equal(0);
  });

  it('schedules the resync a handler asks for', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const q = queue(
      () => {
        calls++;
        return Promise.resolve(ok({ resyncAfterMs: 300_000 }));
      },
      { baseMs: 1, maxMs: 1 },
      1,
      clock,
    );
    q.add(k('k'));
    await q.whenIdle();
    clock.fireNext();
    await q.whenIdle();
    expect([calls, clock.now()]).to.deep.equal([2, 300_000]);
    await q.stop();
  });
});
