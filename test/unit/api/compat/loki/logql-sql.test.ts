import { expect } from 'chai';
import fc from 'fast-check';
import { parseLogql } from '../../../../../api/compat/loki/logql-ast.ts';
import type { LogSelector } from '../../../../../api/compat/loki/logql-ast.ts';
import { logsSql, metricSql } from '../../../../../api/compat/loki/logql-sql.ts';
import { labelName } from '../../../../../api/compat/loki/otlp-labels.ts';
import { SqlParams } from '../../../../../api/query/sql-params.ts';

// The tenant predicate comes bound from the statement's TenantScan (api/query/tenant-scan.ts).
const scan = { table: 'db.logs', tenantIs: 'tenant_id = {tenant:String}' };

/** A LogQL string literal holding `value`. */
const literal = (value: string): string => JSON.stringify(value);

describe('LogQL to SQL', () => {
  it('binds every value of a query: none appears in the SQL text', () => {
    // Values are prefixed with a marker no SQL of the builder contains.
    const value = fc.string({ minLength: 1, maxLength: 20 }).map((v) => `zq${v}`);
    fc.assert(
      fc.property(value, value, value, value, (a, b, c, d) => {
        const query = `sum by (x) (count_over_time({service_name=${literal(a)}} |= ${literal(b)} | logfmt | k=~${literal(c)} | n > 3 | m!=${literal(d)} [1m]))`;
        const parsed = parseLogql(query);
        if (!parsed.ok || parsed.value.kind !== 'metric') return;
        const params = new SqlParams();
        const sql = metricSql(params, scan, parsed.value.expr, { startNs: 0n, stepNs: 60_000_000_000n, points: 10 });
        for (const v of [a, b, c, d]) expect(sql).to.not.include(v);
        expect(Object.values(params.values)).to.include.members([a, b, d]);
        const logs = new SqlParams();
        const selector: LogSelector = {
          matchers: [{ name: 'service_name', op: '=', value: a }],
          stages: [{ kind: 'line', filter: { op: '|~', values: [b] } }],
        };
        const text = logsSql(logs, scan, selector, 0n, 1n, 10, 'forward');
        expect(text).to.not.include(a);
        expect(text).to.not.include(b);
        expect(Object.values(logs.values)).to.include.members([a, b]);
        expect(text).to.include(scan.tenantIs);
      }),
      { numRuns: 200 },
    );
  });

  it('anchors label regexes and leaves line regexes un-anchored, as Loki does', () => {
    const parsed = parseLogql('{service_name=~"check.*"} |~ "err"');
    if (!parsed.ok || parsed.value.kind !== 'logs') throw new Error('parse');
    const params = new SqlParams();
    logsSql(params, scan, parsed.value.selector, 0n, 1n, 10, 'backward');
    expect(Object.values(params.values)).to.include.members(['^(?:check.*)$', 'err']);
  });

  it("names attributes as Loki's OTLP translator does", () => {
    expect(labelName('service.name')).to.equal('service_name');
    expect(labelName('http.request-id')).to.equal('http_request_id');
    expect(labelName('a..b')).to.equal('a_b');
    expect(labelName('9lives')).to.equal('key_9lives');
  });
});
