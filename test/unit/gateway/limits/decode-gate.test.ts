// The decode gate: one flow never holds every slot, the flow that used the
// least goes first when slots free up, and a request waiting past the bound
// is refused.
import { expect } from 'chai';
import { DecodeGate } from '../../../../gateway/limits/decode-gate.ts';
import type { DecodePass } from '../../../../gateway/limits/decode-gate.ts';
import { ManualClock, settle } from '../../../support/manual-clock.ts';

/** Enters `flow` and records the order in which requests got their slot. */
function enter(gate: DecodeGate, flow: string, order: string[]): Promise<DecodePass | undefined> {
  return gate.enter(flow).then((r) => {
    if (!r.ok) return undefined;
    order.push(flow);
    return r.value;
  });
}

describe('DecodeGate', () => {
  it('leaves a slot to another flow: a flow holds at most concurrency - 1', async () => {
    const gate = new DecodeGate({ concurrency: 2, maxWaitMs: 1000 }, new ManualClock());
    const order: string[] = [];
    const a1 = enter(gate, 'A', order);
    const a2 = enter(gate, 'A', order);
    await settle();
    expect(order).to.deep.equal(['A']);
    const b = await enter(gate, 'B', order);
    expect(order).to.deep.equal(['A', 'B']);
    (await a1)?.release(1000);
    await settle();
    expect(order).to.deep.equal(['A', 'B', 'A']);
    b?.release(10);
    (await a2)?.release(1000);
    expect(gate.held).to.equal(0);
  });

  it('gives a freed slot to the flow that was served the fewest bytes, not to the first in line', async () => {
    const gate = new DecodeGate({ concurrency: 3, maxWaitMs: 1000 }, new ManualClock());
    const order: string[] = [];
    // A is served 16 MB, B 1 KB, C nothing yet; then X and Y take the three slots (X two, its most).
    (await enter(gate, 'A', order))?.release(16_000_000);
    (await enter(gate, 'B', order))?.release(1000);
    const holders = [await enter(gate, 'X', order), await enter(gate, 'X', order), await enter(gate, 'Y', order)];
    // Waiting in the order A, B, C.
    const waiting = [enter(gate, 'A', order), enter(gate, 'B', order), enter(gate, 'C', order)];
    await settle();
    expect(gate.waiting).to.equal(3);
    order.length = 0;
    holders[0]?.release(0);
    await settle();
    // One slot freed: C (nothing served) before B (1 KB) before A (16 MB).
    expect(order).to.deep.equal(['C']);
    holders[1]?.release(0);
    holders[2]?.release(0);
    await settle();
    expect(order).to.deep.equal(['C', 'B', 'A']);
    for (const w of await Promise.all(waiting)) w?.release(0);
    expect(gate.held).to.equal(0);
  });

  it('does not let an idle flow save up: a flow returning after others were served starts at the current virtual time', async () => {
    const gate = new DecodeGate({ concurrency: 2, maxWaitMs: 1000 }, new ManualClock());
    const order: string[] = [];
    (await enter(gate, 'B', order))?.release(10);
    // A is served much more meanwhile, alone.
    for (let i = 0; i < 5; i++) (await enter(gate, 'A', order))?.release(1_000_000);
    const hold = await enter(gate, 'C', order);
    const a = await enter(gate, 'A', order);
    const waiting = [enter(gate, 'A', order), enter(gate, 'B', order)];
    await settle();
    order.length = 0;
    a?.release(1_000_000);
    await settle();
    expect(order).to.deep.equal(['B']);
    hold?.release(0);
    for (const w of await Promise.all(waiting)) w?.release(0);
  });

  it('refuses a request that waited maxWaitMs, with a retry time, and lets the next one in', async () => {
    const clock = new ManualClock();
    const gate = new DecodeGate({ concurrency: 2, maxWaitMs: 500 }, clock);
    const order: string[] = [];
    const held = [await enter(gate, 'A', order), await enter(gate, 'B', order)];
    const refused = gate.enter('A');
    await clock.advance(499);
    expect(gate.waiting).to.equal(1);
    await clock.advance(1);
    const r = await refused;
    expect(r.ok).to.equal(false);
    if (!r.ok) {
      expect(r.error.retryAfterSeconds).to.be.at.least(1);
      expect(r.error.message).to.contain('500 ms');
    }
    expect(gate.waiting).to.equal(0);
    for (const h of held) h?.release(0);
    expect(await enter(gate, 'A', order)).to.not.equal(undefined);
  });
});
