// The Tenantry processes of a stack: the gateway StatefulSet and the API
// Deployment with their Services, optional HorizontalPodAutoscalers, and the migration Job's
// environment (the Job: migration-job.ts). All run the one image with a target
// argument and TENANTRY_* variables.
import type {
  Container,
  Deployment,
  EnvVar,
  HorizontalPodAutoscaler,
  PersistentVolumeClaim,
  PodSpec,
  Service,
  StatefulSet,
  TopologySpreadConstraint,
  Volume,
  VolumeMount,
} from './manifest-types.ts';
import type { Autoscaling, SpreadMode, Stack } from '../stack/stack-spec.ts';
import { isClustered } from '../stack/stack-spec.ts';
import { childNames } from './child-names.ts';
import { checksum } from './config-checksum.ts';
import { clickhouseUsers, secretKeys } from './credentials-secret.ts';
import { checksumAnnotation, childLabels, childMeta, selectorLabels } from './object-meta.ts';

export const apiPort = 8080;
export const clickhouseHttpPort = 8123;
export const clusterName = 'tenantry';
const keysMountPath = '/etc/tenantry/keys';

/** Where the pods reach ClickHouse, and as whom. */
export function storageEnv(stack: Stack): EnvVar[] {
  const ch = stack.spec.clickhouse;
  const names = childNames(stack.ref.name);
  if (ch.mode === 'external') {
    const ref = ch.external.secretRef;
    return [
      { name: 'TENANTRY_CLICKHOUSE_URL', value: ch.external.url },
      { name: 'TENANTRY_CLICKHOUSE_USER', valueFrom: { secretKeyRef: { name: ref.name, key: ref.userKey } } },
      { name: 'TENANTRY_CLICKHOUSE_PASSWORD', valueFrom: { secretKeyRef: { name: ref.name, key: ref.passwordKey } } },
      { name: 'TENANTRY_CLICKHOUSE_DATABASE', value: ch.database },
      ...(ch.external.cluster === undefined ? [] : [{ name: 'TENANTRY_CLICKHOUSE_CLUSTER', value: ch.external.cluster }]),
    ];
  }
  return [
    { name: 'TENANTRY_CLICKHOUSE_URL', value: `http://${names.clickhouse}.${stack.ref.namespace}.svc:${clickhouseHttpPort}` },
    { name: 'TENANTRY_CLICKHOUSE_USER', value: clickhouseUsers.app },
    { name: 'TENANTRY_CLICKHOUSE_PASSWORD', valueFrom: { secretKeyRef: { name: names.credentials, key: secretKeys.clickhousePassword } } },
    { name: 'TENANTRY_CLICKHOUSE_DATABASE', value: ch.database },
    ...(isClustered(ch.managed) ? [{ name: 'TENANTRY_CLICKHOUSE_CLUSTER', value: clusterName }] : []),
  ];
}

/**
 * The /metrics settings of a serving pod: the bearer key (gateway and API)
 * from the Secret the stack names, never a value in the stack object; the
 * per-tenant labels only where they exist (the gateway's series).
 */
function metricsEnv(stack: Stack, component: 'gateway' | 'api'): EnvVar[] {
  const m = stack.spec.metrics;
  return [
    // Only when on: off is the process default, and a stack that does not ask keeps its pod template (no rollout on upgrade).
    ...(component === 'gateway' && m.tenantLabels ? [{ name: 'TENANTRY_METRICS_TENANT_LABELS', value: 'on' }] : []),
    ...(m.keySecretRef === undefined
      ? []
      : [{ name: 'TENANTRY_METRICS_KEY', valueFrom: { secretKeyRef: { name: m.keySecretRef.name, key: m.keySecretRef.key } } }]),
  ];
}

function keysVolume(stack: Stack): { volume: Volume; mount: VolumeMount; env: EnvVar } {
  const keys = stack.spec.apiKeys;
  const secretName = keys.secretName ?? childNames(stack.ref.name).credentials;
  const file = keys.secretName === undefined ? secretKeys.keysFile : keys.keysFileKey;
  return {
    volume: { name: 'api-keys', secret: { secretName, items: [{ key: file, path: file }] } },
    mount: { name: 'api-keys', mountPath: keysMountPath, readOnly: true },
    env: { name: 'TENANTRY_API_KEYS_FILE', value: `${keysMountPath}/${file}` },
  };
}

