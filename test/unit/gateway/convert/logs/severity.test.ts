import { expect } from 'chai';
import { severityNumber } from '../../../../../gateway/convert/logs/severity.ts';

describe('severity', () => {
  it('derives severity from text when the number is unset', () => {
    expect(severityNumber(17, 'whatever')).to.equal(17);
    expect([
      severityNumber(0, 'warning'),
      severityNumber(0, 'Error'),
      severityNumber(0, 'fatal'),
      severityNumber(0, 'debug'),
      severityNumber(0, 'info'),
      severityNumber(0, 'trace'),
    ]).to.deep.equal([13, 17, 21, 5, 9, 1]);
    expect(severityNumber(0, 'chatty')).to.equal(0);
    expect(severityNumber(undefined, undefined)).to.equal(0);
  });
});
