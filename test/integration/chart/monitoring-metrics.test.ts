// The metric names the chart's alerts and dashboards are checked against
// (test/chart/exported-metrics.ts reads them from the code's registrations)
// are the ones a running process really serves: the real `all` process
// (gateway and API on one registry) is scraped and every gateway, API,
// listener and process metric found in the code must be on its /metrics,
// with the same type. The operator's are scraped in
// test/integration/operator/production-options.test.ts and stack-reconcile.test.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { processMetrics, registeredMetrics } from '../../chart/exported-metrics.ts';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const root = join(import.meta.dirname, '..', '..', '..');

describe('metric names read from the code against a running process', function () {
  this.timeout(90_000);
  let dataDir: string | undefined;
  let running: TenantryProcess | undefined;

  after(async () => {
    await running?.stop('SIGKILL');
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('every gateway, API, listener and process metric the code registers is served on /metrics with its type', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tenantry-metrics-'));
    running = startTenantry(['all'], testEnvironment(dataDir));
    const ports = await running.started();
    const served = new Map<string, string>();
    for (const port of [ports['otlpHttp'], ports['api']]) {
      const text = await (await fetch(`http://127.0.0.1:${String(port)}/metrics`)).text();
      for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) served.set(m[1] ?? '', m[2] ?? '');
    }
    const expected = new Map([...registeredMetrics(root)].filter(([name]) => !name.startsWith('tenantry_operator_')));
    for (const [name, type] of await processMetrics()) expected.set(name, type);
    expect(expected.size).to.be.greaterThan(30);
    const missing = [...expected]
      .filter(([name, type]) => served.get(name) !== type)
      .map(([name, type]) => `${name} (${type}, served: ${served.get(name) ?? 'absent'})`);
    expect(missing).to.deep.equal([]);
  });
});
