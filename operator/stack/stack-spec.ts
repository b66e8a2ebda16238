// The ObservabilityStack spec as the operator uses it: every default filled
// in. The API server already validated and defaulted the object against the
// CRD schema; normalising again here keeps the pure builders total (unit
// tests feed partial specs) and mirrors crds/tenantry.dev_observabilitystacks.yaml.
import type { SettingValues } from '../../src/tenant/settings/tenant-settings.ts';
import { settingValuesOf } from '../tenants/declared-settings.ts';

export const group = 'tenantry.dev';
export const version = 'v1alpha1';
export const apiVersion = `${group}/${version}`;

/** A resource quantity ("500m", "4Gi"); numbers from the spec are turned into strings. */
export type Quantity = string;

export interface Resources {
  readonly requests?: Record<string, Quantity>;
  readonly limits?: Record<string, Quantity>;
}

export interface StorageSpec {
  readonly size: Quantity;
  readonly storageClassName: string | undefined;
}

/**
 * Where each gateway replica keeps its write-ahead log: a PersistentVolumeClaim
 * per replica (the default: acknowledged rows survive the loss of the node), or
 * an emptyDir (acknowledged rows not yet in ClickHouse are lost with the node).
 */
export interface GatewayWal extends StorageSpec {
  readonly volume: 'PersistentVolumeClaim' | 'EmptyDir';
}

export interface ManagedClickHouse {
  readonly shards: number;
  readonly replicas: number;
  readonly image: string;
  readonly resources: Resources;
  readonly storage: StorageSpec;
  readonly keeper: { readonly replicas: number; readonly resources: Resources; readonly storage: StorageSpec };
}

export interface ExternalClickHouse {
  readonly url: string;
  readonly cluster: string | undefined;
  readonly secretRef: { readonly name: string; readonly userKey: string; readonly passwordKey: string };
}

export type ClickHouseSpec =
  | { readonly mode: 'managed'; readonly database: string; readonly managed: ManagedClickHouse }
  | { readonly mode: 'external'; readonly database: string; readonly external: ExternalClickHouse };

/** A HorizontalPodAutoscaler for a serving Deployment; when enabled the HPA owns the replica count. */
export interface Autoscaling {
  readonly enabled: boolean;
  readonly minReplicas: number;
  readonly maxReplicas: number;
  readonly targetCPUUtilizationPercentage: number;
}

/** How a topology spread constraint treats a pod that cannot be placed evenly; Off: no constraint on that key. */
export type SpreadMode = 'ScheduleAnyway' | 'DoNotSchedule' | 'Off';

/**
 * The gateway's and the API's /metrics: per-tenant series only when asked for
 * (they name tenants and their volumes), and a bearer key asked of every
 * reader, read from a Secret so that the stack object never holds it.
 */
export interface MetricsEndpoint {
  /** TENANTRY_METRICS_TENANT_LABELS on the gateways. */
  readonly tenantLabels: boolean;
  /** TENANTRY_METRICS_KEY on the gateways and the API, from this Secret's key; absent: /metrics is open. */
  readonly keySecretRef: { readonly name: string; readonly key: string } | undefined;
}

export interface StackSpec {
  readonly image: string;
  readonly imagePullPolicy: 'Always' | 'IfNotPresent' | 'Never';
  readonly gateway: {
    readonly replicas: number;
    readonly resources: Resources;
    readonly ports: { readonly otlpHttp: number; readonly otlpGrpc: number };
    readonly serviceType: 'ClusterIP' | 'NodePort' | 'LoadBalancer';
    readonly maxRequestBytes: number;
    readonly autoscaling: Autoscaling;
    readonly wal: GatewayWal;
  };
  readonly api: { readonly replicas: number; readonly resources: Resources; readonly autoscaling: Autoscaling };
  /** Spread of the gateway and API pods over zones and nodes. */
  readonly topologySpread: { readonly zone: SpreadMode; readonly hostname: SpreadMode; readonly maxSkew: number };
  /** NetworkPolicies: OTLP and API ports open, ClickHouse and Keeper only for the stack's own pods. */
  readonly networkPolicy: { readonly enabled: boolean };
  readonly clickhouse: ClickHouseSpec;
  readonly apiKeys: { readonly secretName: string | undefined; readonly keysFileKey: string; readonly adminKeyKey: string };
  readonly retention: { readonly logsDays: number; readonly tracesDays: number; readonly metricsDays: number };
  /** Settings of every tenant that sets no value of its own (source "stack"); both groups always present, possibly empty. */
  readonly tenantDefaults: Required<SettingValues>;
  readonly tenantSync: { readonly enabled: boolean; readonly intervalSeconds: number; readonly apiUrl: string | undefined };
  readonly metrics: MetricsEndpoint;
}

