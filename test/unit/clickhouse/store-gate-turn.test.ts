// The store gate's turn signal (issue 33, bench:isolation's heavy neighbour):
// in embedded mode a running statement's signal fires once it has run
// `turnMs` while another tenant's query waits, never while it has the store
// to itself; its statement gets the full time limit either way.
import { expect } from 'chai';
import { ManualClock, settle } from '../../support/manual-clock.ts';
import { createStoreGate } from '../../../src/clickhouse/store-gate.ts';
import type { GatePolicy, QueryCaller, StatementBudget, StoreGate } from '../../../src/clickhouse/store-gate.ts';

/** A statement the test ends by hand; it records its budget and ends itself (as the runner's KILL would) when its turn signal fires. */
class Statement {
  budget: StatementBudget | undefined;
  /** The clock's time when the turn signal fired, if it did. */
  firedAt: number | undefined;
  #end: (() => void) | undefined;
  readonly #clock: ManualClock;
  readonly #endOnSignal: boolean;

  constructor(clock: ManualClock, endOnSignal = true) {
    this.#clock = clock;
    this.#endOnSignal = endOnSignal;
  }

  readonly run = (budget: StatementBudget): Promise<string> => {
    this.budget = budget;
    return new Promise<string>((resolve) => {
      this.#end = () => {
        resolve('done');
      };
      budget.turn?.signal.addEventListener(
        'abort',
        () => {
          this.firedAt = this.#clock.now();
          if (this.#endOnSignal) this.#end?.();
        },
        { once: true },
      );
    });
  };

  get started(): boolean {
    return this.budget !== undefined;
  }

  async end(): Promise<void> {
    this.#end?.();
    await settle();
  }
}

const tenant = (key: string, id: string): QueryCaller => ({ key, tenant: { id, maxConcurrentQueries: 8 } });
const a = tenant('A', 'a');
const b = tenant('B', 'b');
const c = tenant('C', 'c');

function gateWith(clock: ManualClock, overrides: Partial<GatePolicy> = {}): StoreGate {
  return createStoreGate(
    {
      exclusive: true,
      querySlots: 1,
      maxConcurrentQueries: () => 8,
      keyWaitMs: 2000,
      queryShare: 0.25,
      queryBurstMs: 0,
      ingestActiveMs: 2000,
      maxRunMs: 10_000,
      turnMs: 1000,
      queryThreads: 1,
      ...overrides,
    },
    clock,
  );
}

