// The stacks the testcontainers suites run, as ObservabilityStack objects the
// operator's own desired-state functions render, and their containers
// (pod-containers.ts): (1) a stack on an external ClickHouse server (the
// official image) and (2) a managed, replicated cluster, shards × replicas
// with 3 Keepers. Pure: unit-tested without Docker in test/unit/containers/.
import { desiredObjects } from '../../operator/desired/desired-state.ts';
import type { GeneratedCredentials } from '../../operator/desired/credentials-secret.ts';
import type { Manifest } from '../../operator/desired/manifest-types.ts';
import type { Stack } from '../../operator/stack/stack-spec.ts';
import { stackFromObject } from '../../operator/stack/stack-spec.ts';
import type { ContainerDefinition } from './pod-containers.ts';
import { containersOf } from './pod-containers.ts';

/** The ClickHouse image of suite (1): the official image, pinned (the operator's default managed image is the same line). */
export const clickhouseServerImage = 'clickhouse/clickhouse-server:25.8';

export const stackName = 'tt';
export const namespace = 'containers';
export const keysSecretName = 'tt-api-keys';
export const externalSecretName = 'tt-clickhouse';

/** The API keys the suites use: an admin key, an ingest key, and a read key bound to each of two tenants. */
export interface SuiteKeys {
  readonly admin: string;
  readonly ingest: string;
  readonly readA: string;
  readonly readB: string;
}

/** Fresh keys (at least 16 characters each). */
export function suiteKeys(random: () => string): SuiteKeys {
  return { admin: `admin-${random()}`, ingest: `ingest-${random()}`, readA: `read-a-${random()}`, readB: `read-b-${random()}` };
}

/** The user Secret holding the key file (TENANTRY_API_KEYS_FILE format) and the admin key, as `apiKeys.secretName` names it. */
export function keysSecret(keys: SuiteKeys): Manifest {
  const file = [
    { name: 'admin', key: keys.admin, scopes: ['ingest', 'read', 'admin'], tenants: ['*'] },
    { name: 'ingest', key: keys.ingest, scopes: ['ingest'], tenants: ['*'] },
    { name: 'read-a', key: keys.readA, scopes: ['read'], tenants: ['tenant-a'] },
    { name: 'read-b', key: keys.readB, scopes: ['read'], tenants: ['tenant-b'] },
  ];
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: keysSecretName, namespace },
    stringData: { 'api-keys.json': JSON.stringify(file), 'admin-key': keys.admin },
  } as Manifest;
}

/** The user Secret with an external ClickHouse's user and password. */
export function externalSecret(user: string, password: string): Manifest {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name: externalSecretName, namespace }, stringData: { username: user, password } } as Manifest;
}

const common = {
  gateway: { replicas: 1 },
  api: { replicas: 1 },
  apiKeys: { secretName: keysSecretName },
  tenantSync: { enabled: false },
};

/** Suite (1): a stack on an external ClickHouse at `url` (no cluster). */
export function serverStack(url: string): Stack {
  return stackFromObject({
    metadata: { name: stackName, namespace, uid: 'containers-server', generation: 1 },
    spec: { ...common, clickhouse: { mode: 'external', external: { url, secretRef: { name: externalSecretName } } } },
  });
}

/** Suite (2): a managed ClickHouse cluster of `shards` × `replicas` servers and 3 Keepers. */
export function clusterStack(shards: number, replicas: number): Stack {
  return stackFromObject({
    metadata: { name: stackName, namespace, uid: 'containers-cluster', generation: 1 },
    spec: {
      ...common,
      clickhouse: {
        mode: 'managed',
        managed: {
          shards,
          replicas,
          image: clickhouseServerImage,
          resources: { requests: { cpu: '250m', memory: '1Gi' } },
          keeper: { replicas: 3 },
        },
      },
    },
  });
}

/** Every container of `stack` as the operator renders it, the Tenantry image replaced by `tenantryImage`. */
export function stackContainers(
  stack: Stack,
  credentials: GeneratedCredentials,
  userSecrets: readonly Manifest[],
  tenantryImage: string,
): ContainerDefinition[] {
  const objects = [...userSecrets, ...desiredObjects(stack, { credentials, referencedSecretsChecksum: '' })];
  return containersOf(objects, { images: { [stack.spec.image]: tenantryImage } });
}

/** The containers of one component (`clickhouse`, `clickhouse-keeper`, `migrate`, `gateway`, `api`). */
export function ofComponent(containers: readonly ContainerDefinition[], component: string): ContainerDefinition[] {
  return containers.filter((c) => c.component === component);
}
