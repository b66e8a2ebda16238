// A ClickHouse the operator runs: one StatefulSet per shard (its replicas are
// the shard's replicas), a headless Service for stable pod DNS, a client
// Service, a config (macros, remote servers, Keeper, users), and, when there
// is more than one server, a ClickHouse Keeper ensemble. docs/operator.md,
// "Day two", explains each day-two choice: memory limit = request, Keeper
// readiness on /ready, anti-affinity and zone spread, dual-stack listen
// hosts, the cluster secret, interserver and Keeper credentials, the
// least-privilege users, foreground distributed inserts, the pod name from
// the downward API.
import type { ConfigMap, EnvVar, PersistentVolumeClaim, Service, StatefulSet } from './manifest-types.ts';
import type { ManagedClickHouse, Resources, Stack, StorageSpec } from '../stack/stack-spec.ts';
import { isClustered } from '../stack/stack-spec.ts';
import { childNames } from './child-names.ts';
import { checksum } from './config-checksum.ts';
import { clickhouseUsers, secretKeys } from './credentials-secret.ts';
import { checksumAnnotation, childLabels, childMeta, selectorLabels } from './object-meta.ts';
import { clickhouseHttpPort, clusterName } from './tenantry-workloads.ts';

const nativePort = 9000;
const interserverPort = 9009;
const keeperClientPort = 9181;
const keeperRaftPort = 9234;
const keeperHttpControlPort = 9182;

/** Both address families: `::` alone fails where IPv6 is off, `0.0.0.0` alone where only IPv6 is on; listen_try skips the one that fails. */
const listenHosts = ['  <listen_host>::</listen_host>', '  <listen_host>0.0.0.0</listen_host>', '  <listen_try>1</listen_try>'];

/**
 * Resources with the memory limit defaulting to the request. ClickHouse sizes
 * max_server_memory_usage and its caches from the cgroup limit, or without one
 * from the node's RAM, which the kubelet then evicts or the kernel OOM-kills.
 */
export function withMemoryLimit(r: Resources): Resources {
  const request = r.requests?.['memory'];
  if (request === undefined || r.limits?.['memory'] !== undefined) return r;
  return { ...r, limits: { ...(r.limits ?? {}), memory: request } };
}

const units: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50 };

/** Bytes of a Kubernetes memory quantity (plain, decimal or binary suffix), or undefined for one it cannot read. */
export function quantityBytes(q: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(k|M|G|T|P|Ki|Mi|Gi|Ti|Pi)?$/.exec(q);
  if (m === null) return undefined;
  return Math.floor(Number(m[1]) * (units[m[2] ?? ''] ?? 1));
}

/** Memory settings for a server whose container limit is `limit`: headroom for the kernel and allocator, caches an eighth each. */
function memoryXml(limit: string | undefined): string[] {
  const bytes = limit === undefined ? undefined : quantityBytes(limit);
  return [
    '  <max_server_memory_usage_to_ram_ratio>0.8</max_server_memory_usage_to_ram_ratio>',
    '  <cache_size_to_ram_max_ratio>0.25</cache_size_to_ram_max_ratio>',
    ...(bytes === undefined
      ? []
      : [
          `  <mark_cache_size>${Math.floor(bytes / 8)}</mark_cache_size>`,
          `  <index_mark_cache_size>${Math.floor(bytes / 16)}</index_mark_cache_size>`,
          `  <uncompressed_cache_size>${Math.floor(bytes / 16)}</uncompressed_cache_size>`,
        ]),
  ];
}

function claim(name: string, storage: StorageSpec): PersistentVolumeClaim {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: storage.size } },
      ...(storage.storageClassName === undefined ? {} : { storageClassName: storage.storageClassName }),
    },
  };
}

/** Fully qualified pod DNS names of every server, by shard. */
export function clickhouseHosts(stack: Stack, m: ManagedClickHouse): string[][] {
  const n = childNames(stack.ref.name);
  return Array.from({ length: m.shards }, (_, s) =>
    Array.from({ length: m.replicas }, (_, r) => `${n.clickhouseShard(s)}-${r}.${n.clickhouseHeadless}.${stack.ref.namespace}.svc`),
  );
}

