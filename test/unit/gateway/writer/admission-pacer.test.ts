// The admission pacer's schedule, on an injected clock: requests enter at
// the pace INSERTs take rows out, first come first served, and a running
// INSERT is never counted as more than done.
import { expect } from 'chai';
import { AdmissionPacer } from '../../../../gateway/writer/admission-pacer.ts';
import { ManualClock, settle } from './manual-clock.ts';

/** Tracks a promise's answer without awaiting it. */
function watch(p: Promise<boolean>): { answer: boolean | undefined } {
  const state: { answer: boolean | undefined } = { answer: undefined };
  void p.then((a) => { state.answer = a; });
  return state;
}

describe('admission pacer', () => {
  const options = { backlogSeconds: 1.5, maxWaitMs: 5000 };
  let clock: ManualClock;
  let pacer: AdmissionPacer<'spans' | 'logs'>;
  let starved: string[];
  beforeEach(() => {
    starved = [];
    clock = new ManualClock();
    pacer = new AdmissionPacer(options, (table) => { starved.push(table); }, clock);
  });

  /** One INSERT of `rows` that took `seconds`: the pacer then knows the rate. */
  async function measure(rows: number, seconds: number): Promise<void> {
    expect(await pacer.admit('spans', rows)).to.equal(true);
    pacer.inserting('spans', rows);
    await clock.advance(seconds * 1000);
    pacer.inserted('spans', rows, true, true);
  }

  it('admits everything until an INSERT has measured the rate', async () => {
    for (let i = 0; i < 10; i++) expect(await pacer.admit('spans', 100_000)).to.equal(true);
    expect(pacer.backlog('spans')).to.equal(1_000_000);
  });

  it('admits up to backlogSeconds of inserting, then makes the next request wait', async () => {
    await measure(1000, 1); // 1,000 rows per second: room for 1,500
    expect(await pacer.admit('spans', 1000)).to.equal(true);
    expect(await pacer.admit('spans', 500)).to.equal(true);
    const waiting = watch(pacer.admit('spans', 1));
    await settle();
    expect(waiting.answer).to.equal(undefined);
    expect(await pacer.admit('logs', 1000)).to.equal(true); // another table has its own backlog
  });

  it('lets waiters in as a running INSERT progresses, not all at once at its end', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1500)).to.equal(true);
    pacer.inserting('spans', 1000); // at 1,000 rows/s: room for 250 rows after 250 ms
    const first = watch(pacer.admit('spans', 250));
    const second = watch(pacer.admit('spans', 250));
    await clock.advance(249);
    expect([first.answer, second.answer]).to.deep.equal([undefined, undefined]);
    await clock.advance(1);
    expect([first.answer, second.answer]).to.deep.equal([true, undefined]);
    await clock.advance(250);
    expect(second.answer).to.equal(true);
  });

  it('serves waiters first come, first served: a small request does not pass a large one', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1500)).to.equal(true);
    const large = watch(pacer.admit('spans', 1000));
    const small = watch(pacer.admit('spans', 1));
    pacer.inserting('spans', 1500);
    await clock.advance(999);
    expect([large.answer, small.answer]).to.deep.equal([undefined, undefined]);
    await clock.advance(1);
    expect([large.answer, small.answer]).to.deep.equal([true, undefined]);
  });

  it('never counts a running INSERT as more than done: a stalled INSERT holds waiters until it ends', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1500)).to.equal(true);
    pacer.inserting('spans', 100); // a small block that ClickHouse takes long to store (a query holds it)
    const waiting = watch(pacer.admit('spans', 200));
    await clock.advance(3000);
    expect(waiting.answer).to.equal(undefined);
    expect(pacer.backlog('spans')).to.equal(1400);
    pacer.inserted('spans', 100, true, true);
    await settle();
    expect(waiting.answer).to.equal(undefined); // 1,400 + 200 is still over the 1,500 the slower rate allows
  });

  it('refuses a request after maxWaitMs and then considers the one behind it', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1400)).to.equal(true);
    const large = watch(pacer.admit('spans', 1000));
    const small = watch(pacer.admit('spans', 100));
    await clock.advance(options.maxWaitMs);
    expect([large.answer, small.answer]).to.deep.equal([false, true]);
  });

  it('admits any request into an empty backlog, however large, so it can always enter', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 50_000)).to.equal(true);
  });

  it('frees room for rows that never reached ClickHouse (a failed append, a dead letter)', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1500)).to.equal(true);
    const waiting = watch(pacer.admit('spans', 500));
    pacer.withdraw('spans', 500);
    await settle();
    expect(waiting.answer).to.equal(true);
  });

  it('does not take rows a previous process left out of the backlog of rows admitted here', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1500)).to.equal(true);
    pacer.inserting('spans', 700);
    await clock.advance(700);
    pacer.inserted('spans', 700, true, false);
    expect(pacer.backlog('spans')).to.equal(1500);
  });

  it('reports a table starved when its requests wait and no INSERT of it runs, and not while one runs', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1500)).to.equal(true);
    pacer.inserting('spans', 1000);
    void pacer.admit('spans', 100);
    expect(starved).to.deep.equal([]);
    pacer.inserted('spans', 1000, true, true); // 500 left, the 100 fit
    void pacer.admit('spans', 1000);
    expect(starved).to.deep.equal(['spans']);
    expect(pacer.waiting('spans')).to.equal(true);
  });

  it('lets a small tenant in ahead of a flooding tenant\'s queue: waiting tenants take turns', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1500, 'flood')).to.equal(true);
    const order: string[] = [];
    const queue = (flow: string, n: number): void => { void pacer.admit('spans', 1000, flow).then(() => { order.push(`${flow}${n}`); }); };
    for (let n = 1; n <= 3; n++) queue('flood', n);
    queue('small', 1);
    for (let i = 0; i < 4; i++) {
      pacer.withdraw('spans', 1000); // room for one more request of 1,000 rows
      await settle();
    }
    expect(order).to.deep.equal(['flood1', 'small1', 'flood2', 'flood3']);
  });
});
