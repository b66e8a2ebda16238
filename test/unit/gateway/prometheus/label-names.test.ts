// Remote write refuses label names Prometheus would not take: empty, not
// UTF-8, or holding a control character. The request is malformed (400,
// nothing stored); names Prometheus 3 accepts (UTF-8, dots) still pass.
import { expect } from 'chai';
import type { Principal } from '../../../../src/auth/api-keys.ts';
import { defaultItemLimits } from '../../../../gateway/convert/common/item-limits.ts';
import { TenantResolver } from '../../../../gateway/convert/common/tenant-resolver.ts';
import { labelNameProblem, remoteWriteConverter } from '../../../../gateway/prometheus/write-request.ts';
import { encodeWriteRequest } from '../../../../support/remote-write-request.ts';

const nowMs = Date.UTC(2026, 10, 24, 3, 0, 0);
const principal: Principal = { name: 'p', scopes: new Set(['ingest']), tenants: new Set(['t1']) };
const convert = remoteWriteConverter(defaultItemLimits, () => nowMs);
const request = (labels: Record<string, string>): Buffer =>
  encodeWriteRequest([{ labels: { __name__: 'up', ...labels }, samples: [{ value: 1, timestampMs: nowMs - 1000 }] }]);
const outcome = (body: Buffer): string => {
  const result = convert(body, 't1', new TenantResolver(principal));
  return result.ok ? `stored ${result.value.batch.rowCount}` : result.error;
};

describe('remote write: label names', () => {
  it('refuses an empty label name', () => {
    expect(outcome(request({ '': 'v' }))).to.equal('invalid protobuf: a label name is empty');
  });

  it('refuses a label name with a control character (C0, DEL, C1)', () => {
    for (const name of ['a\nb', 'tab\t', '\u0000', 'del\u007f', 'c1\u0085']) {
      expect(outcome(request({ [name]: 'v' })), JSON.stringify(name)).to.equal(
        `invalid protobuf: label name ${JSON.stringify(name)} contains a control character`,
      );
    }
  });

  it('refuses a label name that is not UTF-8', () => {
    const bytes = Buffer.from([0x61, 0xff, 0x62]);
    expect(labelNameProblem(bytes, 0, 3)).to.match(/is not valid UTF-8$/);
  });

  it('takes the names Prometheus 3 takes: legacy, dotted, any UTF-8 letter', () => {
    expect(outcome(request({ code: '200', 'http.method': 'GET', ñandú_é: 'x', ünïcode: 'y' }))).to.equal('stored 1');
  });
});
