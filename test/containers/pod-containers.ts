// Turns the objects the operator generates for a stack (desiredObjects) into
// container definitions a Docker engine can run, so the testcontainers suites
// run the SAME images, commands, environment and ClickHouse/Keeper
// configuration files as the pods on Kubernetes, with no second copy:
// - one container per pod: StatefulSet ordinals (`<set>-<n>`), Deployment
//   replicas, the migrate Job;
// - env as the kubelet resolves it: values, `$(VAR)` references to earlier
//   variables, the pod name and namespace (downward API), Secret and ConfigMap keys;
// - ConfigMap and Secret volumes as files at their mount paths (subPath, items);
// - network aliases for the DNS names the pods are reached by: a StatefulSet
//   pod's `<pod>.<serviceName>.<ns>.svc`, and every Service selecting it
//   `<service>.<ns>.svc` (Docker answers a shared alias round-robin);
// - readiness as the probes say (HTTP GET path and port).
// Pure: no Docker here, unit-tested in test/unit/containers/.
import type { ConfigMap, Container, EnvVar, Manifest, PodSpec, Secret, Service, Volume } from '../../operator/desired/manifest-types.ts';

/** A file written into a container before it starts. */
export interface ContainerFile {
  readonly path: string;
  readonly content: string;
}

/** Everything needed to start one pod's main container with testcontainers. */
export interface ContainerDefinition {
  /** The pod's name (also the container's hostname). */
  readonly name: string;
  /** The workload the pod belongs to (`StatefulSet/x`, `Deployment/x`, `Job/x`). */
  readonly workload: string;
  /** `app.kubernetes.io/component` of the pod. */
  readonly component: string;
  readonly image: string;
  /** Replaces the image's ENTRYPOINT (Kubernetes `command`), when set. */
  readonly entrypoint?: readonly string[];
  /** Replaces the image's CMD (Kubernetes `args`), when set. */
  readonly command?: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly files: readonly ContainerFile[];
  /** Mount paths of emptyDir volumes: writable scratch (a tmpfs in Docker). */
  readonly emptyDirs: readonly string[];
  readonly aliases: readonly string[];
  readonly ports: readonly number[];
  /** The readiness probe as an HTTP GET, if the pod has one. */
  readonly ready?: { readonly path: string; readonly port: number };
  /** `securityContext.runAsUser[:runAsGroup]`, when set. */
  readonly user?: string;
  /** True for a Job's pod: it runs to completion. */
  readonly runsToCompletion: boolean;
}

export interface TranslateOptions {
  /** Image references to replace (the stack's Tenantry image → the one testcontainers built from the Dockerfile). */
  readonly images?: Readonly<Record<string, string>>;
}

type Kind<K extends string> = Manifest & { readonly kind: K };

const decode = (value: string): string => Buffer.from(value, 'base64').toString('utf8');

/** A Secret's keys as text (data is base64, stringData is plain). */
function secretValues(secret: Secret): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.data ?? {})) out[k] = decode(v);
  for (const [k, v] of Object.entries(secret.stringData ?? {})) out[k] = v;
  return out;
}

/** The object of `kind` named `name`, or throws naming it (an operator output the test cannot resolve is a bug). */
function find(objects: readonly Manifest[], kind: string, name: string): Manifest {
  const o = objects.find((x) => x.kind === kind && x.metadata?.name === name);
  if (o === undefined) throw new Error(`no ${kind}/${name} among the operator's objects`);
  return o;
}
const findSecret = (objects: readonly Manifest[], name: string): Secret => find(objects, 'Secret', name);
const findConfigMap = (objects: readonly Manifest[], name: string): ConfigMap => find(objects, 'ConfigMap', name);

/** Kubernetes' `$(VAR)` expansion against the variables defined so far (`$$` escapes). */
export function expandReferences(value: string, defined: Readonly<Record<string, string>>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (match, name: string | undefined) => {
    if (name === undefined) return '$';
    return defined[name] ?? match;
  });
}

