import { expect } from 'chai';
import { parseLogqlDuration as parseDuration } from '../../../../../api/query/durations.ts';
import { parseLogql, unquote } from '../../../../../api/compat/loki/logql-ast.ts';
import type { LogQuery } from '../../../../../api/compat/loki/logql-ast.ts';

function parsed(text: string): LogQuery {
  const result = parseLogql(text);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

function refusal(text: string): string {
  const result = parseLogql(text);
  if (result.ok) throw new Error(`accepted: ${text}`);
  return result.error.message;
}

describe('LogQL parsing (the subset Tenantry runs)', () => {
  it('reads a selector with every matcher and a pipeline in order', () => {
    expect(parsed('{a="1", b!="2", c=~"3.*", d!~"4"} |= "x" or "y" != "z" | json | n >= 5 and (s="t" or u!~"v") | drop __error__, w')).to.deep.equal({
      kind: 'logs',
      selector: {
        matchers: [
          { name: 'a', op: '=', value: '1' },
          { name: 'b', op: '!=', value: '2' },
          { name: 'c', op: '=~', value: '3.*' },
          { name: 'd', op: '!~', value: '4' },
        ],
        stages: [
          { kind: 'line', filter: { op: '|=', values: ['x', 'y'] } },
          { kind: 'line', filter: { op: '!=', values: ['z'] } },
          { kind: 'parser', parser: 'json' },
          {
            kind: 'label',
            predicate: {
              kind: 'and',
              left: { kind: 'number', name: 'n', op: '>=', value: 5 },
              right: {
                kind: 'or',
                left: { kind: 'match', matcher: { name: 's', op: '=', value: 't' } },
                right: { kind: 'match', matcher: { name: 'u', op: '!~', value: 'v' } },
              },
            },
          },
          { kind: 'drop', names: ['__error__', 'w'] },
        ],
      },
    });
  });

  it('reads metric expressions: range functions, nested aggregations with by/without lists, topk', () => {
    const q = parsed('topk(3, sum by (a, b, c) (rate({x="y"} | logfmt [5m])))');
    expect(q).to.deep.equal({
      kind: 'metric',
      expr: {
        kind: 'vector',
        fn: 'topk',
        k: 3,
        grouping: undefined,
        inner: {
          kind: 'vector',
          fn: 'sum',
          k: undefined,
          grouping: { mode: 'by', labels: ['a', 'b', 'c'] },
          inner: {
            kind: 'range',
            fn: 'rate',
            rangeNs: 300_000_000_000n,
            selector: { matchers: [{ name: 'x', op: '=', value: 'y' }], stages: [{ kind: 'parser', parser: 'logfmt' }] },
          },
        },
      },
    });
    const without = parsed('sum(bytes_over_time({x="y"}[1h30m])) without (p, q)');
    expect(without.kind === 'metric' && without.expr.kind === 'vector' ? without.expr.grouping : undefined).to.deep.equal({
      mode: 'without',
      labels: ['p', 'q'],
    });
  });

  it("folds arithmetic between vector() and numbers (Grafana's health check) and refuses any other binary operation", () => {
    expect(parsed('vector(1)+vector(1)')).to.deep.equal({ kind: 'metric', expr: { kind: 'constant', value: 2, scalar: false } });
    expect(parsed('2 * 3')).to.deep.equal({ kind: 'metric', expr: { kind: 'constant', value: 6, scalar: true } });
    expect(refusal('2 * 3 - 1')).to.include('chained binary operations');
    expect(refusal('sum(rate({a="b"}[1m])) / 2')).to.include('binary operations');
    expect(refusal('sum(vector(1))')).to.include('not supported');
  });

  it("answers a syntax error with Loki's line and column", () => {
    expect(refusal('{a="b"')).to.match(/^parse error at line 1, col 7: syntax error: unexpected \$end/);
    expect(refusal('{a="b"}\n  | json |')).to.match(/^parse error at line 2, col \d+: syntax error/);
    expect(refusal('')).to.match(/^parse error/);
  });

  it('names each construct it refuses', () => {
    const cases: readonly [string, string][] = [
      ['{a="b"} | line_format "x"', 'line_format'],
      ['{a="b"} | label_format x=y', 'label_format'],
      ['{a="b"} | pattern "<x>"', 'pattern'],
      ['{a="b"} | regexp "(?P<x>.)"', 'regexp'],
      ['{a="b"} | unpack', 'unpack'],
      ['{a="b"} | decolorize', 'decolorize'],
      ['{a="b"} | keep a', 'keep'],
      ['{a="b"} | logfmt --strict', 'logfmt flags'],
      ['{a="b"} | json x="y"', 'json with arguments'],
      ['{a="b"} | x > 5s', 'duration/bytes'],
      ['{a="b"} |= ip("1.2.3.4")', 'ip'],
      ['sum_over_time({a="b"} | logfmt | unwrap x [1m])', 'sum_over_time'],
      ['count_over_time({a="b"}[1m] offset 1m)', 'offset'],
      ['absent_over_time({a="b"}[1m])', 'absent_over_time'],
      ['stddev(count_over_time({a="b"}[1m]))', 'stddev'],
      ['sort(count_over_time({a="b"}[1m]))', 'sort'],
      ['label_replace(count_over_time({a="b"}[1m]), "x", "$1", "a", "(.*)")', 'label_replace'],
    ];
    for (const [query, name] of cases) {
      const message = refusal(query);
      expect(message, query).to.include(name);
    }
  });

  it('unquotes strings as Go does and reads durations', () => {
    expect(unquote('"a\\\\d\\"\\n\\t\\x41\\u00e9"')).to.equal('a\\d"\n\tAé');
    expect(unquote('`raw \\d`')).to.equal('raw \\d');
    expect(refusal('{a="\\q"}')).to.include('unknown escape');
    expect(parseDuration('1h30m')).to.equal(5_400_000_000_000n);
    expect(parseDuration('250ms')).to.equal(250_000_000n);
    expect(parseDuration('1.5s')).to.equal(1_500_000_000n);
    expect(parseDuration('5x')).to.equal(undefined);
  });
});