/** The identity of a stack object that children need: name, namespace, uid, generation. */
export interface StackRef {
  readonly name: string;
  readonly namespace: string;
  readonly uid: string;
  readonly generation: number;
}

export interface Stack {
  readonly ref: StackRef;
  readonly spec: StackSpec;
}

export const defaultImage = 'ghcr.io/tenantry/tenantry:0.1.0';
export const defaultClickHouseImage = 'clickhouse/clickhouse-server:25.8';

/** Requests applied when a component's `resources` is omitted altogether. */
export const defaultResources = {
  gateway: { requests: { cpu: '250m', memory: '256Mi' }, limits: { memory: '1Gi' } },
  api: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } },
  clickhouse: { requests: { cpu: '1', memory: '4Gi' } },
  keeper: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } },
} satisfies Record<string, Resources>;

type Raw = Readonly<Record<string, unknown>>;

const obj = (v: unknown): Raw => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Raw) : {});
const num = (v: unknown, d: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);
const str = (v: unknown, d: string): string => (typeof v === 'string' && v !== '' ? v : d);
const optStr = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const qty = (v: unknown, d: Quantity): Quantity => (typeof v === 'string' || typeof v === 'number' ? String(v) : d);
const oneOf = <T extends string>(v: unknown, allowed: readonly T[], d: T): T => ((allowed as readonly unknown[]).includes(v) ? (v as T) : d);

function resources(v: unknown, d: Resources): Resources {
  if (v === undefined) return d;
  const r = obj(v);
  const map = (m: unknown): Record<string, Quantity> | undefined => {
    if (m === undefined) return undefined;
    return Object.fromEntries(
      Object.entries(obj(m))
        .filter(([, q]) => typeof q === 'string' || typeof q === 'number')
        .map(([k, q]) => [k, String(q)]),
    );
  };
  const requests = map(r['requests']);
  const limits = map(r['limits']);
  return { ...(requests === undefined ? {} : { requests }), ...(limits === undefined ? {} : { limits }) };
}

function autoscaling(v: unknown): Autoscaling {
  const a = obj(v);
  const minReplicas = num(a['minReplicas'], 2);
  return {
    enabled: a['enabled'] === true,
    minReplicas,
    maxReplicas: Math.max(minReplicas, num(a['maxReplicas'], 10)),
    targetCPUUtilizationPercentage: num(a['targetCPUUtilizationPercentage'], 70),
  };
}

const spreadModes: readonly SpreadMode[] = ['ScheduleAnyway', 'DoNotSchedule', 'Off'];

function storage(v: unknown, size: Quantity): StorageSpec {
  const s = obj(v);
  return { size: qty(s['size'], size), storageClassName: optStr(s['storageClassName']) };
}

function gatewayWal(v: unknown): GatewayWal {
  return { volume: oneOf(obj(v)['volume'], ['PersistentVolumeClaim', 'EmptyDir'], 'PersistentVolumeClaim'), ...storage(v, '2Gi') };
}

function metricsEndpoint(v: unknown): MetricsEndpoint {
  const m = obj(v);
  const ref = obj(m['keySecretRef']);
  const name = optStr(ref['name']);
  return { tenantLabels: m['tenantLabels'] === true, keySecretRef: name === undefined ? undefined : { name, key: str(ref['key'], 'metrics-key') } };
}

