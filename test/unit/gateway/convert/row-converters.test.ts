// The contract between the two wire formats: for random OTLP requests
// (every AnyValue type, nested values, odd enums and timestamps, events,
// links, all five metric types, tenant rules), the protobuf converter and
// the OTLP/JSON converter of each signal write the same RowBinary bytes and
// the same rejections.
import { expect } from 'chai';
import fc from 'fast-check';
import { LogIdGenerator } from '../../../../gateway/convert/logs/log-id.ts';
import type { RowConverter } from '../../../../gateway/convert/common/row-converter.ts';
import { rowConverters } from '../../../../gateway/convert/row-converters.ts';
import { TenantResolver } from '../../../../gateway/convert/common/tenant-resolver.ts';
import type { RowBatch } from '../../../../gateway/rowbinary/row-batch.ts';
import { encoders, nouns, otlpJson, principal, requests } from '../support/otlp-arbitraries.ts';
import { readRows, rowDifference } from '../support/row-binary-reader.ts';

/** A fresh table per conversion, so that both formats draw the same log ids at the same clock. */
const converters = (): ReturnType<typeof rowConverters> => rowConverters(new LogIdGenerator('0000000000'), () => 1_700_000_000_000);

function converted(converter: RowConverter, body: Buffer): RowBatch {
  const result = converter.convert(body, new TenantResolver(principal));
  if (!result.ok) expect.fail(result.error);
  return result.value;
}

describe('row converters', () => {
  for (const signal of ['traces', 'logs', 'metrics'] as const) {
    it(`write the same ${signal} rows and rejections from protobuf and from OTLP/JSON`, () => {
      fc.assert(
        fc.property(requests[signal], (request) => {
          const fromProtobuf = converted(converters()[signal].protobuf, Buffer.from(encoders[signal](request)));
          const fromJson = converted(converters()[signal].json, Buffer.from(otlpJson(request)));
          expect(fromProtobuf.table).to.equal(fromJson.table);
          expect(fromProtobuf.rowCount).to.equal(fromJson.rowCount);
          expect(fromProtobuf.rejected.message(nouns[signal])).to.equal(fromJson.rejected.message(nouns[signal]));
          expect(fromProtobuf.rows.equals(fromJson.rows), rowDifference(fromJson.table, fromJson.rows, fromProtobuf.rows)).to.equal(true);
        }),
        { numRuns: 300 },
      );
    });
  }

  it('never throw on mutated protobuf, and write decodable rows for whatever they accept', () => {
    const mutated = fc
      .tuple(fc.constantFrom('traces', 'logs', 'metrics'), fc.nat(), fc.integer({ min: 0, max: 255 }), fc.nat(), fc.nat())
      .chain(([signal, at, value, cut, drop]) => requests[signal].map((request) => ({ signal, request, at, value, cut, drop })));
    fc.assert(
      fc.property(mutated, ({ signal, request, at, value, cut, drop }) => {
        const body = Buffer.from(encoders[signal](request));
        if (body.length === 0) return;
        body[at % body.length] = value;
        const cutAt = cut % (body.length + 1);
        const changed = Buffer.concat([body.subarray(0, cutAt), body.subarray(Math.min(body.length, cutAt + (drop % 4)))]);
        const result = converters()[signal].protobuf.convert(changed, new TenantResolver(principal));
        if (result.ok) expect(readRows(result.value.table, result.value.rows)).to.have.length(result.value.rowCount);
        else expect(result.error).to.match(/^invalid protobuf: /);
      }),
      { numRuns: 500 },
    );
  });

  it('report malformed protobuf and invalid JSON as a reason, for every signal', () => {
    for (const signal of ['traces', 'logs', 'metrics'] as const) {
      const protobuf = converters()[signal].protobuf.convert(Buffer.from([0x0a, 0x05, 0x01]), new TenantResolver(principal));
      expect(protobuf).to.deep.include({ ok: false });
      expect(protobuf.ok ? '' : protobuf.error).to.match(/^invalid protobuf: /);
      const json = converters()[signal].json.convert(Buffer.from('{"resourceSpans": ['), new TenantResolver(principal));
      expect(json.ok ? '' : json.error).to.match(/^invalid OTLP\/JSON: /);
    }
  });
});
