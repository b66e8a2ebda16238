// The operator process without a usable API server: a bad kubeconfig stops it
// with a sentence; an unreachable server keeps it alive but not ready.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../../support/server-process.ts';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

describe('operator process start-up', function () {
  this.timeout(30_000);
  let dir = '';
  let running: TenantryProcess | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tenantry-operator-'));
  });
  afterEach(async () => {
    await running?.stop();
    running = undefined;
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('stops with a message naming TENANTRY_KUBECONFIG when the file cannot be read', async () => {
    running = startTenantry(['operator'], testEnvironment(dir, { TENANTRY_KUBECONFIG: join(dir, 'missing'), TENANTRY_OPERATOR_PORT: '0' }));
    expect(await running.exited).to.equal(1);
    expect(running.lines.map((l) => l['msg']).join('\n')).to.contain(`TENANTRY_KUBECONFIG="${join(dir, 'missing')}" cannot be read`);
  });

  it('stays alive but not ready while the API server is unreachable, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: x',
        'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:' + String(port) + '", insecure-skip-tls-verify: true } }]',
        'users: [{ name: u, user: { token: t } }]',
        'contexts: [{ name: x, context: { cluster: c, user: u } }]',
        '',
      ].join('\n'),
    );
    running = startTenantry(['operator'], testEnvironment(dir, { TENANTRY_KUBECONFIG: kubeconfig, TENANTRY_OPERATOR_PORT: '0' }));
    const ports = await running.started();
    const base = `http://127.0.0.1:${ports['operator'] ?? 0}`;
    expect((await fetch(`${base}/healthz`)).status).to.equal(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).to.equal(503);
    expect(await ready.text()).to.contain('waiting for kubernetes');
    await running.waitForLine((l) => l['msg'] === 'Kubernetes API server not reachable yet');
    expect(await running.stop()).to.equal(0);
  });
});
