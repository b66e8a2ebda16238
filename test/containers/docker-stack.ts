// Runs container definitions (pod-containers.ts) on a Docker engine with
// testcontainers: one network per stack, each pod a container with its
// hostname, DNS aliases, files, scratch tmpfs, user, command and readiness
// probe; Tenantry's own image built from the Dockerfile. Used by the suites
// in this folder; nothing here runs without a Docker engine.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { StartedNetwork, StartedTestContainer } from 'testcontainers';
import { GenericContainer, getContainerRuntimeClient, Network, Wait } from 'testcontainers';
import type { ContainerDefinition } from './pod-containers.ts';

const repo = join(import.meta.dirname, '..', '..');

/** The tag the suites build the project's image under. */
export const tenantryImage = 'tenantry-under-test:containers';

/** A Docker engine testcontainers can reach, or the sentence saying why not (the suites' one allowed skip). */
export async function dockerEngine(): Promise<{ readonly ok: true } | { readonly ok: false; readonly reason: string }> {
  try {
    // Throws when no strategy (DOCKER_HOST, the socket, a Testcontainers config) finds a working engine.
    await getContainerRuntimeClient();
    return { ok: true };
  } catch (error) {
    const why = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
    return { ok: false, reason: `no Docker engine reachable (${why}); start one (or set DOCKER_HOST), then: npm run test:containers` };
  }
}

/** Builds the project's image from its Dockerfile (Docker's layer cache makes a rebuild quick). */
export async function buildTenantryImage(): Promise<string> {
  await GenericContainer.fromDockerfile(repo).withCache(true).build(tenantryImage, { deleteOnExit: false });
  return tenantryImage;
}

/** Fresh random text for keys and passwords. */
export const randomText = (): string => randomBytes(12).toString('hex');

/** The testcontainers form of one definition on `network`. */
export function containerOf(def: ContainerDefinition, network: StartedNetwork): GenericContainer {
  let c = new GenericContainer(def.image)
    .withHostname(def.name)
    .withNetwork(network)
    .withNetworkAliases(...def.aliases)
    .withEnvironment({ ...def.env })
    .withExposedPorts(...def.ports)
    .withStartupTimeout(240_000)
    .withCopyContentToContainer(def.files.map((f) => ({ content: f.content, target: f.path, mode: 0o644 })));
  if (def.emptyDirs.length > 0) c = c.withTmpFs(Object.fromEntries(def.emptyDirs.map((d) => [d, 'rw,mode=1777'])));
  if (def.entrypoint !== undefined) c = c.withEntrypoint([...def.entrypoint]);
  if (def.command !== undefined) c = c.withCommand([...def.command]);
  if (def.user !== undefined) c = c.withUser(def.user);
  if (def.runsToCompletion) return c.withWaitStrategy(Wait.forOneShotStartup());
  return c.withWaitStrategy(def.ready === undefined ? Wait.forListeningPorts() : Wait.forHttp(def.ready.path, def.ready.port).forStatusCode(200));
}

/** A running stack: its containers by pod name and ways to reach and disturb them. */
export interface RunningStack {
  readonly network: StartedNetwork;
  readonly containers: Map<string, StartedTestContainer>;
  /** Starts definitions (all at once: a Keeper ensemble needs its peers to become ready). */
  start(defs: readonly ContainerDefinition[]): Promise<void>;
  /** Runs a Job's pod to completion and returns its log. */
  runToCompletion(def: ContainerDefinition): Promise<string>;
  url(name: string, port: number, scheme?: string): string;
  stop(): Promise<void>;
}

/** A network for one stack; containers are added with start(). */
export async function runningStack(): Promise<RunningStack> {
  const network = await new Network().start();
  const containers = new Map<string, StartedTestContainer>();
  return {
    network,
    containers,
    start: async (defs) => {
      const started = await Promise.all(defs.map(async (d) => [d.name, await containerOf(d, network).start()] as const));
      for (const [name, c] of started) containers.set(name, c);
    },
    runToCompletion: async (def) => {
      const c = await containerOf({ ...def, runsToCompletion: true }, network).start();
      const chunks: string[] = [];
      const stream = await c.logs();
      await new Promise<void>((resolve) => {
        stream
          .on('data', (d: Buffer | string) => chunks.push(d.toString()))
          .on('end', () => {
            resolve();
          });
      });
      await c.stop();
      return chunks.join('');
    },
    url: (name, port, scheme = 'http') => {
      const c = containers.get(name);
      if (c === undefined) throw new Error(`no container ${name}`);
      return `${scheme}://${c.getHost()}:${c.getMappedPort(port)}`;
    },
    stop: async () => {
      await Promise.all([...containers.values()].map((c) => c.stop({ timeout: 5_000 })));
      containers.clear();
      await network.stop();
    },
  };
}
