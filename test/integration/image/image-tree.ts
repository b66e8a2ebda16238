// Builds the container image's file tree without a Docker engine: every stage
// of the Dockerfile runs in a directory standing for its root filesystem
// (COPY from the build context honouring .dockerignore, COPY --from another
// stage, RUN through `sh` with this machine's Node 24 and npm cache). Cached
// under ~/.cache/tenantry/image-tree: each stage's dependency install (its
// first RUN) by the hash of everything before it (package.json, the
// lockfile), and the finished tree by the hash of every input.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import type { Stage } from './dockerfile-stages.ts';
import { ignoredByDockerignore, localRunCommand, parseCopy, parseDockerfile, parseDockerignore } from './dockerfile-stages.ts';

/** The runtime stage's tree: its root directory and what the image runs with. */
export interface ImageTree {
  /** Directory standing for the last stage's `/`. */
  readonly root: string;
  readonly workdir: string;
  readonly env: Readonly<Record<string, string>>;
  /** `USER`, as uid:gid. */
  readonly user: string;
  readonly entrypoint: readonly string[];
}

const cacheRoot = join(process.env['IMAGE_TREE_CACHE'] ?? join(homedir(), '.cache', 'tenantry', 'image-tree'));

/** Context-relative files a COPY source names, .dockerignore applied. */
function contextFiles(context: string, source: string, ignore: readonly string[]): string[] {
  const full = join(context, source);
  if (ignoredByDockerignore(source, ignore) || !existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [source];
  return readdirSync(full)
    .sort()
    .flatMap((name) => contextFiles(context, `${source}/${name}`, ignore));
}

/** Hash of the Dockerfile, .dockerignore, every context file a COPY reads, and the Node that runs the RUNs. */
function inputsHash(context: string, stages: readonly Stage[], ignore: readonly string[]): string {
  const h = createHash('sha256')
    .update(process.version)
    .update(readFileSync(join(context, 'Dockerfile')));
  for (const s of stages) {
    for (const i of s.instructions) {
      if (i.keyword !== 'COPY') continue;
      const copy = parseCopy(i.args);
      if (copy.from !== undefined) continue;
      for (const src of copy.sources)
        for (const f of contextFiles(context, src.replace(/^\.\//, ''), ignore)) h.update(f).update(readFileSync(join(context, f)));
    }
  }
  return h.digest('hex').slice(0, 16);
}

/** A directory's path inside a stage root (`/app` in root → root/app). */
const inRoot = (root: string, path: string): string => join(root, path);

/** Builds (or reuses) the tree; `say` prints progress. */
export function buildImageTree(context: string, say: (line: string) => void): ImageTree {
  const stages = parseDockerfile(readFileSync(join(context, 'Dockerfile'), 'utf8'));
  const ignore = parseDockerignore(readFileSync(join(context, '.dockerignore'), 'utf8'));
  const last = stages.at(-1);
  if (last === undefined) throw new Error('Dockerfile has no stage');
  const key = inputsHash(context, stages, ignore);
  const done = join(cacheRoot, `tree-${key}`);
  const tree = describe(last, join(done, last.name));
  if (existsSync(join(done, 'complete'))) {
    say(`image tree: cached (${done})`);
    return tree;
  }
  const started = Date.now();
  const work = `${done}.building-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  for (const stage of stages) runStage(context, stage, work, ignore, say);
  writeFileSync(join(work, 'complete'), new Date().toISOString());
  // Finished trees of other inputs go; trees being built by other processes (`.building-<pid>`) stay.
  for (const old of readdirSync(cacheRoot))
    if (/^tree-[0-9a-f]{16}$/.test(old) && join(cacheRoot, old) !== done) rmSync(join(cacheRoot, old), { recursive: true, force: true });
  if (existsSync(join(done, 'complete'))) rmSync(work, { recursive: true, force: true });
  else renameSync(work, done);
  say(`image tree: built in ${((Date.now() - started) / 1000).toFixed(0)} s (${done})`);
  return tree;
}

/** What the image runs with, read from a stage's instructions. */
function describe(stage: Stage, root: string): ImageTree {
  let workdir = '/';
  let user = '0:0';
  let entrypoint: string[] = [];
  const env: Record<string, string> = {};
  for (const i of stage.instructions) {
    if (i.keyword === 'WORKDIR') workdir = i.args;
    if (i.keyword === 'USER') user = i.args;
    if (i.keyword === 'ENTRYPOINT') entrypoint = JSON.parse(i.args) as string[];
    if (i.keyword === 'ENV') for (const [k, v] of i.args.split(' ').map((kv) => kv.split('='))) if (k !== undefined && v !== undefined) env[k] = v;
  }
  return { root, workdir, env, user, entrypoint };
}

/** Runs one stage's instructions in `work`/<stage name>. */
function runStage(context: string, stage: Stage, work: string, ignore: readonly string[], say: (line: string) => void): void {
  const root = join(work, stage.name);
  mkdirSync(root, { recursive: true });
  let workdir = '/';
  const env: Record<string, string> = {};
  const layer = createHash('sha256').update(process.version).update(stage.base);
  let firstRun = true;
  for (const i of stage.instructions) {
    layer.update(`${i.keyword} ${i.args}\n`);
    if (i.keyword === 'WORKDIR') {
      workdir = i.args;
      mkdirSync(inRoot(root, workdir), { recursive: true });
    }
    if (i.keyword === 'ENV') for (const [k, v] of i.args.split(' ').map((kv) => kv.split('='))) if (k !== undefined && v !== undefined) env[k] = v;
    if (i.keyword === 'COPY') {
      const copy = parseCopy(i.args);
      const dest = copy.dest.startsWith('/') ? inRoot(root, copy.dest) : join(inRoot(root, workdir), copy.dest);
      for (const src of copy.sources) {
        if (copy.from !== undefined) {
          cpSync(inRoot(join(work, copy.from), src), dest, { recursive: true });
          continue;
        }
        const base = src.replace(/^\.\//, '');
        const files = contextFiles(context, base, ignore);
        const isDir = statSync(join(context, base)).isDirectory();
        for (const f of files) {
          const target = isDir ? join(dest, relative(base, f)) : copy.dest.endsWith('/') ? join(dest, f.split('/').pop() ?? f) : dest;
          mkdirSync(dirname(target), { recursive: true });
          cpSync(join(context, f), target);
          layer.update(f).update(readFileSync(join(context, f)));
        }
      }
    }
    if (i.keyword === 'RUN') {
      const cwd = inRoot(root, workdir);
      const cached = join(cacheRoot, `layer-${stage.name}-${layer.copy().digest('hex').slice(0, 16)}`);
      if (firstRun && existsSync(join(cached, 'complete'))) {
        say(`image tree: ${stage.name}: RUN ${i.args.slice(0, 60)}… cached`);
        rmSync(root, { recursive: true, force: true });
        execFileSync('cp', ['-al', join(cached, 'root'), root]);
      } else {
        const started = Date.now();
        say(`image tree: ${stage.name}: RUN ${i.args.slice(0, 100)}`);
        const path = `${dirname(process.execPath)}:${process.env['PATH'] ?? '/usr/bin:/bin'}`;
        const run = spawnSync('sh', ['-c', localRunCommand(i.args, root)], { cwd, env: { ...process.env, ...env, PATH: path }, encoding: 'utf8' });
        if (run.status !== 0)
          throw new Error(`image tree: ${stage.name}: RUN ${i.args} failed (${run.status ?? run.signal}):\n${`${run.stdout}\n${run.stderr}`.slice(-4000)}`);
        say(`image tree: ${stage.name}: done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
        if (firstRun) {
          for (const old of readdirSync(cacheRoot)) if (old.startsWith(`layer-${stage.name}-`)) rmSync(join(cacheRoot, old), { recursive: true, force: true });
          mkdirSync(cached, { recursive: true });
          execFileSync('cp', ['-al', root, join(cached, 'root')]);
          writeFileSync(join(cached, 'complete'), '');
        }
      }
      firstRun = false;
    }
  }
}