interface ServingPod {
  readonly component: 'gateway' | 'api';
  readonly target: 'gateway' | 'api';
  readonly env: EnvVar[];
  readonly ports: NonNullable<Container['ports']>;
  /** The named port of /healthz (liveness) and, unless `readinessOverGrpc`, of /readyz (readiness). */
  readonly probePort: string;
  /**
   * A port whose grpc.health.v1.Health answers readiness instead of /readyz:
   * the gateway's OTLP/gRPC port, so the kubelet exercises both listeners
   * (gRPC for readiness, HTTP for liveness) with the one readiness both
   * report (docs/adr/0007-gateway-wal-volumes.md, "Probes").
   */
  readonly readinessOverGrpc?: number;
  readonly resources: Container['resources'];
  /** Writable folders the target needs (the root filesystem is read-only); no volume when a claim template provides it. */
  readonly scratch?: { readonly volume: Volume | undefined; readonly mount: VolumeMount };
  readonly terminationGracePeriodSeconds: number;
  /** Seconds the pod keeps serving after it was told to stop, before SIGTERM (a preStop sleep). */
  readonly stopDelaySeconds?: number;
}

const walMountPath = '/var/lib/tenantry/wal';
/** The name of the gateway's write-ahead-log volume, and of its claim template: claims are named `wal-<statefulset>-<ordinal>`. */
export const walVolumeName = 'wal';

/**
 * The gateway's write-ahead log (docs/adr/0006-write-ahead-log.md). On a
 * PersistentVolumeClaim (the default, docs/adr/0007-gateway-wal-volumes.md) it
 * survives the loss of the node: what the pod acknowledged and had not yet
 * inserted is inserted by the next pod of the same ordinal, or by a drain Job
 * once the ordinal is scaled away. On an emptyDir (an explicit choice) it
 * survives a container restart, and a pod that is stopped drains it first,
 * but a lost node (or a forced deletion) loses what was acknowledged and not
 * yet inserted: up to TENANTRY_WAL_MAX_BYTES while ClickHouse is down. The
 * emptyDir's size limit is the stack's WAL size (default 2Gi, room above the
 * default TENANTRY_WAL_MAX_BYTES of 1 GiB).
 */
function walVolume(stack: Stack): { volume: Volume | undefined; mount: VolumeMount; env: EnvVar } {
  const wal = stack.spec.gateway.wal;
  return {
    volume: wal.volume === 'EmptyDir' ? { name: walVolumeName, emptyDir: { sizeLimit: wal.size } } : undefined,
    mount: { name: walVolumeName, mountPath: walMountPath },
    env: { name: 'TENANTRY_WAL_DIR', value: walMountPath },
  };
}

/** The claim template of the gateway's write-ahead log, or none when it lives on an emptyDir. */
function walClaimTemplates(stack: Stack): PersistentVolumeClaim[] {
  const wal = stack.spec.gateway.wal;
  if (wal.volume === 'EmptyDir') return [];
  return [
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      // The claims carry the stack's labels: the operator finds a departed replica's claim by them (reconcile/wal-drain.ts).
      metadata: { name: walVolumeName, labels: childLabels(stack.ref, 'gateway') },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: wal.size } },
        ...(wal.storageClassName === undefined ? {} : { storageClassName: wal.storageClassName }),
      },
    },
  ];
}

/** The replica count a serving component always has at least: the HPA's minimum when it scales the component. */
export function minimumReplicas(c: { readonly replicas: number; readonly autoscaling: Autoscaling }): number {
  return c.autoscaling.enabled ? c.autoscaling.minReplicas : c.replicas;
}

/**
 * Spread over zones and over nodes, each with its own mode (Off: none), among
 * the pods of one rollout. A node without the zone label counts as one domain
 * of its own, so ScheduleAnyway never blocks scheduling on a cluster without zones.
 */
export function topologySpread(stack: Stack, component: 'gateway' | 'api'): TopologySpreadConstraint[] {
  // The label that tells one rollout's pods from another's: a Deployment's ReplicaSet hash, a StatefulSet's revision.
  const revisionLabel = component === 'gateway' ? 'controller-revision-hash' : 'pod-template-hash';
  const s = stack.spec.topologySpread;
  const keys: Array<[string, SpreadMode]> = [
    ['topology.kubernetes.io/zone', s.zone],
    ['kubernetes.io/hostname', s.hostname],
  ];
  return keys
    .filter(([, mode]) => mode !== 'Off')
    .map(([topologyKey, mode]) => ({
      maxSkew: s.maxSkew,
      topologyKey,
      whenUnsatisfiable: mode,
      labelSelector: { matchLabels: selectorLabels(stack.ref, component) },
      // Only the pods of the same revision count: during a rollout the old pods would skew the new ones.
      matchLabelKeys: [revisionLabel],
    }));
}

