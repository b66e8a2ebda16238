#!/usr/bin/env -S node --initial-heap-size=128
// tenantry <target> [--flag=value …]: the composition root. It decodes the
// configuration once, then hands the deployables their start functions. It
// loads them by dynamic import so that nothing else in src/ depends on them.
import { decodeConfig, targets } from './config/config.ts';
import type { Config } from './config/config.ts';
import { collectSettings, parseArgs, processEnvironment } from './config/environment.ts';
import { allVariables } from './config/variables.ts';
import { migrate } from './clickhouse/schema/migrator.ts';
import { openStore } from './clickhouse/store.ts';
import { createLogger } from './log/logger.ts';
import type { Logger } from './log/logger.ts';
import type { OpenApi, OpenGateway, RunDrain, StartOperator } from './target/component.ts';
import { Readiness } from './ops/readiness.ts';
import { runServer } from './target/server-process.ts';
import { processRegistry, waitForStopSignal } from './target/stop-signal.ts';
import type { ComponentStarter } from './target/server-process.ts';

const usage = `usage: tenantry <target> [--setting=value …]

targets: ${targets.join(', ')} (default: all)
settings: every TENANTRY_* variable, also as a flag (--api-port=9090 for TENANTRY_API_PORT)

${Object.entries(allVariables)
  .map(([name, v]) => `  ${name.padEnd(34)} ${v.doc}${v.default === undefined ? '' : ` (default ${v.default})`}`)
  .join('\n')}
`;

async function gatewayStarter(config: Extract<Config, { gateway: unknown }>): Promise<ComponentStarter> {
  const { openGateway } = (await import('../gateway/gateway.ts')) as { openGateway: OpenGateway };
  return (ctx) => openGateway(ctx, config.gateway);
}

async function apiStarter(config: Extract<Config, { api: unknown }>): Promise<ComponentStarter> {
  const { openApi } = (await import('../api/api.ts')) as { openApi: OpenApi };
  return (ctx) => openApi(ctx, config.api);
}

async function runMigrate(config: Extract<Config, { target: 'migrate' }>, log: Logger): Promise<number> {
  const opened = await openStore(config.storage.clickhouse);
  if (!opened.ok) {
    log.error(opened.error);
    return 1;
  }
  const result = await migrate(opened.value, config.storage.retention, log);
  await opened.value.close();
  if (!result.ok) {
    log.error(result.error.message);
    return 1;
  }
  log.info('schema is current', { database: opened.value.database, applied: result.value.applied, retentionChanged: result.value.retentionChanged });
  return 0;
}

/** Runs the operator until SIGTERM/SIGINT: health on its port, leader election, reconcilers. */
async function runOperator(config: Extract<Config, { target: 'operator' }>, log: Logger): Promise<number> {
  const { startOperator } = (await import('../operator/operator.ts')) as { startOperator: StartOperator };
  const readiness = new Readiness(['kubernetes']);
  const registry = processRegistry();
  let running;
  try {
    running = await startOperator({ host: config.host, log, readiness, registry }, config.operator);
  } catch (error) {
    log.error(`cannot start: ${(error as Error).message}`);
    return 1;
  }
  // Listen for the stop signal before saying "started": whoever waits for that line may signal at once.
  const stopSignal = waitForStopSignal(log);
  log.info('tenantry started', { target: 'operator', ports: running.ports });
  await stopSignal;
  readiness.beginShutdown();
  await running.stop();
  log.info('stopped');
  return 0;
}

/** Runs the drain Job's work (docs/adr/0007-gateway-wal-volumes.md) and exits. */
async function runDrain(config: Extract<Config, { target: 'drain' }>, log: Logger): Promise<number> {
  const { runDrain: drain } = (await import('../gateway/drain/drain-target.ts')) as { runDrain: RunDrain };
  return drain(config, log);
}

async function run(config: Config, log: Logger): Promise<number> {
  switch (config.target) {
    case 'all':
      return runServer(config, [await gatewayStarter(config), await apiStarter(config)], log);
    case 'gateway':
      return runServer(config, [await gatewayStarter(config)], log);
    case 'api':
      return runServer(config, [await apiStarter(config)], log);
    case 'migrate':
      return runMigrate(config, log);
    case 'operator':
      return runOperator(config, log);
    case 'drain':
      return runDrain(config, log);
  }
}

async function main(argv: readonly string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') {
    process.stdout.write(usage);
    return 0;
  }
  const args = parseArgs(argv);
  if (!args.ok) {
    process.stderr.write(`tenantry: ${args.error}\n`);
    return 2;
  }
  if (args.value.positional.length > 1) {
    process.stderr.write(`tenantry: one target expected, got ${args.value.positional.join(' ')}\n${usage}`);
    return 2;
  }
  const decoded = decodeConfig(args.value.positional[0] ?? 'all', collectSettings(processEnvironment(), args.value.settings));
  if (!decoded.ok) {
    process.stderr.write(`tenantry: invalid configuration:\n${decoded.error.map((e) => `  - ${e}`).join('\n')}\n`);
    return 2;
  }
  const log = createLogger(decoded.value.logLevel, { target: decoded.value.target });
  try {
    return await run(decoded.value, log);
  } catch (error) {
    // Only bugs reach here: expected failures are returned as values above.
    log.error('unexpected failure', { error, stack: (error as Error).stack });
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