export function keeperHosts(stack: Stack, m: ManagedClickHouse): string[] {
  const n = childNames(stack.ref.name);
  return Array.from({ length: m.keeper.replicas }, (_, i) => `${n.keeper}-${i}.${n.keeper}.${stack.ref.namespace}.svc`);
}

/**
 * config.d/tenantry.xml: both address families, memory sized from the
 * container limit; for a cluster, macros from the pod's env (its name from
 * the downward API), remote servers authenticated by the cluster secret
 * (servers pass the initial user on, no password in the config), Keeper with
 * a digest identity, and interserver HTTP credentials for replica fetches.
 */
export function clickhouseConfigXml(stack: Stack, m: ManagedClickHouse): string {
  const lines = [
    '<clickhouse>',
    ...listenHosts,
    '  <logger><console>1</console><level>information</level></logger>',
    ...memoryXml(withMemoryLimit(m.resources).limits?.['memory']),
  ];
  if (isClustered(m)) {
    lines.push(
      '  <macros>',
      '    <shard from_env="CLICKHOUSE_SHARD"/>',
      '    <replica from_env="POD_NAME"/>',
      '  </macros>',
      '  <remote_servers>',
      `    <${clusterName}>`,
      '      <secret from_env="CLICKHOUSE_CLUSTER_SECRET"/>',
      ...clickhouseHosts(stack, m).flatMap((replicas) => [
        '      <shard>',
        '        <internal_replication>true</internal_replication>',
        ...replicas.map((host) => `        <replica><host>${host}</host><port>${nativePort}</port></replica>`),
        '      </shard>',
      ]),
      `    </${clusterName}>`,
      '  </remote_servers>',
      '  <zookeeper>',
      ...keeperHosts(stack, m).map((host) => `    <node><host>${host}</host><port>${keeperClientPort}</port></node>`),
      '    <identity from_env="CLICKHOUSE_KEEPER_IDENTITY"/>',
      '  </zookeeper>',
      `  <interserver_http_port>${interserverPort}</interserver_http_port>`,
      '  <interserver_http_credentials>',
      `    <user>${clickhouseUsers.interserver}</user>`,
      '    <password from_env="CLICKHOUSE_INTERSERVER_PASSWORD"/>',
      '  </interserver_http_credentials>',
      '  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>',
    );
  }
  lines.push('</clickhouse>', '');
  return lines.join('\n');
}

/**
 * users.d/tenantry-users.xml: `default` only from inside the pod; the
 * application user (gateway, API) may read and insert in the stack's
 * database, change the signal tables' TTL (retention settings, migration 7)
 * and use table functions (the block INSERT's input()); it inserts through
 * Distributed tables in the foreground, so an acknowledged INSERT is on a
 * replica of every shard it touched; the DDL
 * user (migrate Job) owns the database and may run ON CLUSTER DDL, read
 * other servers (remote), Keeper, the cluster and replica lists (system
 * tables need a grant with the image's config.xml) and drop replicas of
 * removed servers.
 */
/** System tables migrate reads beyond those every user may read (tables, columns, one). */
export const systemTablesOfMigrate = ['zookeeper', 'clusters', 'replicas'] as const;

