import { expect } from 'chai';
import { compressSync } from 'snappy';
import { decompressSnappy, snappyLength } from '../../../../gateway/prometheus/snappy-body.ts';
import { contentTypeProblem } from '../../../../gateway/prometheus/remote-write-receiver.ts';

describe('remote write: snappy bodies and content types', () => {
  it('reads the uncompressed length from the block header before decompressing', () => {
    const data = Buffer.alloc(300_000, 7);
    const block = compressSync(data);
    expect(snappyLength(block)).to.equal(300_000);
    expect(snappyLength(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff]))).to.equal(undefined);
    expect(snappyLength(Buffer.alloc(0))).to.equal(undefined);
  });

  it('decompresses within the limit, refuses a declared length over it (413) and corrupt blocks (400)', () => {
    const data = Buffer.alloc(300_000, 7);
    const block = compressSync(data);
    const ok = decompressSnappy(block, 300_000);
    expect(ok.ok && ok.value.equals(data)).to.equal(true);
    expect(decompressSnappy(block, 299_999)).to.deep.equal({
      ok: false,
      error: { kind: 'too_large', message: 'the decompressed body (300000 bytes) exceeds the limit of 299999 bytes' },
    });
    // A header that promises 1 GiB in a few bytes is refused by the header alone.
    expect(decompressSnappy(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x04, 0x00]), 4 << 20)).to.have.nested.property('error.kind', 'too_large');
    const corrupt = Buffer.from(block);
    corrupt.fill(0xfe, 3, 40);
    expect(decompressSnappy(corrupt, 1 << 20)).to.have.nested.property('error.kind', 'invalid');
    expect(decompressSnappy(Buffer.from('not snappy at all, just text'), 1 << 20)).to.have.nested.property('error.kind', 'invalid');
  });

  it('accepts remote write 1.0 content types only', () => {
    expect(contentTypeProblem('application/x-protobuf')).to.equal(undefined);
    expect(contentTypeProblem('application/x-protobuf;proto=prometheus.WriteRequest')).to.equal(undefined);
    expect(contentTypeProblem('application/x-protobuf;proto=io.prometheus.write.v2.Request')).to.contain('unsupported remote write message');
    expect(contentTypeProblem('application/json')).to.contain('unsupported Content-Type');
    expect(contentTypeProblem(undefined)).to.contain('unsupported Content-Type');
  });
});
