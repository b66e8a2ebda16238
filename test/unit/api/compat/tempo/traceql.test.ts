// TraceQL parsing (the supported subset, syntax errors with their position,
// refusals naming the construct) and its SQL: every value bound, never in
// the statement text; types compared as Tempo compares them.
import { expect } from 'chai';
import fc from 'fast-check';
import { SqlParams } from '../../../../../api/query/sql-params.ts';
import { parseTraceQl } from '../../../../../api/compat/tempo/traceql-parser.ts';
import type { TraceQuery } from '../../../../../api/compat/tempo/traceql-parser.ts';
import { conditionSql, filtersOf, spansetsSql } from '../../../../../api/compat/tempo/traceql-sql.ts';

function parsed(q: string): TraceQuery {
  const r = parseTraceQl(q);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

function refusal(q: string): string {
  const r = parseTraceQl(q);
  if (r.ok) throw new Error(`${q} was accepted`);
  return r.error.message;
}

describe('TraceQL parser', () => {
  it('reads intrinsics, scoped and unscoped attributes, every operator and value type', () => {
    const q = parsed(
      '{ span.http.method = "GET" && duration > 1.5ms || .x !~ `a.*` && resource.n <= 2 && status != error && kind = client && span.b = true && span.f >= 0.5 }',
    );
    const text = JSON.stringify(q, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));
    for (const part of [
      '"scope":"span","name":"http.method"',
      '"ns":"1500000n"',
      '"scope":"any","name":"x"',
      '"op":"!~"',
      '"scope":"resource"',
      '"type":"int","value":2',
      '"type":"keyword","value":"error"',
      '"type":"bool","value":true',
      '"type":"float","value":0.5',
    ])
      expect(text).to.contain(part);
  });

  it('reads && and || between spansets and select()', () => {
    const q = parsed('{ name = "a" } && { name = "b" } || { kind = server } | select(span.x, resource.y, name)');
    expect(q.spansets.kind).to.equal('or');
    expect(filtersOf(q.spansets)).to.have.length(3);
    expect(q.select).to.deep.equal([
      { kind: 'attribute', scope: 'span', name: 'x' },
      { kind: 'attribute', scope: 'resource', name: 'y' },
      { kind: 'intrinsic', name: 'name' },
    ]);
    expect(spansetsSql(q.spansets)).to.equal('(((c0 > 0) AND (c1 > 0)) OR (c2 > 0))');
  });

  it('maps span: and trace: intrinsics to their short names', () => {
    expect(
      JSON.stringify(parsed('{ span:name = "a" && trace:rootService = "b" && trace:duration > 1s }'), (_k, v: unknown) =>
        typeof v === 'bigint' ? String(v) : v,
      ),
    )
      .to.contain('"name":"rootServiceName"')
      .and.contain('"name":"traceDuration"');
  });

  it('answers a syntax error with its line and column', () => {
    expect(refusal('{ span.x = }')).to.equal('invalid TraceQL query: parse error at line 1, col 12: syntax error: unexpected "}"');
    expect(refusal('{ name = "a" }\n  && { kind = }')).to.match(/line 2, col 15/);
  });

  it('names every construct it does not run', () => {
    const cases: [string, string][] = [
      ['{ } >> { }', '">>"'],
      ['{ } > { }', '">"'],
      ['{ } << { }', '"<<"'],
      ['{ } ~ { }', '"~"'],
      ['{ } | count() > 1', 'count()'],
      ['{ } | by(name)', 'by('],
      ['{ event:name = "x" }', 'event:name'],
      ['{ } | rate()', 'metrics'],
      ['{ span.a = 1 } | coalesce()', 'coalesce'],
    ];
    for (const [q, name] of cases) expect(refusal(q), q).to.contain(name).and.contain('not supported');
  });
});

describe('TraceQL SQL', () => {
  const sqlOf = (q: string): { sql: string; params: SqlParams } => {
    const params = new SqlParams();
    const sql = filtersOf(parsed(q).spansets)
      .map((f) => conditionSql(params, f))
      .join(' ');
    return { sql, params };
  };

  it('binds every attribute name and value, and anchors regular expressions as Tempo does', () => {
    const { sql, params } = sqlOf('{ span.http.method =~ "G.*" && resource.service.version = "cart" }');
    expect(sql).to.not.contain('http.method').and.not.contain('cart').and.not.contain('G.*');
    expect(Object.values(params.values)).to.include.members(['http.method', '^(?:G.*)$', 'service.version', 'cart']);
  });

  it('compares an integer literal with integer values only, a float with non-integer numbers only, strings with non-numbers', () => {
    expect(sqlOf('{ span.a > 1 }').sql).to.contain("match(span_attributes[{p0:String}], '^-?[0-9]+$') AND toInt64OrZero");
    expect(sqlOf('{ span.a > 1.0 }').sql).to.contain('toFloat64OrZero').and.contain('NOT match');
    expect(sqlOf('{ span.a = "1" }').sql).to.contain('NOT match(');
  });

  it('refuses comparisons Tempo does not define', () => {
    expect(() => sqlOf('{ duration = "x" }')).to.throw(/duration/);
    expect(() => sqlOf('{ status = server }')).to.throw(/status/);
    expect(() => sqlOf('{ span.a > true }')).to.throw(/booleans/);
  });

  it('reads escapes in pairs: an escaped backslash before a quote is a backslash, then the quote (found by the property below)', () => {
    const { params } = sqlOf(String.raw`{ span.k = "\\'" || name = "a\\" }`);
    expect(Object.values(params.values)).to.include.members(["\\'", 'a\\']);
    expect(() => sqlOf(String.raw`{ span.k = "\x41" }`)).to.throw(/invalid TraceQL query/);
  });

  it('builds the same statement text whatever the string values are: they travel only as parameters (property)', () => {
    const reference = sqlOf('{ span.k = "x" || name = "y" }').sql;
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), fc.string({ maxLength: 30 }), (a, b) => {
        const { sql, params } = sqlOf(`{ span.k = ${JSON.stringify(a)} || name = ${JSON.stringify(b)} }`);
        expect(sql).to.equal(reference);
        expect(Object.values(params.values)).to.include.members([a, b]);
      }),
      { numRuns: 300 },
    );
  });
});
