// An operator process (the real CLI, target operator) against a test API
// server, plus small kubectl helpers for the integration suites.
import { expect } from 'chai';
import { startTenantry, testEnvironment } from '../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../support/tenantry-process.ts';
import type { KubeTestServer } from './kube-test-server.ts';

export interface KubeItem {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    generation?: number;
    labels?: Record<string, string>;
    ownerReferences?: Array<{ kind: string; name: string; uid: string; controller?: boolean }>;
    managedFields?: Array<{ manager: string; operation: string }>;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  data?: Record<string, string>;
}

/** Starts `tenantry operator` with the server's kubeconfig; resolves when it logged "tenantry started". */
export async function startOperatorProcess(server: KubeTestServer, extra: Record<string, string> = {}): Promise<{ process: TenantryProcess; port: number }> {
  const process = startTenantry(
    ['operator'],
    testEnvironment(server.dir, {
      TENANTRY_KUBECONFIG: server.kubeconfigPath,
      TENANTRY_OPERATOR_PORT: '0',
      TENANTRY_LEADER_ELECTION_NAMESPACE: 'kube-system',
      ...extra,
    }),
  );
  const ports = await process.started();
  return { process, port: ports['operator'] ?? 0 };
}

export async function getJson<T = KubeItem>(server: KubeTestServer, args: readonly string[]): Promise<T> {
  return JSON.parse(await server.kubectl(['get', ...args, '-o', 'json', '--show-managed-fields'])) as T;
}

export async function tryGet(server: KubeTestServer, args: readonly string[]): Promise<KubeItem | undefined> {
  try {
    return await getJson(server, args);
  } catch (error) {
    if ((error as Error).message.includes('NotFound')) return undefined;
    throw error;
  }
}

/**
 * Polls `check` until it returns without throwing, or rethrows its last failure after `timeoutMs`.
 * For outcomes of the operator, another process: they show only as API state, and a check
 * often combines several objects (or the tenants API) that no single watch reports. Where one
 * object's field is the event, use `kubectlUntil` or `kubectl wait` instead.
 */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 20_000, stepMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, stepMs));
    }
  }
}

export async function createNamespace(server: KubeTestServer, name: string): Promise<void> {
  await server.kubectl(['create', 'namespace', name]);
  expect(await server.kubectl(['get', 'namespace', name, '-o', 'name'])).to.contain(name);
}
