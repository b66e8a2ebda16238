// The schema migration Job (target migrate). Its name carries a hash of the
// image, the environment and, for a managed ClickHouse, the topology (shards,
// replicas, Keepers): a Job's pod template is immutable, so a new schema input
// means a new Job (the old one is pruned), a count change runs migrate again
// (it waits for every server and Keeper, creates the schema on servers that
// lack it and drops the Keeper entries of removed replicas; docs/operator.md,
// "Day two"), and an unchanged stack never re-runs it. A managed ClickHouse
// is migrated as the DDL user; the gateway and API use the application user.
import type { EnvVar, Job } from './manifest-types.ts';
import type { Stack } from '../stack/stack-spec.ts';
import { childNames } from './child-names.ts';
import { checksum } from './config-checksum.ts';
import { clickhouseUsers, secretKeys } from './credentials-secret.ts';
import { childLabels, childMeta } from './object-meta.ts';
import { migrationEnv } from './tenantry-workloads.ts';

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
    if (e.name === 'TENANTRY_CLICKHOUSE_PASSWORD') return { name: e.name, valueFrom: { secretKeyRef: { name: credentials, key: secretKeys.clickhouseDdlPassword } } };
    return e;
  });
}

export function migrationJob(stack: Stack): Job {
  const env = migrateJobEnv(stack);
  const topology = migrationTopology(stack);
  const hash = checksum({ image: stack.spec.image, env, ...(topology === undefined ? {} : { topology }) }).slice(0, 10);
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
          containers: [{
            name: 'migrate',
            image: stack.spec.image,
            imagePullPolicy: stack.spec.imagePullPolicy,
            args: ['migrate'],
            env,
            securityContext: { runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
          }],
        },
      },
    },
  };
}
