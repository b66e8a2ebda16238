import { expect } from 'chai';
import { Readiness } from '../../../src/ops/readiness.ts';

describe('readiness', () => {
  it('is ready once every condition is done, and unready again while one fails', async () => {
    const readiness = new Readiness(['schema']);
    let ready = false;
    const waiting = readiness.whenReady().then(() => {
      ready = true;
    });
    expect(readiness.reasons()).to.deep.equal(['waiting for schema']);
    readiness.done('schema');
    await waiting;
    expect(ready).to.equal(true);
    readiness.unready('disk');
    expect(readiness.isReady()).to.equal(false);
    const again = readiness.whenReady();
    readiness.done('disk');
    await again;
    expect(readiness.isReady()).to.equal(true);
  });

  it('stays unready once shutdown begins', () => {
    const readiness = new Readiness([]);
    readiness.beginShutdown();
    readiness.done('anything');
    expect(readiness.reasons()).to.deep.equal(['shutting down']);
  });
});