export function clickhouseUsersXml(database: string): string {
  const grants = (queries: readonly string[]): string[] => ['      <grants>', ...queries.map((q) => `        <query>${q}</query>`), '      </grants>'];
  const user = (name: string, passwordEnv: string, profile: string, queries: readonly string[]): string[] => [
    `    <${name}>`,
    `      <password from_env="${passwordEnv}"/>`,
    '      <networks><ip>::/0</ip></networks>',
    `      <profile>${profile}</profile>`,
    '      <quota>default</quota>',
    ...grants(queries),
    `    </${name}>`,
  ];
  return [
    '<clickhouse>',
    '  <profiles>',
    '    <tenantry>',
    '      <distributed_foreground_insert>1</distributed_foreground_insert>',
    '    </tenantry>',
    '  </profiles>',
    '  <users>',
    '    <default>',
    '      <networks replace="replace"><ip>::1</ip><ip>127.0.0.1</ip></networks>',
    '    </default>',
    ...user(clickhouseUsers.app, 'CLICKHOUSE_APP_PASSWORD', 'tenantry', [
      `GRANT SELECT, INSERT, ALTER MODIFY TTL, ALTER MATERIALIZE TTL ON ${database}.*`,
      // CREATE TEMPORARY TABLE: the table functions of the block INSERT (input()) need it.
      'GRANT CLUSTER, CREATE TEMPORARY TABLE ON *.*',
    ]),
    ...user(clickhouseUsers.ddl, 'CLICKHOUSE_DDL_PASSWORD', 'tenantry', [
      `GRANT ALL ON ${database}.*`,
      'GRANT CLUSTER, REMOTE, CREATE TEMPORARY TABLE, SYSTEM DROP REPLICA ON *.*',
      // The image's config.xml sets select_from_system_db_requires_grant: migrate reads Keeper, the cluster's
      // servers and the registered replicas (cluster-schema.ts; the Job's init container reads system.clusters).
      ...systemTablesOfMigrate.map((t) => `GRANT SELECT ON system.${t}`),
    ]),
    '  </users>',
    '</clickhouse>',
    '',
  ].join('\n');
}

/**
 * keeper.xml: the Raft ensemble; each pod's server id is its ordinal + 1 (the
 * start command reads it from POD_NAME, the downward API's pod name). The
 * HTTP control port's /ready answers once the node has joined the quorum
 * (a leader or a follower that knows one), which the readiness probe waits for.
 */
export function keeperConfigXml(stack: Stack, m: ManagedClickHouse): string {
  return [
    '<clickhouse>',
    ...listenHosts,
    '  <logger><console>1</console><level>information</level></logger>',
    '  <keeper_server>',
    `    <tcp_port>${keeperClientPort}</tcp_port>`,
    `    <http_control><port>${keeperHttpControlPort}</port><readiness><endpoint>/ready</endpoint></readiness></http_control>`,
    '    <server_id from_env="KEEPER_SERVER_ID"/>',
    '    <log_storage_path>/var/lib/clickhouse-keeper/log</log_storage_path>',
    '    <snapshot_storage_path>/var/lib/clickhouse-keeper/snapshots</snapshot_storage_path>',
    '    <raft_configuration>',
    ...keeperHosts(stack, m).map((host, i) => `      <server><id>${i + 1}</id><hostname>${host}</hostname><port>${keeperRaftPort}</port></server>`),
    '    </raft_configuration>',
    '  </keeper_server>',
    '</clickhouse>',
    '',
  ].join('\n');
}

function clickhouseConfigMap(stack: Stack, m: ManagedClickHouse): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: childMeta(stack.ref, childNames(stack.ref.name).clickhouseConfig, 'clickhouse'),
    data: { 'tenantry.xml': clickhouseConfigXml(stack, m), 'tenantry-users.xml': clickhouseUsersXml(stack.spec.clickhouse.database) },
  };
}

function clickhouseServices(stack: Stack): Service[] {
  const n = childNames(stack.ref.name);
  const selector = selectorLabels(stack.ref, 'clickhouse');
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: childMeta(stack.ref, n.clickhouse, 'clickhouse'),
      spec: { type: 'ClusterIP', selector, ports: [{ name: 'http', port: clickhouseHttpPort, targetPort: 'http', protocol: 'TCP' }] },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: childMeta(stack.ref, n.clickhouseHeadless, 'clickhouse'),
      spec: {
        clusterIP: 'None',
        // Replicas must find each other before they are ready.
        publishNotReadyAddresses: true,
        selector,
        ports: [
          { name: 'http', port: clickhouseHttpPort, targetPort: 'http', protocol: 'TCP' },
          { name: 'native', port: nativePort, targetPort: 'native', protocol: 'TCP' },
          { name: 'interserver', port: interserverPort, targetPort: 'interserver', protocol: 'TCP' },
        ],
      },
    },
  ];
}

const secretEnv = (stack: Stack, name: string, key: string): EnvVar => ({
  name,
  valueFrom: { secretKeyRef: { name: childNames(stack.ref.name).credentials, key } },
});

