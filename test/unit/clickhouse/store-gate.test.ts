import { expect } from 'chai';
import { ManualClock, settle as settled } from '../../support/manual-clock.ts';
import { createStoreGate } from '../../../src/clickhouse/store-gate.ts';
import type { GatePolicy, QueryCaller, QueryTurn, StatementBudget, StoreGate } from '../../../src/clickhouse/store-gate.ts';

/** Work the test finishes by hand; `log` records when each piece starts. */
class Work {
  readonly log: string[] = [];
  readonly #pending = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();

  piece(name: string): () => Promise<string> {
    return () => {
      this.log.push(name);
      return new Promise<string>((resolve, reject) => {
        this.#pending.set(name, {
          resolve: () => {
            resolve(name);
          },
          reject,
        });
      });
    };
  }

  running(): string[] {
    return [...this.#pending.keys()];
  }

  async finish(name: string): Promise<void> {
    const p = this.#pending.get(name);
    if (p === undefined) throw new Error(`${name} is not running (running: ${this.running().join(', ')})`);
    this.#pending.delete(name);
    p.resolve();
    await settled();
  }

  async fail(name: string, error: Error): Promise<void> {
    this.#pending.get(name)?.reject(error);
    this.#pending.delete(name);
    await settled();
  }
}

const keyA: QueryCaller = { key: 'A' };
const keyB: QueryCaller = { key: 'B' };

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
      maxRunMs: 5000,
      turnMs: 1000,
      queryThreads: 1,
      ...overrides,
    },
    clock,
  );
}

