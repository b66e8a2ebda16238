// The shutdown handshake every long-running target shares: wait for SIGTERM
// or SIGINT, then let a second signal mean "exit now, without draining".
import { Registry, collectDefaultMetrics } from 'prom-client';
import type { Logger } from '../log/logger.ts';

/**
 * Resolves with the first stop signal; from then on a second one exits at
 * once. The handlers are installed when it is called, before it returns.
 */
export async function waitForStopSignal(log: Logger): Promise<NodeJS.Signals> {
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => {
      resolve('SIGTERM');
    });
    process.once('SIGINT', () => {
      resolve('SIGINT');
    });
  });
  log.info('shutting down', { signal });
  const force = (): void => {
    log.warn('second signal: exiting without draining');
    process.exit(1);
  };
  process.once('SIGTERM', force);
  process.once('SIGINT', force);
  return signal;
}

/** The process's Prometheus registry, with Node's default metrics under tenantry_. */
export function processRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'tenantry_' });
  return registry;
}
