// Protobuf field number 0 (and wire types 6 and 7) exist in no message: a
// body of zero bytes must be malformed for every protobuf converter, not an
// endless run of empty unknown fields read as an empty request.
import { expect } from 'chai';
import type { Principal } from '../../../../src/auth/api-keys.ts';
import { defaultItemLimits } from '../../../../gateway/convert/common/item-limits.ts';
import { TenantResolver } from '../../../../gateway/convert/common/tenant-resolver.ts';
import { rowConverters } from '../../../../gateway/convert/row-converters.ts';
import { remoteWriteConverter } from '../../../../gateway/prometheus/write-request.ts';
import { WireReader, readWire } from '../../../../gateway/protobuf/wire-reader.ts';
import { ExportTraceServiceRequest } from '../../../../gateway/wire/otlp-messages.ts';

const principal: Principal = { name: 'p', scopes: new Set(['ingest']), tenants: '*' };
const converters = rowConverters();

describe('protobuf wire reader: field number 0 and wire types 6, 7', () => {
  it('refuses a tag of field 0, naming it and where it is', () => {
    expect(readWire(() => new WireReader(Buffer.from([0x00, 0x00])).tag())).to.deep.equal({
      ok: false,
      error: 'invalid protobuf: field number 0 at byte 0 (protobuf field numbers start at 1)',
    });
    const read = readWire(() => {
      const r = new WireReader(Buffer.from([0x08, 0x01, 0x00, 0x00]));
      r.tag();
      r.uint32();
      return r.tag();
    });
    expect(read).to.deep.equal({ ok: false, error: 'invalid protobuf: field number 0 at byte 2 (protobuf field numbers start at 1)' });
  });

  it('refuses wire types 6 and 7', () => {
    for (const byte of [0x0e, 0x0f]) {
      const read = readWire(() => new WireReader(Buffer.from([byte, 0x00])).tag());
      expect(read).to.deep.equal({ ok: false, error: `invalid protobuf: wire type ${byte & 7} does not exist (field 1)` });
    }
  });

  for (const signal of ['traces', 'logs', 'metrics'] as const) {
    it(`${signal}: a body of zero bytes is invalid protobuf`, () => {
      for (const length of [1, 2, 1000]) {
        const result = converters[signal].protobuf.convert(Buffer.alloc(length), new TenantResolver(principal));
        expect(result.ok, `${length} zero bytes`).to.equal(false);
        if (!result.ok) expect(result.error).to.match(/^invalid protobuf: field number 0/);
      }
    });
  }

  it('traces: a field 0 (two zero bytes: a varint of 0) inside a valid span is invalid too', () => {
    const body = Buffer.from(
      ExportTraceServiceRequest.encode(ExportTraceServiceRequest.fromObject({ resourceSpans: [{ scopeSpans: [{ spans: [{ name: 's' }] }] }] })).finish(),
    );
    // The innermost message (the span, last) gets a trailing field 0; every length prefix grows by two.
    const grown = (at: number): number => (body[at] ?? 0) + 2;
    const patched = Buffer.from([0x0a, grown(1), 0x12, grown(3), 0x12, grown(5), ...body.subarray(6), 0x00, 0x00]);
    expect(converters.traces.protobuf.convert(body, new TenantResolver(principal)).ok).to.equal(true);
    const result = converters.traces.protobuf.convert(patched, new TenantResolver(principal));
    expect(result.ok).to.equal(false);
  });

  it('remote write: a body of zero bytes is invalid protobuf', () => {
    const result = remoteWriteConverter(defaultItemLimits)(Buffer.alloc(64), 't1', new TenantResolver(principal));
    expect(result.ok).to.equal(false);
    if (!result.ok) expect(result.error).to.match(/field number 0/);
  });

  it('an empty body is still an empty request', () => {
    const result = converters.traces.protobuf.convert(Buffer.alloc(0), new TenantResolver(principal));
    expect(result.ok && result.value.rowCount).to.equal(0);
  });
});