function clickhouse(v: unknown): ClickHouseSpec {
  const c = obj(v);
  const database = str(c['database'], 'tenantry');
  if (c['mode'] === 'external') {
    const e = obj(c['external']);
    const ref = obj(e['secretRef']);
    return {
      mode: 'external',
      database,
      external: {
        url: str(e['url'], ''),
        cluster: optStr(e['cluster']),
        secretRef: { name: str(ref['name'], ''), userKey: str(ref['userKey'], 'username'), passwordKey: str(ref['passwordKey'], 'password') },
      },
    };
  }
  const m = obj(c['managed']);
  const k = obj(m['keeper']);
  return {
    mode: 'managed',
    database,
    managed: {
      shards: num(m['shards'], 1),
      replicas: num(m['replicas'], 1),
      image: str(m['image'], defaultClickHouseImage),
      resources: resources(m['resources'], defaultResources.clickhouse),
      storage: storage(m['storage'], '10Gi'),
      keeper: { replicas: num(k['replicas'], 3), resources: resources(k['resources'], defaultResources.keeper), storage: storage(k['storage'], '1Gi') },
    },
  };
}

/** Fills every default of the CRD into a raw `spec`; never fails (the API server validated it). */
export function normaliseStackSpec(raw: unknown): StackSpec {
  const s = obj(raw);
  const g = obj(s['gateway']);
  const ports = obj(g['ports']);
  const a = obj(s['api']);
  const keys = obj(s['apiKeys']);
  const r = obj(s['retention']);
  const sync = obj(s['tenantSync']);
  const spread = obj(s['topologySpread']);
  return {
    image: str(s['image'], defaultImage),
    imagePullPolicy: oneOf(s['imagePullPolicy'], ['Always', 'IfNotPresent', 'Never'], 'IfNotPresent'),
    gateway: {
      replicas: num(g['replicas'], 2),
      resources: resources(g['resources'], defaultResources.gateway),
      ports: { otlpHttp: num(ports['otlpHttp'], 4318), otlpGrpc: num(ports['otlpGrpc'], 4317) },
      serviceType: oneOf(g['serviceType'], ['ClusterIP', 'NodePort', 'LoadBalancer'], 'ClusterIP'),
      maxRequestBytes: num(g['maxRequestBytes'], 16 * 1024 * 1024),
      autoscaling: autoscaling(g['autoscaling']),
      wal: gatewayWal(g['wal']),
    },
    api: { replicas: num(a['replicas'], 2), resources: resources(a['resources'], defaultResources.api), autoscaling: autoscaling(a['autoscaling']) },
    topologySpread: {
      zone: oneOf(spread['zone'], spreadModes, 'ScheduleAnyway'),
      hostname: oneOf(spread['hostname'], spreadModes, 'ScheduleAnyway'),
      maxSkew: num(spread['maxSkew'], 1),
    },
    networkPolicy: { enabled: obj(s['networkPolicy'])['enabled'] === true },
    clickhouse: clickhouse(s['clickhouse']),
    apiKeys: {
      secretName: optStr(keys['secretName']),
      keysFileKey: str(keys['keysFileKey'], 'api-keys.json'),
      adminKeyKey: str(keys['adminKeyKey'], 'admin-key'),
    },
    retention: { logsDays: num(r['logsDays'], 30), tracesDays: num(r['tracesDays'], 30), metricsDays: num(r['metricsDays'], 90) },
    tenantDefaults: settingValuesOf(s['tenantDefaults']),
    tenantSync: { enabled: sync['enabled'] !== false, intervalSeconds: num(sync['intervalSeconds'], 60), apiUrl: optStr(sync['apiUrl']) },
    metrics: metricsEndpoint(s['metrics']),
  };
}

/** Reads a stack object as the API server returns it. */
export function stackFromObject(o: { metadata?: { name?: string; namespace?: string; uid?: string; generation?: number }; spec?: unknown }): Stack {
  const m = o.metadata ?? {};
  return {
    ref: { name: m.name ?? '', namespace: m.namespace ?? '', uid: m.uid ?? '', generation: m.generation ?? 0 },
    spec: normaliseStackSpec(o.spec),
  };
}

/** ClickHouse runs as a cluster (Replicated tables, Keeper) when it has more than one server. */
export function isClustered(m: ManagedClickHouse): boolean {
  return m.shards * m.replicas > 1;
}
