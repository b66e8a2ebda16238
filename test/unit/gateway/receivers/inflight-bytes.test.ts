import { expect } from 'chai';
import { Registry } from 'prom-client';
import { InflightBytes } from '../../../../gateway/receivers/inflight-bytes.ts';

describe('in-flight request bytes', () => {
  it('reserves up to the limit, grows reservations and refuses past it', () => {
    const budget = new InflightBytes(100);
    const a = budget.reserve(60);
    expect(a?.bytes).to.equal(60);
    expect(budget.reserve(50)).to.equal(undefined);
    const b = budget.reserve(0);
    expect(b?.ensure(40)).to.equal(true);
    expect(budget.used).to.equal(100);
    expect(b?.ensure(41)).to.equal(false);
    expect(b?.bytes).to.equal(40);
    expect(b?.ensure(10)).to.equal(true);
    expect(b?.bytes).to.equal(40);
  });

  it('gives bytes back once, however often release is called', () => {
    const budget = new InflightBytes(100);
    const a = budget.reserve(70);
    a?.release();
    a?.release();
    expect(budget.used).to.equal(0);
    expect(a?.ensure(10)).to.equal(false);
    expect(budget.reserve(100)?.bytes).to.equal(100);
  });

  it('admits one request larger than the whole budget when nothing else is in flight', () => {
    const budget = new InflightBytes(100);
    const big = budget.reserve(150);
    expect(big?.bytes).to.equal(150);
    expect(budget.reserve(1)).to.equal(undefined);
    big?.release();
    expect(budget.reserve(1)?.bytes).to.equal(1);
  });

  it('exposes the bytes in flight as a gauge', async () => {
    const registry = new Registry();
    const budget = new InflightBytes(100);
    budget.register(registry);
    budget.reserve(42);
    expect(await registry.getSingleMetricAsString('tenantry_gateway_inflight_request_bytes')).to.match(/ 42$/m);
  });
});
