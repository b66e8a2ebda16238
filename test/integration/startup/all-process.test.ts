import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text() };
}

describe('the all process (npm start)', function () {
  this.timeout(90_000);
  let dataDir: string;
  let running: TenantryProcess | undefined;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tenantry-start-'));
  });
  afterEach(async () => {
    await running?.stop('SIGKILL');
    running = undefined;
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('starts on an empty data dir, prints a generated admin key once, answers health on every port, and stops cleanly on SIGTERM', async () => {
    running = startTenantry(['all'], testEnvironment(dataDir));
    const ports = await running.started();
    expect(ports).to.have.all.keys('otlpHttp', 'otlpGrpc', 'api');
    const keyLines = running.lines.filter((l) => typeof l['apiKey'] === 'string');
    expect(keyLines).to.have.length(1);
    const key = keyLines[0]?.['apiKey'] as string;
    expect(key).to.match(/^tnt_[A-Za-z0-9_-]{43}$/);
    const stored = await readFile(join(dataDir, 'admin-key.json'), 'utf8');
    expect(stored).to.not.contain(key);
    expect((await stat(join(dataDir, 'admin-key.json'))).mode & 0o777).to.equal(0o600);
    for (const port of [ports['otlpHttp'], ports['api']]) {
      if (port === undefined) throw new Error('missing port');
      expect(await get(port, '/healthz')).to.deep.equal({ status: 200, body: 'ok\n' });
      expect(await get(port, '/readyz')).to.deep.equal({ status: 200, body: 'ready\n' });
      const metrics = await get(port, '/metrics');
      expect(metrics.status).to.equal(200);
      expect(metrics.body).to.contain('tenantry_process_cpu_seconds_total');
    }
    for (const line of running.lines) expect(line, 'every stdout line is a JSON log record').to.include.keys('time', 'level', 'msg');
    expect(await running.stop('SIGTERM')).to.equal(0);
    expect(running.lines.map((l) => l['msg'])).to.include.members(['shutting down', 'stopped']);
  });

  it('restarts on the same data dir without creating a new key or re-applying migrations', async () => {
    const before = await readFile(join(dataDir, 'admin-key.json'), 'utf8');
    running = startTenantry(['all'], testEnvironment(dataDir));
    await running.started();
    expect(running.lines.filter((l) => 'apiKey' in l)).to.deep.equal([]);
    expect(running.lines.map((l) => l['msg'])).to.not.include('schema migration applied');
    expect(await readFile(join(dataDir, 'admin-key.json'), 'utf8')).to.equal(before);
    expect(await running.stop('SIGTERM')).to.equal(0);
  });

  it('uses configured keys instead of generating one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tenantry-keys-'));
    running = startTenantry(['all'], testEnvironment(dir, { TENANTRY_API_KEYS: JSON.stringify([{ key: 'k'.repeat(20), scopes: ['read'], tenants: ['*'] }]) }));
    await running.started();
    expect(running.lines.filter((l) => 'apiKey' in l)).to.deep.equal([]);
    expect(
      await stat(join(dir, 'admin-key.json')).then(
        () => true,
        () => false,
      ),
    ).to.equal(false);
    await running.stop('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  });

  it('stops at once with a message naming a bad setting', async () => {
    running = startTenantry(['all', '--api-port=http'], testEnvironment(dataDir, { TENANTRY_LOG_LEVEL: 'loud' }));
    expect(await running.exited).to.equal(2);
    expect(running.stderr()).to.contain('TENANTRY_API_PORT="http" is invalid').and.contain('TENANTRY_LOG_LEVEL="loud" is invalid');
  });

  it('refuses to start a split target without keys, and says so', async () => {
    running = startTenantry(['gateway'], testEnvironment(dataDir, { TENANTRY_CLICKHOUSE_URL: 'http://127.0.0.1:1' }));
    expect(await running.exited).to.equal(1);
    expect(running.lines.map((l) => l['msg']).join('\n')).to.contain('needs API keys');
  });

  it('operator outside a cluster without a kubeconfig says what to set', async () => {
    running = startTenantry(['operator'], testEnvironment(dataDir));
    expect(await running.exited).to.equal(1);
    expect(running.lines.map((l) => l['msg']).join('\n')).to.contain('set TENANTRY_KUBECONFIG');
  });

  it('migrate applies the schema to a data dir and exits 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tenantry-migrate-'));
    running = startTenantry(['migrate'], testEnvironment(dir));
    expect(await running.exited).to.equal(0);
    expect(running.lines.map((l) => l['msg'])).to.include.members(['schema migration applied', 'schema is current']);
    await rm(dir, { recursive: true, force: true });
  });
});

describe('the all process with a damaged admin key file', function () {
  this.timeout(60_000);
  it('stops with a message saying what to do, not a stack trace', async () => {
    const { writeFile } = await import('node:fs/promises');
    const dir = await mkdtemp(join(tmpdir(), 'tenantry-damaged-'));
    await writeFile(join(dir, 'admin-key.json'), '{"sha256":"nope"}');
    const p = startTenantry(['all'], testEnvironment(dir));
    expect(await p.exited).to.equal(1);
    const messages = p.lines.map((l) => String(l['msg'])).join('\n');
    expect(messages).to.contain('is damaged: delete it to generate a new admin key');
    expect(messages).to.not.contain('unexpected failure');
    await rm(dir, { recursive: true, force: true });
  });
});
