// The schema migration Job (target migrate). Its name carries a hash of the
// image, the environment and, for a managed ClickHouse, the topology (shards,
// replicas, Keepers): a Job's pod template is immutable, so a new schema input
// means a new Job (the old one is pruned), a count change runs migrate again
// (it waits for every server and Keeper, creates the schema on servers that
// lack it and drops the Keeper entries of removed replicas; docs/operator.md,
// "Day two"), and an unchanged stack never re-runs it. A managed ClickHouse
// is migrated as the DDL user; the gateway and API use the application user.
// On a managed cluster an init container first waits until every server runs
// the new topology's configuration: the Job starts while the servers are still
// rolling onto it, and a server with the old remote_servers would show migrate
// (and its ON CLUSTER statements) the old host list, leaving new hosts empty.
import type { Container, EnvVar, Job } from './manifest-types.ts';
import type { ManagedClickHouse, Stack } from '../stack/stack-spec.ts';
import { isClustered } from '../stack/stack-spec.ts';
import { childNames } from './child-names.ts';
import { checksum } from './config-checksum.ts';
import { clickhouseUsers, secretKeys } from './credentials-secret.ts';
import { clickhouseHosts } from './managed-clickhouse.ts';
import { childLabels, childMeta } from './object-meta.ts';
import { clusterName, migrationEnv } from './tenantry-workloads.ts';

/** The topology a migrate run converges the schema to; undefined for an external ClickHouse. */
export function migrationTopology(stack: Stack): { shards: number; replicas: number; keepers: number } | undefined {
  const ch = stack.spec.clickhouse;
  return ch.mode === 'managed' ? { shards: ch.managed.shards, replicas: ch.managed.replicas, keepers: ch.managed.keeper.replicas } : undefined;
}

/** migrationEnv with the DDL user's credentials for a managed ClickHouse. */
export function migrateJobEnv(stack: Stack): EnvVar[] {
  const env = migrationEnv(stack);
  if (stack.spec.clickhouse.mode !== 'managed') return env;
  const credentials = childNames(stack.ref.name).credentials;
  return env.map((e) => {
    if (e.name === 'TENANTRY_CLICKHOUSE_USER') return { name: e.name, value: clickhouseUsers.ddl };
    if (e.name === 'TENANTRY_CLICKHOUSE_PASSWORD')
      return { name: e.name, valueFrom: { secretKeyRef: { name: credentials, key: secretKeys.clickhouseDdlPassword } } };
    return e;
  });
}

/** How long the init container waits for every server to run the topology's configuration before the pod fails (the Job retries, then the operator recreates it). */
export const configWaitSeconds = 900;

/**
 * Waits, host by host, until the server answers and its system.clusters lists
 * exactly the topology's servers (a server still on the old configuration
 * lists the old count). The cluster name is a bound parameter; `$(date …)` is
 * no Kubernetes variable reference, so it reaches the shell unchanged.
 */
const configWaitScript = [
  'deadline=$(( $(date +%s) + CONFIG_WAIT_SECONDS ))',
  'for host in $CLUSTER_HOSTS; do',
  '  until n=$(clickhouse client --host "$host" --user "$CLICKHOUSE_USER" --password "$CLICKHOUSE_PASSWORD" --param_c="$CLUSTER_NAME" --query "SELECT count() FROM system.clusters WHERE cluster = {c:String}" 2>&1) && [ "$n" = "$EXPECTED_HOSTS" ]; do',
  '    if [ "$(date +%s)" -ge "$deadline" ]; then echo "$host does not run the configuration of $EXPECTED_HOSTS servers after CONFIG_WAIT_SECONDS s: $n" >&2; exit 1; fi',
  '    sleep 5',
  '  done',
  '  echo "$host runs the configuration of $EXPECTED_HOSTS servers"',
  'done',
]
  .join('\n')
  .replaceAll('CONFIG_WAIT_SECONDS', String(configWaitSeconds));

/** The init container of a managed cluster's migrate Job: every current server on the new topology's configuration (ClickHouse's own client, as the DDL user). */
export function configWaitContainer(stack: Stack, m: ManagedClickHouse): Container {
  const hosts = clickhouseHosts(stack, m).flat();
  return {
    name: 'wait-for-cluster-config',
    image: m.image,
    command: ['/bin/sh', '-c', configWaitScript],
    env: [
      { name: 'CLUSTER_HOSTS', value: hosts.join(' ') },
      { name: 'EXPECTED_HOSTS', value: String(hosts.length) },
      { name: 'CLUSTER_NAME', value: clusterName },
      { name: 'CLICKHOUSE_USER', value: clickhouseUsers.ddl },
      { name: 'CLICKHOUSE_PASSWORD', valueFrom: { secretKeyRef: { name: childNames(stack.ref.name).credentials, key: secretKeys.clickhouseDdlPassword } } },
      { name: 'HOME', value: '/tmp' },
    ],
    volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
    securityContext: {
      runAsNonRoot: true,
      runAsUser: 101,
      runAsGroup: 101,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    },
  };
}

export function migrationJob(stack: Stack): Job {
  const env = migrateJobEnv(stack);
  const topology = migrationTopology(stack);
  const ch = stack.spec.clickhouse;
  const wait = ch.mode === 'managed' && isClustered(ch.managed) ? configWaitContainer(stack, ch.managed) : undefined;
  // The init container is in the hash: a Job's pod template cannot change under the same name.
  const hash = checksum({ image: stack.spec.image, env, ...(topology === undefined ? {} : { topology }), ...(wait === undefined ? {} : { wait }) }).slice(
    0,
    10,
  );
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: childMeta(stack.ref, childNames(stack.ref.name).migrate(hash), 'migrate'),
    spec: {
      backoffLimit: 10,
      template: {
        metadata: { labels: childLabels(stack.ref, 'migrate') },
        spec: {
          restartPolicy: 'OnFailure',
          ...(wait === undefined ? {} : { initContainers: [wait], volumes: [{ name: 'tmp', emptyDir: {} }] }),
          containers: [
            {
              name: 'migrate',
              image: stack.spec.image,
              imagePullPolicy: stack.spec.imagePullPolicy,
              args: ['migrate'],
              env,
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 1000,
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
            },
          ],
        },
      },
    },
  };
}