describe("the store gate's turn signal (embedded ClickHouse)", () => {
  it('never fires while the statement has the store to itself: a tenant alone gets its whole time limit', async () => {
    const clock = new ManualClock();
    const gate = gateWith(clock);
    const alone = new Statement(clock);
    const turn = gate.query(a, 30_000, alone.run);
    await clock.advance(9_000);
    expect(alone.budget?.ms, 'the full limit per statement, not the turn').to.equal(10_000);
    expect(alone.budget?.turn?.turnMs).to.equal(1000);
    expect(alone.firedAt).to.equal(undefined);
    // Another query of the same tenant waits its turn behind it without cutting it short.
    const own = new Statement(clock);
    const second = gate.query(a, 30_000, own.run);
    await clock.advance(500);
    expect(alone.firedAt, 'a query of the same tenant does not end the turn').to.equal(undefined);
    await alone.end();
    expect((await turn).ok).to.equal(true);
    expect(own.started).to.equal(true);
    await own.end();
    await second;
  });

  it("fires as soon as another tenant's query arrives after the statement ran turnMs, and that query starts once the statement ended", async () => {
    const clock = new ManualClock();
    const gate = gateWith(clock);
    const heavy = new Statement(clock);
    const light = new Statement(clock);
    const heavyTurn = gate.query(a, 30_000, heavy.run);
    await clock.advance(4000);
    const lightTurn = gate.query(b, 30_000, light.run);
    await settle();
    expect(heavy.firedAt, "fired at B's arrival").to.equal(4000);
    expect((await heavyTurn).ok, 'the gate passes on what the statement answered; the runner turns the stop into its 503').to.equal(true);
    expect(light.started).to.equal(true);
    expect(light.budget?.ms).to.equal(10_000);
    await light.end();
    expect((await lightTurn).ok).to.equal(true);
  });

  it("fires turnMs after the statement started when another tenant's query was already waiting or came sooner", async () => {
    const clock = new ManualClock();
    const gate = gateWith(clock);
    const heavy = new Statement(clock);
    const light = new Statement(clock);
    const heavyTurn = gate.query(a, 30_000, heavy.run);
    await clock.advance(300);
    const lightTurn = gate.query(b, 30_000, light.run);
    await clock.advance(699);
    expect(heavy.firedAt, 'not before turnMs').to.equal(undefined);
    expect(light.started).to.equal(false);
    await clock.advance(1);
    expect(heavy.firedAt).to.equal(1000);
    expect(light.started).to.equal(true);
    await light.end();
    await Promise.all([heavyTurn, lightTurn]);
  });

  it('does not fire once the waiting tenant left (its time ran out while it waited)', async () => {
    const clock = new ManualClock();
    const gate = gateWith(clock);
    const heavy = new Statement(clock, false);
    const heavyTurn = gate.query(a, 30_000, heavy.run);
    const impatient = gate.query(b, 500, new Statement(clock).run);
    await clock.advance(500);
    expect(await impatient).to.deep.equal({ ok: false, error: { refused: 'deadline', waitedMs: 500 } });
    await clock.advance(5000);
    expect(heavy.firedAt).to.equal(undefined);
    await heavy.end();
    expect((await heavyTurn).ok).to.equal(true);
  });

  it("while ingest is active, waits for the waiting tenant's own pause to end before it fires", async () => {
    const clock = new ManualClock();
    const gate = gateWith(clock);
    // Ingest runs all along: B's 400 ms statement earns B a pause of 1200 ms (share 0.25).
    let endInsert: () => void = () => undefined;
    const insert = gate.insert(
      () =>
        new Promise<void>((resolve) => {
          endInsert = resolve;
        }),
    );
    const first = new Statement(clock);
    const firstTurn = gate.query(b, 30_000, first.run);
    await clock.advance(400);
    await first.end();
    await firstTurn;
    const heavy = new Statement(clock);
    const heavyTurn = gate.query(a, 30_000, heavy.run);
    await settle();
    const next = new Statement(clock);
    const nextTurn = gate.query(b, 30_000, next.run);
    await clock.advance(1199);
    expect(heavy.firedAt, 'B may not start yet: A is not stopped for it').to.equal(undefined);
    await clock.advance(1);
    expect(heavy.firedAt).to.equal(1600);
    expect(next.started).to.equal(true);
    await next.end();
    endInsert();
    await Promise.all([insert, heavyTurn, nextTurn]);
  });

  it('gives no turn signal in server mode (statements run side by side)', async () => {
    const clock = new ManualClock();
    const gate = gateWith(clock, { exclusive: false });
    const one = new Statement(clock);
    const turn = gate.query(a, 30_000, one.run);
    await settle();
    expect(one.budget?.turn).to.equal(undefined);
    await one.end();
    await turn;
  });

  describe("with two query slots (the embedded store's two query connections)", () => {
    it("starts another tenant's query at once beside a long statement, which then runs to its end uncut", async () => {
      const clock = new ManualClock();
      const gate = gateWith(clock, { querySlots: 2 });
      const heavy = new Statement(clock);
      const light = new Statement(clock);
      const heavyTurn = gate.query(a, 30_000, heavy.run);
      await clock.advance(4000);
      const lightTurn = gate.query(b, 30_000, light.run);
      await settle();
      expect(light.started, 'B starts in the free slot').to.equal(true);
      await clock.advance(5000);
      expect(heavy.firedAt, 'no one waits: A is never cut').to.equal(undefined);
      await light.end();
      await heavy.end();
      expect((await Promise.all([heavyTurn, lightTurn])).map((t) => t.ok)).to.deep.equal([true, true]);
    });

    it('runs one statement of a tenant at a time: its second query waits for its first, though a slot is free', async () => {
      const clock = new ManualClock();
      const gate = gateWith(clock, { querySlots: 2 });
      const first = new Statement(clock);
      const second = new Statement(clock);
      const firstTurn = gate.query(a, 30_000, first.run);
      const secondTurn = gate.query(a, 30_000, second.run);
      await clock.advance(2000);
      expect(second.started, 'the other slot stays for other tenants').to.equal(false);
      expect(first.firedAt, 'its own query does not cut it').to.equal(undefined);
      await first.end();
      expect(second.started).to.equal(true);
      await second.end();
      await Promise.all([firstTurn, secondTurn]);
    });

    it('with every slot taken, cuts only the statement that started first, turnMs after its start, for a waiting tenant', async () => {
      const clock = new ManualClock();
      const gate = gateWith(clock, { querySlots: 2 });
      const older = new Statement(clock);
      const newer = new Statement(clock);
      const waiting = new Statement(clock);
      const olderTurn = gate.query(a, 30_000, older.run);
      await clock.advance(200);
      const newerTurn = gate.query(c, 30_000, newer.run);
      await clock.advance(100);
      const waitingTurn = gate.query(b, 30_000, waiting.run);
      await clock.advance(699);
      expect([older.firedAt, waiting.started]).to.deep.equal([undefined, false]);
      await clock.advance(1);
      expect(older.firedAt).to.equal(1000);
      expect(waiting.started).to.equal(true);
      await clock.advance(5000);
      expect(newer.firedAt, 'no one waits any more').to.equal(undefined);
      await Promise.all([newer.end(), waiting.end()]);
      await Promise.all([olderTurn, newerTurn, waitingTurn]);
    });
  });
});
