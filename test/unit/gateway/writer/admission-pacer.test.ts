// The admission pacer's schedule, on an injected clock: requests enter at
// the pace INSERTs take rows out (a token bucket drained at the measured
// rate), the real backlog stops them when ClickHouse is slower than
// measured, waiting tenants take turns, and a tenant within its share
// enters past another's rows filling the bounds.
import { expect } from 'chai';
import { AdmissionPacer } from '../../../../gateway/writer/admission-pacer.ts';
import { ManualClock, settle } from '../../../support/manual-clock.ts';

/** Tracks a promise's answer without awaiting it. */
function watch(p: Promise<boolean>): { answer: boolean | undefined } {
  const state: { answer: boolean | undefined } = { answer: undefined };
  void p.then((a) => {
    state.answer = a;
  });
  return state;
}

describe('admission pacer', () => {
  // At 1,000 rows/s measured: the bucket drains 900 rows/s (90%) and holds 1,000 rows; the backlog holds 2,000.
  // Before the first INSERT: at most 100,000 rows (one block) admitted and not inserted.
  const options = { backlogSeconds: 1, maxBacklogSeconds: 2, maxWaitMs: 5000, unmeasuredBacklogRows: 100_000 };
  let clock: ManualClock;
  let pacer: AdmissionPacer<'spans' | 'logs'>;
  let starved: string[];
  beforeEach(() => {
    starved = [];
    clock = new ManualClock();
    pacer = new AdmissionPacer(
      options,
      (table) => {
        starved.push(table);
      },
      clock,
    );
  });

  /** One INSERT of `rows` that took `seconds`: the pacer then knows the rate, and the backlog is empty. */
  async function measure(rows: number, seconds: number): Promise<void> {
    expect(await pacer.admit('spans', rows)).to.equal(true);
    pacer.inserting('spans');
    await clock.advance(seconds * 1000);
    pacer.inserted('spans', rows, true, true);
  }

  it("admits one block's rows until an INSERT has measured the rate, then waits for that INSERT, cutting the block early", async () => {
    for (let i = 0; i < 10; i++) expect(await pacer.admit('spans', 10_000)).to.equal(true);
    expect(pacer.backlog('spans')).to.equal(100_000);
    const waiting = watch(pacer.admit('spans', 1000));
    await settle();
    expect(waiting.answer).to.equal(undefined);
    expect(starved, 'no INSERT runs: the filling segment is cut now').to.deep.equal(['spans']);
    pacer.inserting('spans');
    await clock.advance(4000);
    expect(waiting.answer, 'no measure: time alone makes no room').to.equal(undefined);
    pacer.inserted('spans', 100_000, true, true);
    await settle();
    expect(waiting.answer).to.equal(true);
  });

  it('lets every waiter of every table in on admitWaiting (ClickHouse failing), counting their rows, with no refusal after maxWaitMs', async () => {
    for (let i = 0; i < 10; i++) expect(await pacer.admit('spans', 10_000)).to.equal(true);
    for (let i = 0; i < 10; i++) expect(await pacer.admit('logs', 10_000)).to.equal(true);
    const waiting = [watch(pacer.admit('spans', 1000)), watch(pacer.admit('spans', 500)), watch(pacer.admit('logs', 1000))];
    await settle();
    expect(waiting.map((w) => w.answer)).to.deep.equal([undefined, undefined, undefined]);
    pacer.admitWaiting();
    await clock.advance(options.maxWaitMs);
    expect(waiting.map((w) => w.answer)).to.deep.equal([true, true, true]);
    expect([pacer.backlog('spans'), pacer.backlog('logs')]).to.deep.equal([101_500, 101_000]);
    expect(pacer.waiting('spans')).to.equal(false);
  });

  it('admits a second of inserting at once, then makes the next request wait; another table is not held', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 600)).to.equal(true);
    expect(await pacer.admit('spans', 400)).to.equal(true);
    const waiting = watch(pacer.admit('spans', 1));
    await settle();
    expect(waiting.answer).to.equal(undefined);
    expect(await pacer.admit('logs', 1000)).to.equal(true);
  });

  it("lets waiters in at the measured pace, each after its own rows' worth, without waiting for an INSERT to end", async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1000)).to.equal(true);
    pacer.inserting('spans');
    const first = watch(pacer.admit('spans', 90));
    const second = watch(pacer.admit('spans', 90));
    await clock.advance(99);
    expect([first.answer, second.answer]).to.deep.equal([undefined, undefined]);
    await clock.advance(1); // 90 rows drained at 900 rows/s
    expect([first.answer, second.answer]).to.deep.equal([true, undefined]);
    await clock.advance(100); // the backlog is now over a second's worth: the bucket drains a little slower
    expect(second.answer).to.equal(undefined);
    await clock.advance(11);
    expect(second.answer).to.equal(true);
  });

  it('stops admissions on the real backlog when ClickHouse is slower than measured, until an INSERT ends', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1000)).to.equal(true);
    pacer.inserting('spans'); // a long query holds ClickHouse: this INSERT takes 5 s
    await clock.advance(2000);
    expect(await pacer.admit('spans', 900)).to.equal(true); // the bucket drained; the backlog now holds 1,900
    const waiting = watch(pacer.admit('spans', 200));
    await clock.advance(3000);
    expect(waiting.answer).to.equal(undefined);
    pacer.inserted('spans', 1000, true, true);
    await settle();
    // That INSERT lowered the measured rate (1,000 rows in 1 s, then 1,000 in 5 s: about 455 rows/s), so
    // the 900 rows left already fill the backlog's two seconds: the filling segment is cut, and its INSERT makes room.
    expect(waiting.answer).to.equal(undefined);
    expect(starved).to.deep.equal(['spans']);
    pacer.inserting('spans');
    await clock.advance(1000);
    pacer.inserted('spans', 900, true, true);
    await settle();
    expect(waiting.answer).to.equal(true);
    expect(pacer.backlog('spans')).to.equal(200);
  });

  it("does not count rows being inserted in the backlog: a request enters at the bucket's pace while their INSERT runs", async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1000)).to.equal(true);
    pacer.inserting('spans', 1000); // those 1,000 rows are in an INSERT now
    await clock.advance(1000);
    expect(await pacer.admit('spans', 900)).to.equal(true); // 1,900 admitted and not inserted, 900 of them waiting for an INSERT
    const waiting = watch(pacer.admit('spans', 200)); // 2,100 would pass the 2 s bound were the running INSERT's rows counted
    await clock.advance(300); // the bucket's pace: 200 rows at 90% of 1,000 rows/s, slowed a tenth by the 1,100 waiting
    expect(waiting.answer, 'admitted while the INSERT still runs').to.equal(true);
    expect(pacer.backlog('spans')).to.equal(2100);
  });

  it('asks for an early cut while requests wait and fewer INSERTs run than insertSlots', async () => {
    const two = new AdmissionPacer<'spans'>(
      { ...options, insertSlots: 2 },
      (table) => {
        starved.push(table);
      },
      clock,
    );
    expect(await two.admit('spans', 1000)).to.equal(true);
    two.inserting('spans');
    await clock.advance(1000);
    two.inserted('spans', 1000, true, true); // 1,000 rows/s measured
    expect(await two.admit('spans', 1000)).to.equal(true);
    two.inserting('spans'); // one INSERT runs, one more may
    const waiting = watch(two.admit('spans', 1000)); // over the bucket's 1,000 rows: waits
    await settle();
    expect(waiting.answer).to.equal(undefined);
    expect(starved, 'a second INSERT could run: cut the filling segment').to.deep.equal(['spans']);
    starved.length = 0;
    two.inserting('spans'); // now both run
    await clock.advance(1);
    expect(starved, 'both INSERTs run: nothing to cut for').to.deep.equal([]);
  });

  it('measures overlapping INSERTs by what they take together, not each by its own duration', async () => {
    expect(await pacer.admit('spans', 3000)).to.equal(true);
    pacer.inserting('spans');
    await clock.advance(500);
    pacer.inserting('spans'); // a second segment's INSERT starts while the first runs
    await clock.advance(500);
    pacer.inserted('spans', 1000, true, true); // 1,000 rows in the first second
    expect(pacer.measuredRate('spans')).to.equal(1000);
    await clock.advance(500);
    pacer.inserted('spans', 1000, true, true); // 1,000 more in the next half second: the table takes 2,000 rows/s now
    expect(pacer.measuredRate('spans')).to.be.closeTo(1000 / 0.85, 1e-9); // smoothed towards it: (1,000 rows) / (1 s + 0.3 × (0.5 s − 1 s))
    await clock.advance(1000);
    pacer.inserting('spans');
    await clock.advance(2000); // alone again, and after a pause: its own 2 s count, not the time since the last end
    pacer.inserted('spans', 1000, true, true);
    expect(pacer.measuredRate('spans')).to.be.closeTo(1000 / (0.85 + 0.3 * (2 - 0.85)), 1e-9);
  });

  it('refuses a request after maxWaitMs and then considers the one behind it', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1000)).to.equal(true);
    await clock.advance(2000);
    expect(await pacer.admit('spans', 900)).to.equal(true);
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
    expect(await pacer.admit('spans', 1000)).to.equal(true);
    const waiting = watch(pacer.admit('spans', 500));
    pacer.withdraw('spans', 500);
    await settle();
    expect(waiting.answer).to.equal(true);
  });

  it('does not take rows a previous process left out of the backlog of rows admitted here', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1500)).to.equal(true);
    pacer.inserting('spans');
    await clock.advance(700);
    pacer.inserted('spans', 700, true, false);
    expect(pacer.backlog('spans')).to.equal(1500);
  });

  it('reports a table starved when its requests wait and no INSERT of it runs, and not while one runs', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1000)).to.equal(true);
    pacer.inserting('spans');
    void pacer.admit('spans', 500);
    expect(starved).to.deep.equal([]);
    pacer.inserted('spans', 1000, true, true); // the backlog is empty: the 500 enter
    void pacer.admit('spans', 1000);
    expect(starved).to.deep.equal(['spans']);
    expect(pacer.waiting('spans')).to.equal(true);
  });

  it("lets a small tenant in ahead of a flooding tenant's queue: waiting tenants take turns", async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1000, 'flood')).to.equal(true);
    const order: string[] = [];
    const queue = (flow: string, n: number): void => {
      void pacer.admit('spans', 1000, flow).then(() => {
        order.push(`${flow}${n}`);
      });
    };
    for (let n = 1; n <= 3; n++) queue('flood', n);
    queue('small', 1);
    for (let i = 0; i < 4; i++) {
      pacer.withdraw('spans', 1000); // room for one more request of 1,000 rows
      await settle();
    }
    expect(order).to.deep.equal(['flood1', 'small1', 'flood2', 'flood3']);
  });

  it("lets a tenant within its share of the bucket enter past another tenant's rows filling the bounds, and no further (issue 35)", async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1000, 'flood')).to.equal(true); // the bucket is full
    const flood = watch(pacer.admit('spans', 1000, 'flood')); // the backlog's bound: waits for an INSERT to end
    await settle();
    expect(flood.answer).to.equal(undefined);
    // Two flows: each may hold 1,000 / 2 rows in the backlog past the bounds.
    for (let i = 0; i < 5; i++) expect(await pacer.admit('spans', 100, 'small')).to.equal(true);
    const sixth = watch(pacer.admit('spans', 100, 'small'));
    await settle();
    expect(sixth.answer).to.equal(undefined);
    expect(flood.answer).to.equal(undefined);
    // An INSERT of 1,000 rows takes out 1,000 / 1,500 of each flow's rows: small holds ~167, and its waiter enters.
    pacer.inserting('spans', 1000);
    pacer.inserted('spans', 1000, true, true);
    await settle();
    expect(sixth.answer).to.equal(true);
  });

  it("takes a segment's rows out of its own flows: a small tenant's segment inserted frees its whole share", async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1000, 'flood')).to.equal(true);
    const flood = watch(pacer.admit('spans', 1000, 'flood'));
    for (let i = 0; i < 5; i++) expect(await pacer.admit('spans', 100, 'small')).to.equal(true);
    // The small tenant's segment (its 500 rows) is inserted; the flood's is not: small holds nothing now.
    pacer.inserting('spans', 500);
    pacer.inserted('spans', 500, true, true, new Map([['small', 500]]));
    for (let i = 0; i < 5; i++) expect(await pacer.admit('spans', 100, 'small')).to.equal(true);
    const sixth = watch(pacer.admit('spans', 100, 'small'));
    await settle();
    expect(sixth.answer).to.equal(undefined);
    expect(flood.answer).to.equal(undefined);
  });

  it('keeps one tenant alone to the bounds: the share is only for a flow beside others', async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1000, 'flood')).to.equal(true);
    const next = watch(pacer.admit('spans', 100, 'flood'));
    await settle();
    expect(next.answer).to.equal(undefined);
  });

  it("drains the bucket slower as the real backlog grows past a second's worth, and not at all at the bound", async () => {
    await measure(1000, 1);
    expect(await pacer.admit('spans', 1500)).to.equal(true); // backlog 1,500: half way to the bound, the bucket drains 450 rows/s
    const waiting = watch(pacer.admit('spans', 45));
    await clock.advance(1210); // 1,500 − 1,000 + 45 rows to drain at 450 rows/s: 1,211 ms
    expect(waiting.answer).to.equal(undefined);
    await clock.advance(2);
    expect(waiting.answer).to.equal(true);
  });
});
