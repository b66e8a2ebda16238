// The runner's own parts: the SETTINGS clause it appends and the JSONEachRow
// body it parses whole.
import { expect } from 'chai';
import fc from 'fast-check';
import { parseEachRow, settingsClause } from '../../../api/query/query-runner.ts';
import { classifyStoreError } from '../../../src/clickhouse/clickhouse-error.ts';

/** The block a ClickHouse server (25.11+) ends a body with when it fails mid-stream. */
const exceptionBlock = (tag: string, message: string): string => `\r\n__exception__\r\n${tag}\n${message}\n${message.length + 1} ${tag}\r\n__exception__\r\n`;

describe('api/query runner parts', () => {
  it('puts the time limit and UTC in one SETTINGS clause on a line of its own', () => {
    expect(settingsClause(30_000)).to.equal("\nSETTINGS max_execution_time = 30, timeout_overflow_mode = 'throw', session_timezone = 'UTC'");
    expect(settingsClause(1500)).to.contain('max_execution_time = 1.5,');
  });

  it("adds a statement's own settings before the gate's thread limit, and refuses a name or value that is not plain", () => {
    expect(settingsClause(30_000, 1, { query_plan_merge_expressions: 0 })).to.equal(
      "\nSETTINGS max_execution_time = 30, timeout_overflow_mode = 'throw', session_timezone = 'UTC', query_plan_merge_expressions = 0, max_threads = 1",
    );
    expect(() => settingsClause(30_000, undefined, { 'x = 1, readonly': 0 })).to.throw('bug: statement setting');
    expect(() => settingsClause(30_000, undefined, { max_threads: Number.NaN })).to.throw('bug: statement setting');
  });

  it('parses a JSONEachRow body whole, newlines inside strings included', () => {
    expect(parseEachRow('', undefined)).to.deep.equal([]);
    expect(parseEachRow('{"a":1}\n', undefined)).to.deep.equal([{ a: 1 }]);
    expect(parseEachRow('{"a":"x\\ny"}\n{"a":"\\u000a,"}\n', undefined)).to.deep.equal([{ a: 'x\ny' }, { a: '\n,' }]);
  });

  it('gives back any rows as JSON.parse of each line would', () => {
    const row = fc.record({
      s: fc.string(),
      n: fc.integer(),
      m: fc.dictionary(fc.string(), fc.string()),
      a: fc.array(fc.double({ noNaN: true, noDefaultInfinity: true })),
    });
    fc.assert(
      fc.property(fc.array(row), (rows) => {
        const text = rows.map((r) => `${JSON.stringify(r)}\n`).join('');
        expect(parseEachRow(text, undefined)).to.deep.equal(
          text
            .split('\n')
            .slice(0, -1)
            .map((l) => JSON.parse(l) as unknown),
        );
      }),
    );
  });

  it('turns a tagged exception at the end of the body into the ClickHouse error it carries', () => {
    const message = 'Code: 159. DB::Exception: Timeout exceeded: elapsed 1.0 seconds, maximum: 1. (TIMEOUT_EXCEEDED) (version 25.11.1.1)';
    const text = `{"a":1}\n${exceptionBlock('TAG123', message)}`;
    let thrown: unknown;
    try {
      parseEachRow(text, 'TAG123');
    } catch (error) {
      thrown = error;
    }
    expect(classifyStoreError(thrown)).to.include({ kind: 'timeout', code: 159 });
    // Without the server's tag the text is no exception block but a broken body.
    expect(() => parseEachRow(text, undefined)).to.throw(SyntaxError);
  });
});