/** The pod's own name from the downward API: the `{replica}` macro and Keeper's server id (HOSTNAME is the runtime's, not guaranteed). */
const podNameEnv: EnvVar = { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } };

/**
 * Placement: pods matching `selector` never share a node (required: two
 * replicas of a shard, or two Keepers, on one node lose quorum or the shard
 * with it), and spread over zones where the nodes have zones (preferred:
 * a single-zone cluster still schedules).
 */
function placement(
  selector: Record<string, string>,
): Pick<NonNullable<StatefulSet['spec']>['template']['spec'] & object, 'affinity' | 'topologySpreadConstraints'> {
  return {
    affinity: {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: selector }, topologyKey: 'kubernetes.io/hostname' }],
      },
    },
    topologySpreadConstraints: [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selector } },
    ],
  };
}

/** The env of a ClickHouse server: its shard, pod name and the generated credentials its config reads. */
function clickhouseEnv(stack: Stack, m: ManagedClickHouse, shard: number): EnvVar[] {
  return [
    { name: 'CLICKHOUSE_SHARD', value: String(shard) },
    podNameEnv,
    // The image's entrypoint writes no user of its own: users.d/tenantry-users.xml has them.
    { name: 'CLICKHOUSE_SKIP_USER_SETUP', value: '1' },
    secretEnv(stack, 'CLICKHOUSE_APP_PASSWORD', secretKeys.clickhousePassword),
    secretEnv(stack, 'CLICKHOUSE_DDL_PASSWORD', secretKeys.clickhouseDdlPassword),
    ...(isClustered(m)
      ? [
          secretEnv(stack, 'CLICKHOUSE_INTERSERVER_PASSWORD', secretKeys.interserverPassword),
          secretEnv(stack, 'CLICKHOUSE_CLUSTER_SECRET', secretKeys.clusterSecret),
          secretEnv(stack, 'CLICKHOUSE_KEEPER_PASSWORD', secretKeys.keeperPassword),
          // Kubernetes expands $(VAR) of a variable defined above: the digest identity user:password.
          { name: 'CLICKHOUSE_KEEPER_IDENTITY', value: `${clickhouseUsers.keeper}:$(CLICKHOUSE_KEEPER_PASSWORD)` },
        ]
      : []),
  ];
}

function shardStatefulSet(stack: Stack, m: ManagedClickHouse, shard: number, configChecksum: string): StatefulSet {
  const n = childNames(stack.ref.name);
  const labels = { ...childLabels(stack.ref, 'clickhouse'), 'tenantry.dev/shard': String(shard) };
  const selector = { ...selectorLabels(stack.ref, 'clickhouse'), 'tenantry.dev/shard': String(shard) };
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { ...childMeta(stack.ref, n.clickhouseShard(shard), 'clickhouse'), labels },
    spec: {
      serviceName: n.clickhouseHeadless,
      replicas: m.replicas,
      podManagementPolicy: 'Parallel',
      // A replica removed by scaling down loses its volume (its shard's other replicas hold the data, and
      // migrate drops its Keeper entry): kept, it would come back on a later scale-up with tables whose
      // replica metadata is gone from Keeper, read-only until restored by hand. Deleting the stack keeps them.
      persistentVolumeClaimRetentionPolicy: { whenScaled: 'Delete', whenDeleted: 'Retain' },
      selector: { matchLabels: selector },
      template: {
        metadata: { labels, annotations: { [checksumAnnotation]: configChecksum } },
        spec: {
          ...placement(selector),
          containers: [
            {
              name: 'clickhouse',
              image: m.image,
              env: clickhouseEnv(stack, m, shard),
              ports: [
                { name: 'http', containerPort: clickhouseHttpPort, protocol: 'TCP' },
                { name: 'native', containerPort: nativePort, protocol: 'TCP' },
                { name: 'interserver', containerPort: interserverPort, protocol: 'TCP' },
              ],
              readinessProbe: { httpGet: { path: '/ping', port: 'http' }, periodSeconds: 5 },
              livenessProbe: { httpGet: { path: '/ping', port: 'http' }, periodSeconds: 10, failureThreshold: 12 },
              resources: withMemoryLimit(m.resources),
              volumeMounts: [
                { name: 'data', mountPath: '/var/lib/clickhouse' },
                { name: 'config', mountPath: '/etc/clickhouse-server/config.d/tenantry.xml', subPath: 'tenantry.xml', readOnly: true },
                { name: 'config', mountPath: '/etc/clickhouse-server/users.d/tenantry-users.xml', subPath: 'tenantry-users.xml', readOnly: true },
              ],
            },
          ],
          volumes: [{ name: 'config', configMap: { name: n.clickhouseConfig } }],
          terminationGracePeriodSeconds: 60,
        },
      },
      volumeClaimTemplates: [claim('data', m.storage)],
    },
  };
}