/** A container's environment as the kubelet builds it for the pod `podName`. */
export function resolveEnv(
  env: readonly EnvVar[],
  objects: readonly Manifest[],
  pod: { readonly name: string; readonly namespace: string },
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of env) {
    if (e.value !== undefined) {
      out[e.name] = expandReferences(e.value, out);
      continue;
    }
    const from = e.valueFrom;
    if (from?.fieldRef !== undefined) {
      const field = from.fieldRef.fieldPath;
      if (field === 'metadata.name') out[e.name] = pod.name;
      else if (field === 'metadata.namespace') out[e.name] = pod.namespace;
      else throw new Error(`env ${e.name}: field ${field} is not resolved here`);
    } else if (from?.secretKeyRef !== undefined) {
      const ref = from.secretKeyRef;
      const value = secretValues(findSecret(objects, ref.name ?? ''))[ref.key];
      if (value === undefined) throw new Error(`env ${e.name}: Secret ${ref.name ?? ''} has no key ${ref.key}`);
      out[e.name] = value;
    } else if (from?.configMapKeyRef !== undefined) {
      const ref = from.configMapKeyRef;
      const value = findConfigMap(objects, ref.name ?? '').data?.[ref.key];
      if (value === undefined) throw new Error(`env ${e.name}: ConfigMap ${ref.name ?? ''} has no key ${ref.key}`);
      out[e.name] = value;
    } else {
      out[e.name] = '';
    }
  }
  return out;
}

/** The key → text of a ConfigMap or Secret volume, or undefined for other volumes (emptyDir, claims). */
function volumeData(
  volume: Volume,
  objects: readonly Manifest[],
): { keys: Record<string, string>; items: ReadonlyArray<{ key: string; path: string }> | undefined } | undefined {
  if (volume.configMap !== undefined) {
    return { keys: { ...(findConfigMap(objects, volume.configMap.name ?? '').data ?? {}) }, items: volume.configMap.items };
  }
  if (volume.secret !== undefined) {
    return { keys: secretValues(findSecret(objects, volume.secret.secretName ?? '')), items: volume.secret.items };
  }
  return undefined;
}

/** The files a container sees from its ConfigMap and Secret volume mounts. */
export function mountedFiles(container: Container, volumes: readonly Volume[], objects: readonly Manifest[]): ContainerFile[] {
  return (container.volumeMounts ?? []).flatMap((mount) => {
    const volume = volumes.find((v) => v.name === mount.name);
    const data = volume === undefined ? undefined : volumeData(volume, objects);
    if (data === undefined) return [];
    const entries = data.items?.map((i) => ({ key: i.key, path: i.path })) ?? Object.keys(data.keys).map((key) => ({ key, path: key }));
    if (mount.subPath !== undefined && mount.subPath !== '') {
      const entry = entries.find((e) => e.path === mount.subPath);
      const content = entry === undefined ? undefined : data.keys[entry.key];
      if (content === undefined) throw new Error(`mount ${mount.mountPath}: no ${mount.subPath} in volume ${mount.name}`);
      return [{ path: mount.mountPath, content }];
    }
    return entries.flatMap((e) => {
      const content = data.keys[e.key];
      return content === undefined ? [] : [{ path: `${mount.mountPath.replace(/\/$/, '')}/${e.path}`, content }];
    });
  });
}

