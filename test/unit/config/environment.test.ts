import { expect } from 'chai';
import { collectSettings, flagToVariable, parseArgs } from '../../../src/config/environment.ts';

describe('settings from environment and flags', () => {
  it('maps a flag to its variable', () => {
    expect(flagToVariable('--otlp-http-port')).to.equal('TENANTRY_OTLP_HTTP_PORT');
  });

  it('parses positional words and both flag forms', () => {
    expect(parseArgs(['gateway', '--api-port=9090', '--log-level', 'debug'])).to.deep.equal({
      ok: true,
      value: { positional: ['gateway'], settings: { TENANTRY_API_PORT: '9090', TENANTRY_LOG_LEVEL: 'debug' } },
    });
  });

  it('rejects a flag without a value', () => {
    const parsed = parseArgs(['--api-port']);
    expect(parsed.ok).to.equal(false);
    expect(parsed).to.have.property('error').that.contains('--api-port needs a value');
  });

  it('keeps only TENANTRY_* variables and lets flags win', () => {
    const settings = collectSettings({ PATH: '/bin', TENANTRY_API_PORT: '1', TENANTRY_HOST: '127.0.0.1' }, { TENANTRY_API_PORT: '2' });
    expect(settings).to.deep.equal({ TENANTRY_API_PORT: '2', TENANTRY_HOST: '127.0.0.1' });
  });
});
