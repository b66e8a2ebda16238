// rate, increase, delta, irate and idelta at one step, with expectations
// worked out from Prometheus 3's extrapolation rules: extrapolate to a window
// edge when the first/last sample is within 1.1 average intervals of it (else
// half an interval), never back past the counter's zero point; resets add the
// value before the drop.
import { expect } from 'chai';
import { call, expectClose, floats, histograms, nativeHistogram, only, valueOf, vectorOf } from './call-function.ts';

describe('PromQL rate functions', () => {
  const regular = floats([
    [15, 1],
    [30, 2],
    [45, 3],
    [60, 4],
  ]);

  it('extrapolates a regular counter to the window start and keeps the name for delayed removal', () => {
    // 3 over 45 s sampled, 15 s to the start (below 16.5 s), the zero point 15 s back: factor 60/45.
    expectClose(valueOf(call('increase', [regular])), 4);
    expectClose(valueOf(call('rate', [regular])), 4 / 60);
    const el = only(call('rate', [regular]));
    expect(el.dropName).to.equal(true);
    expect(el.labels).to.deep.equal([
      ['__name__', 'http_requests_total'],
      ['job', 'api'],
    ]);
    expect(el.t).to.equal(60_000);
  });

  it('adds the value before each counter reset', () => {
    // 15 - 10 + 20 = 25 over 45 s; the zero point 18 s back is beyond the 15 s to the start.
    expectClose(
      valueOf(
        call('increase', [
          floats([
            [15, 10],
            [30, 20],
            [45, 5],
            [60, 15],
          ]),
        ]),
      ),
      (25 * 60) / 45,
    );
  });

  it('stops extrapolating at the counter zero point', () => {
    // 9 over 45 s from 1: zero is 5 s before the first sample, nearer than the 15 s to the start.
    expectClose(
      valueOf(
        call('increase', [
          floats([
            [15, 1],
            [30, 4],
            [45, 7],
            [60, 10],
          ]),
        ]),
      ),
      (9 * 50) / 45,
    );
  });

  it('extrapolates only half an interval when the series starts late in the window', () => {
    // First sample 40 s after the start (more than 1.1 x 10 s): half an interval, then clamped to the zero point at 0.
    expectClose(
      valueOf(
        call('increase', [
          floats([
            [40, 0],
            [50, 1],
            [60, 2],
          ]),
        ]),
      ),
      2,
    );
    // A gauge is not clamped: delta extrapolates 5 s back and 0 s forward over 20 s sampled.
    expectClose(
      valueOf(
        call('delta', [
          floats([
            [40, 0],
            [50, 1],
            [60, 2],
          ]),
        ]),
      ),
      (2 * 25) / 20,
    );
  });

  it('treats delta as a gauge: decreases are not resets', () => {
    expectClose(
      valueOf(
        call('delta', [
          floats([
            [15, 5],
            [30, 3],
            [45, 8],
            [60, 2],
          ]),
        ]),
      ),
      (-3 * 60) / 45,
    );
  });

  it('answers nothing with fewer than two samples', () => {
    expect(vectorOf(call('rate', [floats([[30, 5]])]))).to.deep.equal([]);
    expect(vectorOf(call('delta', [floats([])]))).to.deep.equal([]);
    expect(vectorOf(call('irate', [floats([[30, 5]])]))).to.deep.equal([]);
  });

  it('adds a non-counter info for a name without a counter suffix, not for _total', () => {
    const gauge = floats(
      [
        [30, 1],
        [60, 2],
      ],
      [['__name__', 'temperature']],
    );
    const result = call('rate', [gauge]);
    expect(result.ok && result.value.annotations).to.deep.equal([
      'PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: "temperature"',
    ]);
    const counter = call('rate', [regular]);
    expect(counter.ok && counter.value.annotations).to.equal(undefined);
  });

  it('takes irate and idelta from the last two samples, a drop being a reset for irate', () => {
    const dropped = floats([
      [30, 7],
      [45, 10],
      [60, 4],
    ]);
    expectClose(valueOf(call('irate', [dropped])), 4 / 15);
    expectClose(valueOf(call('idelta', [dropped])), -6);
    expectClose(valueOf(call('irate', [regular])), 1 / 15);
  });

  it('propagates NaN and infinities', () => {
    expect(
      Number.isNaN(
        valueOf(
          call('rate', [
            floats([
              [30, 1],
              [60, NaN],
            ]),
          ]),
        ),
      ),
    ).to.equal(true);
    expect(
      valueOf(
        call('delta', [
          floats([
            [30, 1],
            [60, Infinity],
          ]),
        ]),
      ),
    ).to.equal(Infinity);
  });

  it('computes the increase of native histograms bucket by bucket, extrapolated like floats', () => {
    const h1 = nativeHistogram(4, 10, [4]);
    const h2 = nativeHistogram(8, 20, [6, 2]);
    // count 4 over 30 s sampled with 30 s to the start (zero point exactly 30 s back): factor 2.
    const el = only(
      call('increase', [
        histograms([
          [30, h1],
          [60, h2],
        ]),
      ]),
    );
    expect(el.h?.count).to.equal(8);
    expect(el.h?.sum).to.equal(20);
    expect(el.h?.positiveBuckets).to.deep.equal([4, 4]);
    expect(el.h?.counterResetHint).to.equal('gauge');
    const rate = only(
      call('rate', [
        histograms([
          [30, h1],
          [60, h2],
        ]),
      ]),
    );
    expectClose(rate.h?.count ?? NaN, 8 / 60);
  });

  it('adds back a native histogram counter reset', () => {
    const h1 = nativeHistogram(8, 20, [8]);
    const h2 = nativeHistogram(2, 5, [2]);
    // The drop in count is a reset: increase = h2 - h1 + h1 = h2 = 2, then extrapolated by 2 (zero point 30 s back).
    const el = only(
      call('increase', [
        histograms([
          [30, h1],
          [60, h2],
        ]),
      ]),
    );
    expectClose(el.h?.count ?? NaN, 2 * 2);
    const irate = only(
      call('irate', [
        histograms([
          [30, h1],
          [60, h2],
        ]),
      ]),
    );
    expectClose(irate.h?.count ?? NaN, 2 / 30);
  });

  it('refuses a window mixing floats and histograms with a warning', () => {
    const mixed = {
      type: 'matrix' as const,
      value: [{ labels: [['__name__', 'x']] as const, floats: [{ t: 30_000, f: 1 }], histograms: [{ t: 60_000, h: nativeHistogram(1, 1, [1]) }] }],
    };
    const result = call('rate', [mixed]);
    expect(result.ok && result.value.vector).to.deep.equal([]);
    expect(result.ok && result.value.annotations).to.deep.equal(['PromQL warning: encountered a mix of histograms and floats for metric name "x"']);
  });
});