/** The pod template of one serving target; `secretsChecksum` covers Secret contents the pods read. */
function servingPodTemplate(stack: Stack, pod: ServingPod, secretsChecksum: string): NonNullable<Deployment['spec']>['template'] {
  const keys = keysVolume(stack);
  const env = [{ name: 'TENANTRY_LOG_LEVEL', value: 'info' }, ...storageEnv(stack), keys.env, ...pod.env, ...metricsEnv(stack, pod.component)];
  const container: Container = {
    name: pod.component,
    image: stack.spec.image,
    imagePullPolicy: stack.spec.imagePullPolicy,
    args: [pod.target],
    env,
    ports: pod.ports,
    readinessProbe: {
      ...(pod.readinessOverGrpc === undefined ? { httpGet: { path: '/readyz', port: pod.probePort } } : { grpc: { port: pod.readinessOverGrpc } }),
      periodSeconds: 5,
      failureThreshold: 2,
    },
    livenessProbe: { httpGet: { path: '/healthz', port: pod.probePort }, periodSeconds: 10, failureThreshold: 6 },
    volumeMounts: [keys.mount, ...(pod.scratch === undefined ? [] : [pod.scratch.mount])],
    ...(pod.resources === undefined ? {} : { resources: pod.resources }),
    // Kubernetes' own sleep action (no shell in the image needed; beta and on by default from 1.30, the chart's minimum).
    ...(pod.stopDelaySeconds === undefined ? {} : { lifecycle: { preStop: { sleep: { seconds: pod.stopDelaySeconds } } } }),
    securityContext: { runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
  };
  const spread = topologySpread(stack, pod.component);
  const scratchVolume = pod.scratch?.volume;
  const spec: PodSpec = {
    containers: [container],
    volumes: [keys.volume, ...(scratchVolume === undefined ? [] : [scratchVolume])],
    terminationGracePeriodSeconds: pod.terminationGracePeriodSeconds,
    // A claim's volume is written by user 1000: the group owns it so that the pod can.
    ...(pod.scratch !== undefined && scratchVolume === undefined ? { securityContext: { fsGroup: 1000, fsGroupChangePolicy: 'OnRootMismatch' } } : {}),
    ...(spread.length === 0 ? {} : { topologySpreadConstraints: spread }),
  };
  return {
    metadata: {
      labels: childLabels(stack.ref, pod.component),
      annotations: { [checksumAnnotation]: checksum({ env, image: stack.spec.image, secretsChecksum }) },
    },
    spec,
  };
}

/** Under an HPA the operator does not apply replicas at all, so server-side apply never resets the HPA's count. */
function replicasOf(scale: { readonly replicas: number; readonly autoscaling: Autoscaling }): { replicas?: number } {
  return scale.autoscaling.enabled ? {} : { replicas: scale.replicas };
}

/**
 * A stopping gateway pod first keeps serving for this long: its endpoint is
 * already marked terminating, so load balancers and kube-proxy send new
 * connections elsewhere before its listeners stop accepting them.
 */
export const gatewayStopDelaySeconds = 5;

/**
 * Seconds a gateway pod has to stop, counted from the stop request: the
 * stop delay, in-flight requests finishing (their bodies may take the
 * listener's 30 s body timeout), then the write-ahead log going to
 * ClickHouse (logged-writer.ts' stopTimeoutMs, 30 s), plus a margin. What is
 * left when ClickHouse is down stays on the pod's claim (ADR 7).
 */
export const gatewayTerminationGraceSeconds = gatewayStopDelaySeconds + 30 + 30 + 10;

/**
 * The gateways as a StatefulSet: each replica keeps its write-ahead log on its
 * own claim (`wal-<name>-<ordinal>`), which a replacement pod of the same
 * ordinal mounts again wherever it is scheduled. Claims are retained on
 * scale-down and on deletion; a scaled-away replica's claim is drained by a
 * Job and only then deleted (reconcile/wal-drain.ts). Pods start in parallel:
 * gateways are interchangeable and need no ordered start.
 */
export function gatewayStatefulSet(stack: Stack, secretsChecksum: string): StatefulSet {
  const g = stack.spec.gateway;
  const wal = walVolume(stack);
  const name = childNames(stack.ref.name).gateway;
  const template = servingPodTemplate(
    stack,
    {
      component: 'gateway',
      target: 'gateway',
      env: [
        { name: 'TENANTRY_OTLP_HTTP_PORT', value: String(g.ports.otlpHttp) },
        { name: 'TENANTRY_OTLP_GRPC_PORT', value: String(g.ports.otlpGrpc) },
        { name: 'TENANTRY_MAX_REQUEST_BYTES', value: String(g.maxRequestBytes) },
        wal.env,
      ],
      scratch: wal,
      terminationGracePeriodSeconds: gatewayTerminationGraceSeconds,
      stopDelaySeconds: gatewayStopDelaySeconds,
      ports: [
        { name: 'otlp-http', containerPort: g.ports.otlpHttp, protocol: 'TCP' },
        { name: 'otlp-grpc', containerPort: g.ports.otlpGrpc, protocol: 'TCP' },
      ],
      probePort: 'otlp-http',
      readinessOverGrpc: g.ports.otlpGrpc,
      resources: g.resources,
    },
    secretsChecksum,
  );
  const claims = walClaimTemplates(stack);
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: childMeta(stack.ref, name, 'gateway'),
    spec: {
      ...replicasOf(g),
      serviceName: name,
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: selectorLabels(stack.ref, 'gateway') },
      updateStrategy: { type: 'RollingUpdate' },
      template,
      ...(claims.length === 0
        ? {}
        : {
            volumeClaimTemplates: claims,
            persistentVolumeClaimRetentionPolicy: { whenScaled: 'Retain', whenDeleted: 'Retain' },
          }),
    },
  };
}

