// The Prometheus proof's own parts: the answer comparison must catch every
// kind of difference (else the differential table could pass wrongly), and
// the compliance report must tell refusals of unsupported constructs from
// failures.
import { expect } from 'chai';
import { constructsOf, isUnsupportedRefusal } from '../../../integration/prometheus/support/compliance-run.ts';
import { compareAnswers, sameValue } from '../../../integration/prometheus/support/promql-client.ts';
import type { PromAnswer } from '../../../integration/prometheus/support/promql-client.ts';

const matrix = (series: Array<{ metric: Record<string, string>; values: Array<[number, string]> }>): PromAnswer => ({
  httpStatus: 200,
  status: 'success',
  resultType: 'matrix',
  result: series,
});
const base = [
  {
    metric: { __name__: 'up', instance: 'a:1' },
    values: [
      [10, '1'],
      [20, '0'],
    ] as Array<[number, string]>,
  },
  { metric: { __name__: 'up', instance: 'b:1' }, values: [[10, '1']] as Array<[number, string]> },
];

describe('Prometheus proof: answer comparison', () => {
  it('equal answers compare equal whatever the series order', () => {
    expect(compareAnswers(matrix(base), matrix([...base].reverse()))).to.equal(undefined);
  });

  it('a missing or extra label set, a missing point, a shifted timestamp or a value off by more than 1e-9 relative is a difference', () => {
    const [a, b] = base;
    if (a === undefined || b === undefined) throw new Error('fixture');
    expect(compareAnswers(matrix(base), matrix([a]))).to.match(/missing \{__name__="up", instance="b:1"\}/);
    expect(compareAnswers(matrix(base), matrix([a, b, { metric: { x: '1' }, values: [[10, '1']] }]))).to.match(/extra \{x="1"\}/);
    expect(compareAnswers(matrix(base), matrix([{ ...a, values: [[10, '1']] }, b]))).to.match(/1 points, expected 2/);
    expect(
      compareAnswers(
        matrix(base),
        matrix([
          {
            ...a,
            values: [
              [10, '1'],
              [21, '0'],
            ],
          },
          b,
        ]),
      ),
    ).to.match(/at 21, expected 20/);
    expect(
      compareAnswers(
        matrix(base),
        matrix([
          {
            ...a,
            values: [
              [10, '1.000000002'],
              [20, '0'],
            ],
          },
          b,
        ]),
      ),
    ).to.match(/1\.000000002, expected 1/);
  });

  it('values: within 1e-9 relative, NaN equals NaN, infinities only themselves', () => {
    expect(sameValue('1', '1.0000000005')).to.equal(true);
    expect(sameValue('NaN', 'NaN')).to.equal(true);
    expect(sameValue('NaN', '0')).to.equal(false);
    expect(sameValue('+Inf', '+Inf')).to.equal(true);
    expect(sameValue('+Inf', 'NaN')).to.equal(false);
    expect(sameValue('-Inf', '-1e308')).to.equal(false);
    expect(sameValue('+Inf', '-Inf')).to.equal(false);
    expect(sameValue('0', '1e-300')).to.equal(false);
  });

  it('an error, another result type or a failed reference is a difference', () => {
    const error: PromAnswer = { httpStatus: 400, status: 'error', errorType: 'bad_data', error: 'unsupported function "x"' };
    expect(compareAnswers(matrix(base), error)).to.match(/HTTP 400 bad_data/);
    expect(compareAnswers(error, matrix(base))).to.match(/reference failed/);
    expect(compareAnswers(matrix(base), { httpStatus: 200, status: 'success', resultType: 'vector', result: [] })).to.match(/resultType vector/);
  });
});

describe('Prometheus proof: compliance report', () => {
  it('counts a 400 bad_data naming an unsupported construct as unsupported, anything else as a failure', () => {
    expect(isUnsupportedRefusal('bad_data: unsupported function "time"')).to.equal(true);
    expect(isUnsupportedRefusal('server_error: server error: 500')).to.equal(false);
    expect(isUnsupportedRefusal('bad_data: 1:5: parse error: unexpected')).to.equal(false);
  });

  it('groups refusals by the construct they name', () => {
    const counts = constructsOf([
      { query: 'a', detail: 'bad_data: unsupported function "time"' },
      { query: 'b', detail: 'bad_data: unsupported function "time"' },
      { query: 'c', detail: 'bad_data: unsupported aggregation "stddev"' },
    ]);
    expect([...counts]).to.deep.equal([
      ['function "time"', 2],
      ['aggregation "stddev"', 1],
    ]);
  });
});
