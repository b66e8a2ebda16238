// A ClickHouse the operator runs: one StatefulSet per shard (its replicas are
// the shard's replicas), a headless Service for stable pod DNS, a client
// Service, a config (macros, remote servers, Keeper), and, when there is more
// than one server, a ClickHouse Keeper ensemble.
import type { ConfigMap, PersistentVolumeClaim, Service, StatefulSet } from './manifest-types.ts';
import type { ManagedClickHouse, Stack, StorageSpec } from '../stack/stack-spec.ts';
import { isClustered } from '../stack/stack-spec.ts';
import { childNames } from './child-names.ts';
import { checksum } from './config-checksum.ts';
import { secretKeys } from './credentials-secret.ts';
import { checksumAnnotation, childLabels, childMeta, selectorLabels } from './object-meta.ts';
import { clickhouseHttpPort, clusterName } from './tenantry-workloads.ts';

const nativePort = 9000;
const interserverPort = 9009;
const keeperClientPort = 9181;
const keeperRaftPort = 9234;

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
    Array.from({ length: m.replicas }, (_, r) => `${n.clickhouseShard(s)}-${r}.${n.clickhouseHeadless}.${stack.ref.namespace}.svc`));
}

export function keeperHosts(stack: Stack, m: ManagedClickHouse): string[] {
  const n = childNames(stack.ref.name);
  return Array.from({ length: m.keeper.replicas }, (_, i) => `${n.keeper}-${i}.${n.keeper}.${stack.ref.namespace}.svc`);
}

/** config.d/tenantry.xml: listen everywhere; for a cluster, macros from env, remote servers and Keeper. */
export function clickhouseConfigXml(stack: Stack, m: ManagedClickHouse): string {
  const lines = ['<clickhouse>', '  <listen_host>0.0.0.0</listen_host>', '  <logger><console>1</console><level>information</level></logger>'];
  if (isClustered(m)) {
    lines.push(
      '  <macros>',
      '    <shard from_env="CLICKHOUSE_SHARD"/>',
      '    <replica from_env="HOSTNAME"/>',
      '  </macros>',
      '  <remote_servers>',
      `    <${clusterName}>`,
      ...clickhouseHosts(stack, m).flatMap((replicas) => [
        '      <shard>',
        '        <internal_replication>true</internal_replication>',
        ...replicas.map((host) => `        <replica><host>${host}</host><port>${nativePort}</port><user>default</user><password from_env="CLICKHOUSE_PASSWORD"/></replica>`),
        '      </shard>',
      ]),
      `    </${clusterName}>`,
      '  </remote_servers>',
      '  <zookeeper>',
      ...keeperHosts(stack, m).map((host) => `    <node><host>${host}</host><port>${keeperClientPort}</port></node>`),
      '  </zookeeper>',
      `  <interserver_http_port>${interserverPort}</interserver_http_port>`,
      '  <distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>',
    );
  }
  lines.push('</clickhouse>', '');
  return lines.join('\n');
}

/** keeper.xml: the Raft ensemble; each pod's server id is its ordinal + 1 (set by the start command). */
export function keeperConfigXml(stack: Stack, m: ManagedClickHouse): string {
  return [
    '<clickhouse>',
    '  <listen_host>0.0.0.0</listen_host>',
    '  <logger><console>1</console><level>information</level></logger>',
    '  <keeper_server>',
    `    <tcp_port>${keeperClientPort}</tcp_port>`,
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
    data: { 'tenantry.xml': clickhouseConfigXml(stack, m) },
  };
}

function clickhouseServices(stack: Stack): Service[] {
  const n = childNames(stack.ref.name);
  const selector = selectorLabels(stack.ref, 'clickhouse');
  return [
    {
      apiVersion: 'v1', kind: 'Service',
      metadata: childMeta(stack.ref, n.clickhouse, 'clickhouse'),
      spec: { type: 'ClusterIP', selector, ports: [{ name: 'http', port: clickhouseHttpPort, targetPort: 'http', protocol: 'TCP' }] },
    },
    {
      apiVersion: 'v1', kind: 'Service',
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
      selector: { matchLabels: selector },
      template: {
        metadata: { labels, annotations: { [checksumAnnotation]: configChecksum } },
        spec: {
          containers: [{
            name: 'clickhouse',
            image: m.image,
            env: [
              { name: 'CLICKHOUSE_SHARD', value: String(shard) },
              { name: 'CLICKHOUSE_USER', value: 'default' },
              { name: 'CLICKHOUSE_PASSWORD', valueFrom: { secretKeyRef: { name: n.credentials, key: secretKeys.clickhousePassword } } },
              { name: 'CLICKHOUSE_DEFAULT_ACCESS_MANAGEMENT', value: '1' },
            ],
            ports: [
              { name: 'http', containerPort: clickhouseHttpPort, protocol: 'TCP' },
              { name: 'native', containerPort: nativePort, protocol: 'TCP' },
              { name: 'interserver', containerPort: interserverPort, protocol: 'TCP' },
            ],
            readinessProbe: { httpGet: { path: '/ping', port: 'http' }, periodSeconds: 5 },
            livenessProbe: { httpGet: { path: '/ping', port: 'http' }, periodSeconds: 10, failureThreshold: 12 },
            resources: m.resources,
            volumeMounts: [
              { name: 'data', mountPath: '/var/lib/clickhouse' },
              { name: 'config', mountPath: '/etc/clickhouse-server/config.d/tenantry.xml', subPath: 'tenantry.xml', readOnly: true },
            ],
          }],
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
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: childMeta(stack.ref, n.keeperConfig, 'clickhouse-keeper'),
      data: { 'keeper.xml': xml },
    },
    {
      apiVersion: 'v1', kind: 'Service',
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
      apiVersion: 'apps/v1', kind: 'StatefulSet',
      metadata: childMeta(stack.ref, n.keeper, 'clickhouse-keeper'),
      spec: {
        serviceName: n.keeper,
        replicas: m.keeper.replicas,
        podManagementPolicy: 'Parallel',
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: childLabels(stack.ref, 'clickhouse-keeper'), annotations: { [checksumAnnotation]: checksum(xml) } },
          spec: {
            containers: [{
              name: 'keeper',
              image: m.image,
              command: ['/bin/sh', '-c', 'export KEEPER_SERVER_ID=$(( ${HOSTNAME##*-} + 1 )); exec clickhouse keeper --config-file=/etc/clickhouse-keeper/keeper.xml'],
              ports: [
                { name: 'client', containerPort: keeperClientPort, protocol: 'TCP' },
                { name: 'raft', containerPort: keeperRaftPort, protocol: 'TCP' },
              ],
              readinessProbe: { tcpSocket: { port: 'client' }, periodSeconds: 5 },
              resources: m.keeper.resources,
              volumeMounts: [
                { name: 'data', mountPath: '/var/lib/clickhouse-keeper' },
                { name: 'config', mountPath: '/etc/clickhouse-keeper', readOnly: true },
              ],
            }],
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
