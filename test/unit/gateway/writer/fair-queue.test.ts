// Deficit round robin over flows: turns by rows, not by arrival.
import { expect } from 'chai';
import fc from 'fast-check';
import { FairQueue } from '../../../../gateway/writer/fair-queue.ts';

interface Item {
  readonly flow: string;
  readonly rows: number;
  readonly n: number;
}

function drain(q: FairQueue<Item>): string[] {
  const out: string[] = [];
  for (let item = q.take(); item !== undefined; item = q.take()) out.push(`${item.flow}${item.n}`);
  return out;
}

describe('fair queue', () => {
  it('gives a flow that queued ten requests one turn per round beside a flow that queued one', () => {
    const q = new FairQueue<Item>(1000);
    for (let n = 1; n <= 10; n++) q.push('flood', { flow: 'flood', rows: 1000, n });
    q.push('small', { flow: 'small', rows: 1000, n: 1 });
    expect(drain(q).slice(0, 3)).to.deep.equal(['flood1', 'small1', 'flood2']);
  });

  it('shares by rows: a flow of small requests gets several per turn of a flow of large ones', () => {
    const q = new FairQueue<Item>(1000);
    for (let n = 1; n <= 3; n++) q.push('large', { flow: 'large', rows: 1000, n });
    for (let n = 1; n <= 8; n++) q.push('small', { flow: 'small', rows: 250, n });
    expect(drain(q)).to.deep.equal(['large1', 'small1', 'small2', 'small3', 'small4', 'large2', 'small5', 'small6', 'small7', 'small8', 'large3']);
  });

  it('serves a request larger than the quantum once its flow has saved up enough turns', () => {
    const q = new FairQueue<Item>(1000);
    q.push('big', { flow: 'big', rows: 2500, n: 1 });
    for (let n = 1; n <= 4; n++) q.push('other', { flow: 'other', rows: 1000, n });
    expect(drain(q)).to.deep.equal(['other1', 'other2', 'big1', 'other3', 'other4']);
  });

  it('forgets a request that gave up, and keeps first come first served within a flow', () => {
    const q = new FairQueue<Item>(1000);
    const gone = { flow: 'a', rows: 10, n: 1 };
    q.push('a', gone);
    q.push('a', { flow: 'a', rows: 10, n: 2 });
    q.push('b', { flow: 'b', rows: 10, n: 1 });
    q.remove('a', gone);
    expect(q.size).to.equal(2);
    expect(drain(q)).to.deep.equal(['a2', 'b1']);
  });

  it('hands out every item exactly once, in arrival order per flow, whatever the mix (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ flow: fc.constantFrom('a', 'b', 'c'), rows: fc.integer({ min: 1, max: 3000 }), remove: fc.boolean() }), { maxLength: 60 }),
        (ops) => {
          const q = new FairQueue<Item>(1000);
          const kept: Item[] = [];
          ops.forEach((op, n) => {
            const item = { flow: op.flow, rows: op.rows, n };
            q.push(op.flow, item);
            if (op.remove && n % 3 === 0) q.remove(op.flow, item);
            else kept.push(item);
          });
          const out: Item[] = [];
          for (let item = q.take(); item !== undefined; item = q.take()) out.push(item);
          expect(out.map((i) => i.n).sort((x, y) => x - y)).to.deep.equal(kept.map((i) => i.n));
          for (const flow of ['a', 'b', 'c'])
            expect(out.filter((i) => i.flow === flow).map((i) => i.n)).to.deep.equal(kept.filter((i) => i.flow === flow).map((i) => i.n));
        },
      ),
      { seed: 19, numRuns: 300 },
    );
  });
});