/** The API as a Deployment: stateless, rolled out one extra pod at a time. */
export function apiDeployment(stack: Stack, secretsChecksum: string): Deployment {
  const template = servingPodTemplate(
    stack,
    {
      component: 'api',
      target: 'api',
      env: [
        { name: 'TENANTRY_API_PORT', value: String(apiPort) },
        // The API bounds each query's statement from the memory its pod may use (src/target/statement-limits.ts); without a limit Kubernetes gives the node's allocatable memory.
        { name: 'TENANTRY_MEMORY_LIMIT_BYTES', valueFrom: { resourceFieldRef: { containerName: 'api', resource: 'limits.memory' } } },
      ],
      ports: [{ name: 'http', containerPort: apiPort, protocol: 'TCP' }],
      probePort: 'http',
      resources: stack.spec.api.resources,
      terminationGracePeriodSeconds: 30,
    },
    secretsChecksum,
  );
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: childMeta(stack.ref, childNames(stack.ref.name).api, 'api'),
    spec: {
      ...replicasOf(stack.spec.api),
      selector: { matchLabels: selectorLabels(stack.ref, 'api') },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      template,
    },
  };
}

function autoscaler(stack: Stack, name: string, component: 'gateway' | 'api', a: Autoscaling): HorizontalPodAutoscaler {
  const kind = component === 'gateway' ? 'StatefulSet' : 'Deployment';
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: childMeta(stack.ref, name, component),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind, name },
      minReplicas: a.minReplicas,
      maxReplicas: a.maxReplicas,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: a.targetCPUUtilizationPercentage } } }],
    },
  };
}

/** The HPAs of the gateway and the API, for those with autoscaling enabled. */
export function autoscalers(stack: Stack): HorizontalPodAutoscaler[] {
  const names = childNames(stack.ref.name);
  const { gateway, api } = stack.spec;
  return [
    ...(gateway.autoscaling.enabled ? [autoscaler(stack, names.gateway, 'gateway', gateway.autoscaling)] : []),
    ...(api.autoscaling.enabled ? [autoscaler(stack, names.api, 'api', api.autoscaling)] : []),
  ];
}

export function gatewayService(stack: Stack): Service {
  const g = stack.spec.gateway;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(stack.ref, childNames(stack.ref.name).gateway, 'gateway'),
    spec: {
      type: g.serviceType,
      selector: selectorLabels(stack.ref, 'gateway'),
      ports: [
        { name: 'otlp-http', port: g.ports.otlpHttp, targetPort: 'otlp-http', protocol: 'TCP', appProtocol: 'http' },
        { name: 'otlp-grpc', port: g.ports.otlpGrpc, targetPort: 'otlp-grpc', protocol: 'TCP', appProtocol: 'grpc' },
      ],
    },
  };
}

export function apiService(stack: Stack): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: childMeta(stack.ref, childNames(stack.ref.name).api, 'api'),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(stack.ref, 'api'),
      ports: [{ name: 'http', port: apiPort, targetPort: 'http', protocol: 'TCP', appProtocol: 'http' }],
    },
  };
}

/** The environment of the migrate Job: storage plus retention (TTLs are part of the schema). */
export function migrationEnv(stack: Stack): EnvVar[] {
  const r = stack.spec.retention;
  return [
    { name: 'TENANTRY_LOG_LEVEL', value: 'info' },
    ...storageEnv(stack),
    { name: 'TENANTRY_LOGS_RETENTION_DAYS', value: String(r.logsDays) },
    { name: 'TENANTRY_TRACES_RETENTION_DAYS', value: String(r.tracesDays) },
    { name: 'TENANTRY_METRICS_RETENTION_DAYS', value: String(r.metricsDays) },
  ];
}
