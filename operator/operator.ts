// The operator component (target `operator`): health, readiness and metrics
// on its port; leader election with a Lease; while leading, the controller
// (watches + per-key queue + reconcilers). Stopping releases the Lease.
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { Gauge } from 'prom-client';
import type { OperatorConfig } from '../src/config/config.ts';
import type { Logger } from '../src/log/logger.ts';
import { listen } from '../src/ops/ops-listener.ts';
import type { RunningComponent, StartOperator } from '../src/target/component.ts';
import { startController } from './controller.ts';
import type { RunningController } from './controller.ts';
import { KubeRest } from './kube/kube-rest.ts';
import { startLeaseElection } from './leader/lease-election.ts';
import type { RunningElection } from './leader/lease-election.ts';
import { HttpTenantDirectory } from './tenants/http-tenant-directory.ts';

const serviceAccountToken = '/var/run/secrets/kubernetes.io/serviceaccount/token';
export const leaseName = 'tenantry-operator';

/** A start-up failure with a sentence for the user (no cluster, bad kubeconfig). */
export class OperatorStartError extends Error {
  override readonly name = 'OperatorStartError';
}

function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path === undefined) {
    if (!existsSync(serviceAccountToken))
      throw new OperatorStartError(`not running in a Kubernetes pod (no ${serviceAccountToken}): set TENANTRY_KUBECONFIG to a kubeconfig file`);
    kc.loadFromCluster();
  } else {
    try {
      kc.loadFromFile(path);
    } catch (error) {
      throw new OperatorStartError(`TENANTRY_KUBECONFIG=${JSON.stringify(path)} cannot be read: ${(error as Error).message}`);
    }
  }
  if (kc.getCurrentCluster() === null) throw new OperatorStartError(`the kubeconfig${path === undefined ? '' : ` ${path}`} has no current cluster`);
  return kc;
}

/** Marks readiness once the API server answers; retried until stopped. */
function awaitApiServer(rest: KubeRest, log: Logger, onReachable: () => void): () => void {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const attempt = async (): Promise<void> => {
    const r = await rest.call<{ gitVersion?: string }>({ method: 'GET', path: '/version' });
    if (stopped) return;
    if (r.ok) {
      log.info('connected to the Kubernetes API server', { version: r.value.body.gitVersion });
      onReachable();
      return;
    }
    log.warn('Kubernetes API server not reachable yet', { error: r.error.message });
    timer = setTimeout(() => {
      void attempt();
    }, 2000);
  };
  void attempt();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

export const startOperator: StartOperator = async (ctx, config: OperatorConfig): Promise<RunningComponent> => {
  const log = ctx.log.child({ component: 'operator' });
  const rest = new KubeRest(loadKubeConfig(config.kubeconfig));
  const listener = await listen({ readiness: ctx.readiness, registry: ctx.registry, log, host: ctx.host, port: config.port });
  const stopProbe = awaitApiServer(rest, log, () => {
    ctx.readiness.done('kubernetes');
  });

  const leading = new Gauge({
    name: 'tenantry_operator_leader',
    help: '1 while this replica holds the leader Lease and runs the controller',
    registers: [ctx.registry],
  });
  let controller: RunningController | undefined;
  let transition: Promise<void> = Promise.resolve();
  const lead = (): void => {
    transition = transition.then(() => {
      leading.set(1);
      controller ??= startController({
        rest,
        log,
        registry: ctx.registry,
        namespaces: config.namespaces,
        directoryFor: (url, key) => new HttpTenantDirectory(url, key),
      });
    });
  };
  const follow = (): void => {
    transition = transition.then(async () => {
      leading.set(0);
      const c = controller;
      controller = undefined;
      await c?.stop();
    });
  };
  let election: RunningElection | undefined;
  if (config.leaderElection.enabled) {
    election = startLeaseElection({
      rest,
      log,
      namespace: config.leaderElection.namespace,
      name: leaseName,
      identity: `${hostname()}-${randomBytes(4).toString('hex')}`,
      leaseDurationSeconds: 15,
      retryPeriodMs: 2000,
      onStartedLeading: lead,
      onStoppedLeading: follow,
    });
  } else {
    lead();
  }

  return {
    name: 'operator',
    ports: { operator: listener.port },
    stop: async () => {
      stopProbe();
      await election?.stop();
      follow();
      await transition;
      await listener.close();
    },
  };
};
