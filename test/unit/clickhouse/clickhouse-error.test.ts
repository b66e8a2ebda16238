// Store failures are classified by code, once: what a caller may retry
// (unavailable, timeout), what the request caused (invalid_query), and bugs.
import { ClickHouseError } from '@clickhouse/client';
import { expect } from 'chai';
import { classifyStoreError } from '../../../src/clickhouse/clickhouse-error.ts';

const chError = (code: number): ClickHouseError => new ClickHouseError({ message: `failed with ${code}`, code: String(code), type: 'X' });

describe('classifyStoreError', () => {
  it('treats a disk that is full, read-only or lost its files as the store being unavailable, not as a bug', () => {
    for (const code of [243, 242, 74, 75, 76, 77, 1001]) expect(classifyStoreError(chError(code)).kind, String(code)).to.equal('unavailable');
  });

  it("tells timeouts, the request's own mistakes and unknown codes apart", () => {
    expect(classifyStoreError(chError(159)).kind).to.equal('timeout');
    expect(classifyStoreError(chError(62)).kind).to.equal('invalid_query');
    expect(classifyStoreError(chError(49)).kind).to.equal('internal');
  });

  it('names the statement limit a query ran into, keeping its kind for every other caller', () => {
    expect(classifyStoreError(chError(241))).to.include({ kind: 'unavailable', limit: 'memory' });
    expect(classifyStoreError(chError(396))).to.include({ kind: 'invalid_query', limit: 'result' });
    expect(classifyStoreError(chError(158)).limit).to.equal('read');
    expect(classifyStoreError(chError(307)).limit).to.equal('read');
    expect(classifyStoreError(chError(159)).limit).to.equal('time');
    expect(classifyStoreError(chError(62))).not.to.have.property('limit');
  });

  it('classifies network errors and aborts without a ClickHouse code', () => {
    expect(classifyStoreError(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).to.deep.equal({
      kind: 'unavailable',
      message: 'refused',
      code: undefined,
    });
    expect(classifyStoreError(Object.assign(new Error('aborted'), { name: 'AbortError' })).kind).to.equal('timeout');
    expect(classifyStoreError('text').kind).to.equal('internal');
  });
});
