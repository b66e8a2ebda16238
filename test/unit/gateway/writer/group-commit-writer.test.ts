import { expect } from 'chai';
import { GroupCommitWriter, maxInsertsInFlight } from '../../../../gateway/writer/group-commit-writer.ts';
import type { RowSink, SinkResult } from '../../../../gateway/writer/row-sink.ts';
import type { TableName } from '../../../../gateway/ingest/row-batch.ts';

/** A sink recording inserts; each insert waits until `release` is called when gated. */
class FakeSink implements RowSink {
  readonly inserts: { table: TableName; rows: string }[] = [];
  result: SinkResult = { ok: true };
  gated = false;
  #waiting: (() => void)[] = [];
  insert(table: TableName, chunks: readonly Buffer[]): Promise<SinkResult> {
    this.inserts.push({ table, rows: Buffer.concat(chunks).toString() });
    if (!this.gated) return Promise.resolve(this.result);
    return new Promise((resolve) => { this.#waiting.push(() => { resolve(this.result); }); });
  }
  release(): void {
    this.gated = false;
    for (const w of this.#waiting.splice(0)) w();
  }
}

const observer = { queueBytes: (): void => undefined, flushed: (): void => undefined };
const config = { maxBatchRows: 3, maxBatchBytes: 1000, maxBatchDelayMs: 20, maxQueueBytes: 100 };
const row = (s: string): string => `{"x":"${s}"}\n`;

describe('group-commit-writer', () => {
  it('groups concurrent submissions into one insert per table, answering each after its flush', async () => {
    const sink = new FakeSink();
    const writer = new GroupCommitWriter(sink, { ...config, maxBatchRows: 100 }, observer);
    const results = await Promise.all([writer.submit('spans', Buffer.from(row('a')), 1), writer.submit('spans', Buffer.from(row('b')), 1), writer.submit('logs', Buffer.from(row('c')), 1)]);
    expect(results.every((r) => r.ok)).to.equal(true);
    expect(sink.inserts).to.deep.equal([{ table: 'spans', rows: row('a') + row('b') }, { table: 'logs', rows: row('c') }]);
  });

  it('flushes at once when the row bound is reached, and by age otherwise', async () => {
    const sink = new FakeSink();
    const writer = new GroupCommitWriter(sink, { ...config, maxBatchDelayMs: 60_000 }, observer);
    const full = writer.submit('spans', Buffer.from(row('1') + row('2') + row('3')), 3);
    expect(sink.inserts).to.have.length(1);
    expect((await full).ok).to.equal(true);
    const aged = new GroupCommitWriter(sink, { ...config, maxBatchRows: 100, maxBatchDelayMs: 10 }, observer);
    const started = Date.now();
    await aged.submit('spans', Buffer.from(row('late')), 1);
    expect(Date.now() - started).to.be.greaterThanOrEqual(8);
  });

  it('writes a sizeable batch (maxBatchRows / 50) at once when the table is idle', async () => {
    const sink = new FakeSink();
    const writer = new GroupCommitWriter(sink, { ...config, maxBatchRows: 100, maxBatchDelayMs: 60_000 }, observer);
    const small = writer.submit('spans', Buffer.from(row('1')), 1);
    expect(sink.inserts).to.have.length(0);
    const sizeable = writer.submit('spans', Buffer.from(row('2')), 1);
    expect(sink.inserts).to.have.length(1);
    await Promise.all([small, sizeable]);
  });

  it('keeps one insert in flight per table and grows the next batch meanwhile', async () => {
    const sink = new FakeSink();
    sink.gated = true;
    const writer = new GroupCommitWriter(sink, { ...config, maxBatchDelayMs: 0, maxQueueBytes: 10_000 }, observer);
    expect(maxInsertsInFlight).to.equal(1);
    const first = writer.submit('spans', Buffer.from(row('1')), 1);
    const later = [writer.submit('spans', Buffer.from(row('2')), 1), writer.submit('spans', Buffer.from(row('3')), 1)];
    expect(sink.inserts).to.have.length(1);
    sink.release();
    await Promise.all([first, ...later]);
    expect(sink.inserts.map((i) => i.rows)).to.deep.equal([row('1'), row('2') + row('3')]);
  });

  it('refuses submissions past the queue bound and accepts again once written', async () => {
    const sink = new FakeSink();
    sink.gated = true;
    const writer = new GroupCommitWriter(sink, { ...config, maxBatchDelayMs: 0, maxQueueBytes: 20 }, observer);
    const accepted = writer.submit('spans', Buffer.from(row('0123456789')), 1);
    expect(writer.queuedBytes).to.equal(row('0123456789').length);
    expect(await writer.submit('spans', Buffer.from(row('x')), 1)).to.include({ ok: false, kind: 'overloaded' });
    sink.release();
    expect((await accepted).ok).to.equal(true);
    expect(writer.queuedBytes).to.equal(0);
    expect((await writer.submit('spans', Buffer.from(row('x')), 1)).ok).to.equal(true);
  });

  it('hands a failed insert to every request of the batch', async () => {
    const sink = new FakeSink();
    sink.result = { ok: false, kind: 'unavailable', message: 'down' };
    const writer = new GroupCommitWriter(sink, { ...config, maxBatchRows: 100 }, observer);
    const results = await Promise.all([writer.submit('spans', Buffer.from(row('a')), 1), writer.submit('spans', Buffer.from(row('b')), 1)]);
    expect(results).to.deep.equal([sink.result, sink.result]);
  });

  it('flushes pending rows on stop and refuses new ones after', async () => {
    const sink = new FakeSink();
    const writer = new GroupCommitWriter(sink, { ...config, maxBatchDelayMs: 60_000, maxBatchRows: 100 }, observer);
    const pending = writer.submit('metrics', Buffer.from(row('m')), 1);
    await writer.stop();
    expect((await pending).ok).to.equal(true);
    expect(sink.inserts).to.have.length(1);
    expect(await writer.submit('metrics', Buffer.from(row('n')), 1)).to.include({ ok: false, kind: 'stopped' });
  });
});