describe('the store gate', () => {
  describe('embedded ClickHouse (one statement at a time)', () => {
    it('runs one query statement at a time, the next from the party served longest ago', async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock);
      const q1 = gate.query(keyA, 30_000, work.piece('q1'));
      const q2 = gate.query(keyA, 30_000, work.piece('q2'));
      const q3 = gate.query(keyB, 30_000, work.piece('q3'));
      await settled();
      expect(work.running()).to.deep.equal(['q1']);
      await work.finish('q1');
      expect(work.running()).to.deep.equal(['q3']);
      await work.finish('q3');
      expect(work.running()).to.deep.equal(['q2']);
      await work.finish('q2');
      expect(work.log).to.deep.equal(['q1', 'q3', 'q2']);
      expect((await Promise.all([q1, q2, q3])).map((t) => t.ok)).to.deep.equal([true, true, true]);
    });

    it('takes queries round-robin over keys, first come first served within a key', async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock);
      const turns = [
        gate.query(keyA, 30_000, work.piece('a1')),
        gate.query(keyA, 30_000, work.piece('a2')),
        gate.query(keyA, 30_000, work.piece('a3')),
        gate.query(keyB, 30_000, work.piece('b1')),
        gate.query(keyB, 30_000, work.piece('b2')),
      ];
      for (let i = 0; i < 5; i++) {
        await settled();
        await work.finish(work.running()[0] ?? '');
      }
      await Promise.all(turns);
      expect(work.log).to.deep.equal(['a1', 'b1', 'a2', 'b2', 'a3']);
    });

    it("while ingest is active, keeps each tenant to its share of the time: after its query of d ms its next waits 3d (share 0.25); another tenant's does not, nor does an INSERT", async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock);
      const first = gate.insert(work.piece('insert 1'));
      await settled();
      await work.finish('insert 1');
      await first;
      const a1 = gate.query(keyA, 30_000, work.piece('a1'));
      const a2 = gate.query(keyA, 30_000, work.piece('a2'));
      const b1 = gate.query(keyB, 30_000, work.piece('b1'));
      await settled();
      await clock.advance(100);
      await work.finish('a1');
      await a1;
      expect(work.running(), "B is not held by A's pause").to.deep.equal(['b1']);
      await work.finish('b1');
      expect(work.running(), 'a2 yields right after a1').to.deep.equal([]);
      const second = gate.insert(work.piece('insert 2'));
      await settled();
      expect(work.running(), 'an INSERT is not held back').to.deep.equal(['insert 2']);
      await clock.advance(50);
      await work.finish('insert 2');
      await second;
      await clock.advance(249);
      expect(work.running(), '299 ms after a1').to.deep.equal([]);
      await clock.advance(1);
      expect(work.running(), '300 ms after a1').to.deep.equal(['a2']);
      await work.finish('a2');
      expect((await Promise.all([a2, b1])).map((t) => t.ok)).to.deep.equal([true, true]);
    });

    it('while ingest is active, lets a tenant spend its burst back to back, then holds it until its credit refills at its share', async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock, { queryBurstMs: 100 });
      const insert = gate.insert(work.piece('insert'));
      await settled();
      await work.finish('insert');
      await insert;
      const a = [1, 2, 3].map((i) => gate.query(keyA, 30_000, work.piece(`a${i}`)));
      await settled();
      await clock.advance(100);
      await work.finish('a1'); // credit 100 - 100 × 0.75 = 25: still in its burst
      expect(work.running(), 'a2 right after a1').to.deep.equal(['a2']);
      await clock.advance(100);
      await work.finish('a2'); // credit 25 - 75 = -50: refills to 0 in 200 ms
      await clock.advance(199);
      expect(work.running(), '199 ms after a2').to.deep.equal([]);
      await clock.advance(1);
      expect(work.running(), '200 ms after a2').to.deep.equal(['a3']);
      await work.finish('a3');
      expect((await Promise.all(a)).map((t) => t.ok)).to.deep.equal([true, true, true]);
    });

    it('runs queries back to back when no INSERT ran lately', async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock);
      const q1 = gate.query(keyA, 30_000, work.piece('q1'));
      const q2 = gate.query(keyB, 30_000, work.piece('q2'));
      await settled();
      await clock.advance(5000);
      await work.finish('q1');
      expect(work.running()).to.deep.equal(['q2']);
      await work.finish('q2');
      await Promise.all([q1, q2]);
    });

    it('gives up a query whose time limit passes while it waits, tells how long it waited, and lets the next one run', async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock);
      const long = gate.query(keyA, 30_000, work.piece('long'));
      const shortLimit = gate.query(keyB, 1000, work.piece('never'));
      const next = gate.query(keyA, 30_000, work.piece('next'));
      await clock.advance(1000);
      const refused = await shortLimit;
      expect(refused).to.deep.equal({ ok: false, error: { refused: 'deadline', waitedMs: 1000 } });
      await work.finish('long');
      expect(work.running()).to.deep.equal(['next']);
      await work.finish('next');
      await Promise.all([long, next]);
      expect(work.log).to.deep.equal(['long', 'next']);
    });

    it("gives a statement what is left of its query's time limit, at most the limit per statement, and the policy's threads", async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock);
      const budgets: StatementBudget[] = [];
      const take = (budget: StatementBudget): Promise<string> => {
        budgets.push(budget);
        return Promise.resolve('ok');
      };
      const first = gate.query(keyA, 30_000, work.piece('first'));
      const late = gate.query(keyB, 7000, take);
      await clock.advance(4000);
      await work.finish('first');
      await Promise.all([first, late]);
      await gate.query(keyA, 30_000, take);
      expect(budgets.map((b) => ({ ms: b.ms, threads: b.threads }))).to.deep.equal([
        { ms: 3000, threads: 1 },
        { ms: 5000, threads: 1 },
      ]);
    });

    it("passes on a failure of the work and frees the turn and the key's place", async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock, { maxConcurrentQueries: () => 1 });
      const failing = gate.query(keyA, 30_000, work.piece('failing')).catch((error: unknown) => error);
      await settled();
      await work.fail('failing', new Error('store down'));
      expect(((await failing) as Error).message).to.equal('store down');
      const after = gate.query(keyA, 30_000, work.piece('after'));
      await settled();
      expect(work.running()).to.deep.equal(['after']);
      await work.finish('after');
      expect((await after).ok).to.equal(true);
    });
  });

  describe('fairness across tenants (embedded ClickHouse)', () => {
    const tenant = (key: string, id: string): QueryCaller => ({ key, tenant: { id, maxConcurrentQueries: 8 } });

    /** Starts each named query in `order` when its turn comes, runs it `ms[name]` ms, and returns the order they ran in. */
    async function runAll(clock: ManualClock, work: Work, turns: Promise<unknown>[], ms: (name: string) => number): Promise<string[]> {
      for (let i = 0; i < turns.length; i++) {
        await settled();
        const name = work.running()[0] ?? '';
        await clock.advance(ms(name));
        await work.finish(name);
      }
      await Promise.all(turns);
      return work.log;
    }

    it("gives the next turn to the tenant that has used the least store time: a heavy tenant's queries wait for a light one's", async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock);
      const heavy = tenant('A', 'heavy');
      const light = tenant('B', 'light');
      const turns = [
        gate.query(heavy, 30_000, work.piece('a1')),
        gate.query(heavy, 30_000, work.piece('a2')),
        gate.query(heavy, 30_000, work.piece('a3')),
        gate.query(light, 30_000, work.piece('b1')),
        gate.query(light, 30_000, work.piece('b2')),
        gate.query(light, 30_000, work.piece('b3')),
      ];
      // Round-robin would run a1 b1 a2 b2 a3 b3: B would wait behind each of A's 1 s statements.
      const order = await runAll(clock, work, turns, (name) => (name.startsWith('a') ? 1000 : 10));
      expect(order).to.deep.equal(['a1', 'b1', 'b2', 'b3', 'a2', 'a3']);
    });

    it("counts a tenant's queries as one whatever key sends them, and a tenant back from idle saves up no credit", async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock);
      const x1 = tenant('K1', 'x');
      const x2 = tenant('K2', 'x');
      const y = tenant('K1', 'y');
      // Tenant y ran once, long ago; then x alone used 3 s of store time.
      await runAll(clock, work, [gate.query(y, 30_000, work.piece('y0'))], () => 10);
      await runAll(
        clock,
        work,
        [gate.query(x1, 30_000, work.piece('x0')), gate.query(x2, 30_000, work.piece('x00')), gate.query(x1, 30_000, work.piece('x000'))],
        () => 1000,
      );
      work.log.length = 0;
      const turns = [
        gate.query(x1, 30_000, work.piece('x1')),
        gate.query(x2, 30_000, work.piece('x2')),
        gate.query(y, 30_000, work.piece('y1')),
        gate.query(y, 30_000, work.piece('y2')),
        gate.query(y, 30_000, work.piece('y3')),
      ];
      // y comes back level with x1's start (3 s used), not at its own 10 ms (which would run y1 y2 y3 before x2): after one turn to catch up, they alternate.
      const order = await runAll(clock, work, turns, () => 1000);
      expect(order).to.deep.equal(['x1', 'y1', 'x2', 'y2', 'y3']);
    });
  });

  describe('per-key query limits', () => {
    it("lets a query over its key's limit wait for one of the key's own, then refuses it after the wait; another key is not held", async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock, { exclusive: false, maxConcurrentQueries: () => 2 });
      const a1 = gate.query(keyA, 30_000, work.piece('a1'));
      const a2 = gate.query(keyA, 30_000, work.piece('a2'));
      const a3 = gate.query(keyA, 30_000, work.piece('a3'));
      const b1 = gate.query(keyB, 30_000, work.piece('b1'));
      await settled();
      expect(work.running()).to.deep.equal(['a1', 'a2', 'b1']);
      await clock.advance(1000);
      await work.finish('a1');
      expect(work.running(), 'a3 takes the place a1 left').to.include('a3');
      const a4 = gate.query(keyA, 30_000, work.piece('a4'));
      await clock.advance(2000);
      const refused: QueryTurn<string> = await a4;
      expect(refused).to.deep.equal({ ok: false, error: { refused: 'key_limit', limit: 2, retryAfterSeconds: 1 } });
      for (const name of ['a2', 'a3', 'b1']) await work.finish(name);
      expect((await Promise.all([a1, a2, a3, b1])).every((t) => t.ok)).to.equal(true);
      expect(work.log).to.not.include('a4');
    });

    it("counts a key's queries that wait for embedded ClickHouse's turn as in flight", async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock, { maxConcurrentQueries: () => 1 });
      const a1 = gate.query(keyB, 30_000, work.piece('b running'));
      const a2 = gate.query(keyA, 30_000, work.piece('a waiting'));
      const a3 = gate.query(keyA, 30_000, work.piece('a over'));
      await clock.advance(2000);
      expect(await a3).to.nested.include({ ok: false, 'error.refused': 'key_limit' });
      await work.finish('b running');
      await work.finish('a waiting');
      await Promise.all([a1, a2]);
    });
  });

  describe('per-tenant query limits', () => {
    it("counts a tenant's queries across keys, refuses one over the tenant's limit after the wait, and lets other tenants through", async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock, { exclusive: false, maxConcurrentQueries: () => 8 });
      const acme = { id: 'acme', maxConcurrentQueries: 1 };
      const a1 = gate.query({ key: 'A', tenant: acme }, 30_000, work.piece('a1'));
      const b1 = gate.query({ key: 'B', tenant: acme }, 30_000, work.piece('b1'));
      const other = gate.query({ key: 'B', tenant: { id: 'globex', maxConcurrentQueries: 1 } }, 30_000, work.piece('globex'));
      await settled();
      expect(work.running()).to.deep.equal(['a1', 'globex']);
      await clock.advance(2000);
      expect(await b1).to.deep.equal({ ok: false, error: { refused: 'tenant_limit', limit: 1, retryAfterSeconds: 1 } });
      await work.finish('a1');
      await work.finish('globex');
      expect((await Promise.all([a1, other])).every((t) => t.ok)).to.equal(true);
      const b2 = gate.query({ key: 'B', tenant: acme }, 30_000, work.piece('b2'));
      await settled();
      expect(work.running(), "the tenant's place is free again").to.deep.equal(['b2']);
      await work.finish('b2');
      expect((await b2).ok).to.equal(true);
    });

    it("gives the tenant's place back when the key's limit refuses the query", async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock, { exclusive: false, maxConcurrentQueries: () => 1 });
      const acme = { id: 'acme', maxConcurrentQueries: 2 };
      const a1 = gate.query({ key: 'A', tenant: { id: 'globex', maxConcurrentQueries: 5 } }, 30_000, work.piece('a1'));
      const a2 = gate.query({ key: 'A', tenant: acme }, 30_000, work.piece('a2'));
      await clock.advance(2000);
      expect(await a2).to.nested.include({ ok: false, 'error.refused': 'key_limit' });
      const b1 = gate.query({ key: 'B', tenant: acme }, 30_000, work.piece('b1'));
      const b2 = gate.query({ key: 'C', tenant: acme }, 30_000, work.piece('b2'));
      await settled();
      expect(work.running()).to.deep.equal(['a1', 'b1', 'b2']);
      for (const name of ['a1', 'b1', 'b2']) await work.finish(name);
      expect((await Promise.all([a1, b1, b2])).every((t) => t.ok)).to.equal(true);
    });
  });

  describe('embedded ClickHouse with INSERTs on their own connection', () => {
    it('runs an INSERT at once beside a running query, keeps queries one at a time, and paces each tenant while INSERTs run and after', async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock);
      const a1 = gate.query(keyA, 30_000, work.piece('a1'));
      const a2 = gate.query(keyA, 30_000, work.piece('a2'));
      const b1 = gate.query(keyB, 30_000, work.piece('b1'));
      await settled();
      const insert = gate.insert(work.piece('insert'));
      await settled();
      expect(work.running(), 'the INSERT does not wait for a1; the queries wait for it').to.deep.equal(['a1', 'insert']);
      await clock.advance(100);
      await work.finish('a1');
      expect(work.running(), 'ingest is active: A yields 3 × 100 ms, B goes on').to.deep.equal(['insert', 'b1']);
      await work.finish('b1');
      await clock.advance(299);
      await work.finish('insert');
      expect(await insert).to.equal('insert');
      expect(work.running()).to.deep.equal([]);
      await clock.advance(1);
      expect(work.running()).to.deep.equal(['a2']);
      await work.finish('a2');
      expect((await Promise.all([a1, a2, b1])).map((t) => t.ok)).to.deep.equal([true, true, true]);
    });
  });

  describe('server mode', () => {
    it('lets INSERTs through at once, beside running queries', async () => {
      const clock = new ManualClock();
      const work = new Work();
      const gate = gateWith(clock, { exclusive: false });
      const q = gate.query(keyA, 30_000, work.piece('query'));
      const insert = gate.insert(work.piece('insert'));
      await settled();
      expect(work.running()).to.have.members(['query', 'insert']);
      await work.finish('insert');
      await work.finish('query');
      await Promise.all([q, insert]);
    });
  });
});
