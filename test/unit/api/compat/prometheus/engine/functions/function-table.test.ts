// The table holds every flag-free Prometheus 3 function with its signature,
// and none of the experimental ones.
import { expect } from 'chai';
import { functionTable } from '../../../../../../../api/compat/prometheus/engine/functions/function-table.ts';

const flagFree = [
  'abs',
  'absent',
  'absent_over_time',
  'acos',
  'acosh',
  'asin',
  'asinh',
  'atan',
  'atanh',
  'avg_over_time',
  'ceil',
  'changes',
  'clamp',
  'clamp_max',
  'clamp_min',
  'cos',
  'cosh',
  'count_over_time',
  'days_in_month',
  'day_of_month',
  'day_of_week',
  'day_of_year',
  'deg',
  'delta',
  'deriv',
  'exp',
  'floor',
  'histogram_avg',
  'histogram_count',
  'histogram_sum',
  'histogram_stddev',
  'histogram_stdvar',
  'histogram_fraction',
  'histogram_quantile',
  'hour',
  'idelta',
  'increase',
  'irate',
  'label_replace',
  'label_join',
  'last_over_time',
  'ln',
  'log10',
  'log2',
  'max_over_time',
  'min_over_time',
  'minute',
  'month',
  'pi',
  'predict_linear',
  'present_over_time',
  'quantile_over_time',
  'rad',
  'rate',
  'resets',
  'round',
  'scalar',
  'sgn',
  'sin',
  'sinh',
  'sort',
  'sort_desc',
  'sqrt',
  'stddev_over_time',
  'stdvar_over_time',
  'sum_over_time',
  'tan',
  'tanh',
  'time',
  'timestamp',
  'vector',
  'year',
];

const flagged = [
  'sort_by_label',
  'sort_by_label_desc',
  'mad_over_time',
  'double_exponential_smoothing',
  'holt_winters',
  'info',
  'first_over_time',
  'ts_of_first_over_time',
  'ts_of_last_over_time',
  'ts_of_max_over_time',
  'ts_of_min_over_time',
  'histogram_quantiles',
  'start_timestamp',
  'step',
  'range',
  'start',
  'end',
  'min_of',
  'max_of',
];

describe('PromQL function table', () => {
  it('holds exactly the flag-free functions', () => {
    expect([...functionTable.keys()].sort()).to.deep.equal([...flagFree].sort());
    for (const name of flagged) expect(functionTable.has(name), name).to.equal(false);
  });

  it('declares the signatures the parser checks', () => {
    const sig = (name: string): unknown => {
      const def = functionTable.get(name);
      return def && [def.argTypes, def.optional, def.returnType];
    };
    expect(sig('rate')).to.deep.equal([['matrix'], 0, 'vector']);
    expect(sig('quantile_over_time')).to.deep.equal([['scalar', 'matrix'], 0, 'vector']);
    expect(sig('predict_linear')).to.deep.equal([['matrix', 'scalar'], 0, 'vector']);
    expect(sig('round')).to.deep.equal([['vector', 'scalar'], 1, 'vector']);
    expect(sig('hour')).to.deep.equal([['vector'], 1, 'vector']);
    expect(sig('label_join')).to.deep.equal([['vector', 'string', 'string', 'string'], -1, 'vector']);
    expect(sig('label_replace')).to.deep.equal([['vector', 'string', 'string', 'string', 'string'], 0, 'vector']);
    expect(sig('histogram_fraction')).to.deep.equal([['scalar', 'scalar', 'vector'], 0, 'vector']);
    expect(sig('scalar')).to.deep.equal([['vector'], 0, 'scalar']);
    expect(sig('time')).to.deep.equal([[], 0, 'scalar']);
    expect(sig('vector')).to.deep.equal([['scalar'], 0, 'vector']);
  });
});
