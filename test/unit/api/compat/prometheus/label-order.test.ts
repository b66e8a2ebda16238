// The order the PromQL engine returns series in, sorted in TypeScript
// rather than by the statement: ClickHouse's (and Go's) byte order of the
// UTF-8 strings, label set by label set as Prometheus' labels.Compare.
import { expect } from 'chai';
import fc from 'fast-check';
import { compareLabelSets, compareUtf8 } from '../../../../../api/compat/prometheus/engine/label-order.ts';

const sign = (n: number): number => Math.sign(n);

describe('prometheus label order', () => {
  it('compares strings in UTF-8 byte order, surrogate pairs included', () => {
    expect(sign(compareUtf8('\u{10000}', '\uffff'))).to.equal(1); // code unit order would say -1
    expect(sign(compareUtf8('\uffff', '\u{10000}'))).to.equal(-1);
    expect(sign(compareUtf8('a', 'ab'))).to.equal(-1);
    expect(compareUtf8('job', 'job')).to.equal(0);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(sign(compareUtf8(a, b))).to.equal(sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
      { numRuns: 2000 },
    );
  });

  it('orders label sets pair by pair, name before value, then the shorter first', () => {
    const sets: (readonly [string, string])[][] = [
      [
        ['__name__', 'up'],
        ['job', 'b'],
      ],
      [
        ['__name__', 'up'],
        ['job', 'a'],
        ['zone', 'x'],
      ],
      [
        ['__name__', 'up'],
        ['job', 'a'],
      ],
      [
        ['__name__', 'up'],
        ['instance', 'z'],
      ],
      [['__name__', 'down']],
    ];
    expect([...sets].sort(compareLabelSets)).to.deep.equal([
      [['__name__', 'down']],
      [
        ['__name__', 'up'],
        ['instance', 'z'],
      ],
      [
        ['__name__', 'up'],
        ['job', 'a'],
      ],
      [
        ['__name__', 'up'],
        ['job', 'a'],
        ['zone', 'x'],
      ],
      [
        ['__name__', 'up'],
        ['job', 'b'],
      ],
    ]);
  });
});