function keeperObjects(stack: Stack, m: ManagedClickHouse): [ConfigMap, Service, StatefulSet] {
  const n = childNames(stack.ref.name);
  const xml = keeperConfigXml(stack, m);
  const selector = selectorLabels(stack.ref, 'clickhouse-keeper');
  return [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: childMeta(stack.ref, n.keeperConfig, 'clickhouse-keeper'),
      data: { 'keeper.xml': xml },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: childMeta(stack.ref, n.keeper, 'clickhouse-keeper'),
      spec: {
        clusterIP: 'None',
        publishNotReadyAddresses: true,
        selector,
        ports: [
          { name: 'client', port: keeperClientPort, targetPort: 'client', protocol: 'TCP' },
          { name: 'raft', port: keeperRaftPort, targetPort: 'raft', protocol: 'TCP' },
        ],
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: childMeta(stack.ref, n.keeper, 'clickhouse-keeper'),
      spec: {
        serviceName: n.keeper,
        replicas: m.keeper.replicas,
        podManagementPolicy: 'Parallel',
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: childLabels(stack.ref, 'clickhouse-keeper'), annotations: { [checksumAnnotation]: checksum(xml) } },
          spec: {
            ...placement(selector),
            containers: [
              {
                name: 'keeper',
                image: m.image,
                command: [
                  '/bin/sh',
                  '-c',
                  'export KEEPER_SERVER_ID=$(( ${POD_NAME##*-} + 1 )); exec clickhouse keeper --config-file=/etc/clickhouse-keeper/keeper.xml',
                ],
                env: [podNameEnv],
                ports: [
                  { name: 'client', containerPort: keeperClientPort, protocol: 'TCP' },
                  { name: 'raft', containerPort: keeperRaftPort, protocol: 'TCP' },
                  { name: 'http-control', containerPort: keeperHttpControlPort, protocol: 'TCP' },
                ],
                // Ready once in the quorum, not when the client port opens: a drain then never takes a second Keeper within the budget.
                readinessProbe: { httpGet: { path: '/ready', port: 'http-control' }, periodSeconds: 5 },
                livenessProbe: { tcpSocket: { port: 'client' }, periodSeconds: 10, failureThreshold: 12 },
                resources: withMemoryLimit(m.keeper.resources),
                volumeMounts: [
                  { name: 'data', mountPath: '/var/lib/clickhouse-keeper' },
                  { name: 'config', mountPath: '/etc/clickhouse-keeper', readOnly: true },
                ],
              },
            ],
            volumes: [{ name: 'config', configMap: { name: n.keeperConfig } }],
          },
        },
        volumeClaimTemplates: [claim('data', m.keeper.storage)],
      },
    },
  ];
}

/** Every object of a managed ClickHouse; `passwordChecksum` rolls the servers when the password changes. */
export function managedClickHouseObjects(stack: Stack, m: ManagedClickHouse, passwordChecksum: string): Array<ConfigMap | Service | StatefulSet> {
  const configMap = clickhouseConfigMap(stack, m);
  const configChecksum = checksum({ config: configMap.data, passwordChecksum });
  return [
    configMap,
    ...clickhouseServices(stack),
    ...Array.from({ length: m.shards }, (_, shard) => shardStatefulSet(stack, m, shard, configChecksum)),
    ...(isClustered(m) ? keeperObjects(stack, m) : []),
  ];
}
