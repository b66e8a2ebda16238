// The testcontainers suites' acceptance flows (acceptance-flows.ts) run here
// too, against the real `all` process on embedded ClickHouse, so the flows
// themselves (exporters, routes, bodies, expectations) are proven on a
// machine without Docker: "restart" restarts the process, "a server killed
// mid-ingest" is the process killed with SIGKILL (what it acknowledged is in
// its write-ahead log), and migrate re-runs on the same data directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TenantryProcess } from '../../support/tenantry-process.ts';
import { startTenantry, testEnvironment } from '../../support/tenantry-process.ts';
import type { FlowTarget } from './acceptance-flows.ts';
import { acceptanceFlows } from './acceptance-flows.ts';
import { randomText } from './docker-stack.ts';
import { keysSecret, suiteKeys } from './stack-definitions.ts';

describe('container acceptance flows against the embedded all process (no Docker needed)', function () {
  this.timeout(300_000);
  const keys = suiteKeys(randomText);
  const keysFile = ((keysSecret(keys) as { stringData?: Record<string, string> }).stringData ?? {})['api-keys.json'] ?? '[]';
  let dataDir = '';
  let running: TenantryProcess | undefined;
  let ports: Record<string, number> = {};

  const env = (): Record<string, string> => testEnvironment(dataDir, { TENANTRY_API_KEYS: keysFile, TENANTRY_BATCH_MAX_DELAY_MS: '200' });
  const start = async (): Promise<void> => {
    running = startTenantry(['all'], env());
    ports = await running.started(120_000);
  };
  const port = (name: string): number => {
    const p = ports[name];
    if (p === undefined) throw new Error(`no ${name} port`);
    return p;
  };

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tenantry-flows-'));
    await start();
  });
  after(async () => {
    await running?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const target: FlowTarget = {
    keys,
    gatewayHttpUrl: () => `http://127.0.0.1:${port('otlpHttp')}`,
    gatewayGrpcUrl: () => `http://127.0.0.1:${port('otlpGrpc')}`,
    apiUrl: () => `http://127.0.0.1:${port('api')}`,
    restartAll: async () => {
      await running?.stop('SIGTERM');
      await start();
    },
    killOneServer: async () => {
      await running?.stop('SIGKILL');
      await start();
      return () => Promise.resolve();
    },
    rerunMigrate: async () => {
      await running?.stop('SIGTERM');
      const migrate = startTenantry(['migrate'], env());
      await migrate.exited;
      const log = migrate.lines.map((l) => JSON.stringify(l)).join('\n') + migrate.stderr();
      await start();
      return log;
    },
  };
  acceptanceFlows(() => target);
});
