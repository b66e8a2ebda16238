import { expect } from 'chai';
import { ChangedMetadata } from '../../../../gateway/prometheus/metadata-sink.ts';
import type { MetadataSink } from '../../../../gateway/prometheus/metadata-sink.ts';
import type { MetricMetadata } from '../../../../gateway/prometheus/write-request.ts';
import { fail, ok } from '../../../../src/result.ts';

/** A sink that records its writes and fails while `failing` is set. */
function recordingSink(): MetadataSink & { writes: [string, string[]][]; failing: boolean } {
  const sink = {
    writes: [] as [string, string[]][],
    failing: false,
    write(tenant: string, rows: readonly MetricMetadata[]) {
      if (sink.failing) return Promise.resolve(fail('down'));
      sink.writes.push([tenant, rows.map((r) => `${r.metricFamily}:${r.help}`)]);
      return Promise.resolve(ok(undefined));
    },
  };
  return sink;
}
const row = (metricFamily: string, help: string): MetricMetadata => ({ metricFamily, type: 'counter', help, unit: '' });

describe('remote write: metadata writes', () => {
  it('writes a family again only when it changed, per tenant; a failed write is retried next time', async () => {
    const sink = recordingSink();
    const changed = new ChangedMetadata(sink);
    expect((await changed.write('a', [row('x', 'one'), row('y', 'two'), row('', 'no family')])).ok).to.equal(true);
    expect((await changed.write('a', [row('x', 'one'), row('y', 'two')])).ok).to.equal(true);
    expect((await changed.write('b', [row('x', 'one')])).ok).to.equal(true);
    expect((await changed.write('a', [row('x', 'one'), row('y', 'three')])).ok).to.equal(true);
    sink.failing = true;
    expect(await changed.write('a', [row('z', 'four')])).to.deep.equal({ ok: false, error: 'down' });
    sink.failing = false;
    expect((await changed.write('a', [row('z', 'four')])).ok).to.equal(true);
    expect(sink.writes).to.deep.equal([
      ['a', ['x:one', 'y:two']],
      ['b', ['x:one']],
      ['a', ['y:three']],
      ['a', ['z:four']],
    ]);
  });
});
