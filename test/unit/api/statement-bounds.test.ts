// The bounds a statement carries into ClickHouse, and the statement that stops it.
import { expect } from 'chai';
import { killStatement, statementTag } from '../../../api/query/running-statements.ts';
import { statementLimits } from '../../../src/target/statement-limits.ts';

const gib = 1024 ** 3;

describe('statement bounds', () => {
  it("derives embedded memory and both modes' result bounds from the process memory", () => {
    // A quarter of it for the statements of the two query slots together.
    expect(statementLimits('embedded', { memoryLimitBytes: 2 * gib })).to.deep.equal({
      memoryBytes: gib / 4,
      resultBytes: 64 * 1024 ** 2,
      resultRows: 1024 ** 2,
    });
    expect(statementLimits('server', { memoryLimitBytes: 2 * gib })).to.deep.equal({ resultBytes: 64 * 1024 ** 2, resultRows: 1024 ** 2 });
  });

  it('keeps floors for a small process', () => {
    const small = statementLimits('embedded', { memoryLimitBytes: 128 * 1024 ** 2 });
    expect(small.memoryBytes).to.equal(64 * 1024 ** 2);
    expect(small.resultBytes).to.equal(8 * 1024 ** 2);
  });

  it('names a statement and kills it by that name, on the cluster when there is one', () => {
    const id = '0b7e5c1a-3f4d-4e2a-9c1b-2d3e4f5a6b7c';
    expect(statementTag(id)).to.equal(`, log_comment = '${id}'`);
    expect(killStatement(id, undefined)).to.equal(`KILL QUERY WHERE Settings['log_comment'] = '${id}' ASYNC`);
    expect(killStatement(id, 'main')).to.equal(`KILL QUERY ON CLUSTER main WHERE Settings['log_comment'] = '${id}' ASYNC`);
  });

  it('refuses to splice anything but a uuid', () => {
    expect(() => statementTag("x' OR 1 = 1 --")).to.throw('bug: statement id');
    expect(() => killStatement("0b7e5c1a-3f4d-4e2a-9c1b-2d3e4f5a6b7c' OR '1", undefined)).to.throw('bug: statement id');
  });
});