/** Whether a Service's selector picks pods with these labels. */
function selects(service: Service, labels: Readonly<Record<string, string>>): boolean {
  const selector = service.spec?.selector;
  if (selector === undefined || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** A container port by number or by name. */
function portNumber(container: Container, port: number | string): number {
  if (typeof port === 'number') return port;
  const named = container.ports?.find((p) => p.name === port)?.containerPort;
  if (named === undefined) throw new Error(`container ${container.name}: no port named ${port}`);
  return named;
}

interface PodSource {
  readonly workload: string;
  readonly podNames: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly spec: PodSpec;
  readonly headless?: string;
  /** A StatefulSet's volume claim templates: a pod mounts its own claim by the template's name. */
  readonly claims?: readonly string[];
  readonly runsToCompletion: boolean;
}

/** Every pod the workloads among `objects` would run. */
function podSources(objects: readonly Manifest[]): PodSource[] {
  return objects.flatMap((o): PodSource[] => {
    const name = o.metadata?.name ?? '';
    if (o.kind === 'StatefulSet') {
      const s = o as Kind<'StatefulSet'> & {
        spec: {
          replicas?: number;
          serviceName?: string;
          template: { metadata?: { labels?: Record<string, string> }; spec: PodSpec };
          volumeClaimTemplates?: { metadata?: { name?: string } }[];
        };
      };
      const replicas = s.spec.replicas ?? 1;
      return [
        {
          workload: `StatefulSet/${name}`,
          podNames: Array.from({ length: replicas }, (_, i) => `${name}-${i}`),
          labels: s.spec.template.metadata?.labels ?? {},
          spec: s.spec.template.spec,
          headless: s.spec.serviceName,
          claims: (s.spec.volumeClaimTemplates ?? []).map((t) => t.metadata?.name ?? ''),
          runsToCompletion: false,
        },
      ];
    }
    if (o.kind === 'Deployment' || o.kind === 'Job') {
      const d = o as Manifest & { spec: { replicas?: number; template: { metadata?: { labels?: Record<string, string> }; spec: PodSpec } } };
      const replicas = o.kind === 'Job' ? 1 : (d.spec.replicas ?? 1);
      return [
        {
          workload: `${o.kind}/${name}`,
          podNames: Array.from({ length: replicas }, (_, i) => (o.kind === 'Job' ? name : `${name}-${i}`)),
          labels: d.spec.template.metadata?.labels ?? {},
          spec: d.spec.template.spec,
          runsToCompletion: o.kind === 'Job',
        },
      ];
    }
    return [];
  });
}

/** The container definitions of every pod the operator's objects would run, in the objects' order. */
export function containersOf(objects: readonly Manifest[], options: TranslateOptions = {}): ContainerDefinition[] {
  const services = objects.filter((o): o is Service & Manifest => o.kind === 'Service') as Service[];
  return podSources(objects).flatMap((source) =>
    source.podNames.map((podName) => {
      const main = source.spec.containers[0];
      if (main === undefined) throw new Error(`${source.workload}: no container`);
      const namespace = objects.find((o) => `${o.kind ?? ''}/${o.metadata?.name ?? ''}` === source.workload)?.metadata?.namespace ?? 'default';
      const env = resolveEnv(main.env ?? [], objects, { name: podName, namespace });
      const expand = (args: readonly string[] | undefined): string[] | undefined => args?.map((a) => expandReferences(a, env));
      const serviceAliases = services
        .filter((s) => selects(s, source.labels))
        .flatMap((s) => [`${s.metadata?.name ?? ''}.${namespace}.svc`, s.metadata?.name ?? '']);
      const podAliases = source.headless === undefined ? [] : [`${podName}.${source.headless}.${namespace}.svc`, `${podName}.${source.headless}`];
      const probe = main.readinessProbe?.httpGet;
      const security = main.securityContext;
      const entrypoint = expand(main.command);
      const command = expand(main.args);
      const image = main.image ?? '';
      return {
        name: podName,
        workload: source.workload,
        component: source.labels['app.kubernetes.io/component'] ?? '',
        image: options.images?.[image] ?? image,
        ...(entrypoint === undefined ? {} : { entrypoint }),
        ...(command === undefined ? {} : { command }),
        env,
        files: mountedFiles(main, source.spec.volumes ?? [], objects),
        // A claim is writable scratch too: in Docker the container's own directory (no node to lose).
        emptyDirs: (main.volumeMounts ?? [])
          .filter((m) => source.spec.volumes?.find((v) => v.name === m.name)?.emptyDir !== undefined || source.claims?.includes(m.name) === true)
          .map((m) => m.mountPath),
        aliases: [...podAliases, ...serviceAliases],
        ports: (main.ports ?? []).map((p) => p.containerPort),
        ...(probe === undefined ? {} : { ready: { path: probe.path ?? '/', port: portNumber(main, probe.port) } }),
        ...(security?.runAsUser === undefined
          ? {}
          : { user: security.runAsGroup === undefined ? String(security.runAsUser) : `${security.runAsUser}:${security.runAsGroup}` }),
        runsToCompletion: source.runsToCompletion,
      };
    }),
  );
}
