// Reads the project's Dockerfile into its stages and instructions, and turns
// each instruction into a step that can run without a Docker engine in a
// directory standing for the stage's root filesystem. The image test
// (image-contents.test.ts) reproduces the image this way, so a change to the
// Dockerfile changes what the test builds.
import { dirname, posix, relative } from 'node:path';

/** One Dockerfile instruction: its keyword (upper case) and the rest of its line(s). */
export interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** A stage: its name (`FROM image AS name`), base image, and instructions after FROM. */
export interface Stage {
  readonly name: string;
  readonly base: string;
  readonly instructions: readonly Instruction[];
}

/** The stages of a Dockerfile, comments and line continuations resolved. */
export function parseDockerfile(text: string): Stage[] {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const stages: Array<{ name: string; base: string; instructions: Instruction[] }> = [];
  for (const line of logical) {
    const m = /^(\S+)\s*(.*)$/.exec(line);
    if (m === null) continue;
    const keyword = (m[1] ?? '').toUpperCase();
    const args = (m[2] ?? '').replace(/\s+/g, ' ').trim();
    if (keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (from === null) throw new Error(`Dockerfile: cannot read FROM ${args}`);
      stages.push({ name: from[2] ?? `stage${stages.length}`, base: from[1] ?? '', instructions: [] });
      continue;
    }
    const current = stages.at(-1);
    if (current === undefined) throw new Error(`Dockerfile: ${keyword} before FROM`);
    current.instructions.push({ keyword, args });
  }
  return stages;
}

/** A COPY: sources (context-relative, or paths in the stage `from`) and destination. */
export interface Copy {
  readonly from?: string;
  readonly sources: readonly string[];
  readonly dest: string;
}

/** The parts of a COPY instruction's arguments. */
export function parseCopy(args: string): Copy {
  const words = args.split(' ');
  const fromFlag = words[0]?.startsWith('--from=') === true ? words.shift()?.slice('--from='.length) : undefined;
  const dest = words.pop();
  if (dest === undefined || words.length === 0) throw new Error(`Dockerfile: cannot read COPY ${args}`);
  return fromFlag === undefined ? { sources: words, dest } : { from: fromFlag, sources: words, dest };
}

/** Whether a context-relative path is excluded by .dockerignore patterns (plain paths and `*.ext`). */
export function ignoredByDockerignore(path: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => {
    if (p.startsWith('*.')) return path.endsWith(p.slice(1));
    return path === p || path.startsWith(`${p}/`);
  });
}

/** The patterns of a .dockerignore file. */
export function parseDockerignore(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

/**
 * A RUN command as it runs here, in `root` (the directory standing for the
 * stage's `/`), on this machine's npm cache:
 * - `npm cache clean --force` is dropped: it shrinks the image's layer, and
 *   here it would empty the machine's npm cache;
 * - `npm install` prefers the npm cache (offline where it can);
 * - `ln -s /abs/target /abs/link` links relatively inside `root`, so the tree
 *   works wherever it is mounted;
 * - any other absolute path is taken inside `root`.
 */
export function localRunCommand(command: string, root: string): string {
  return command
    .split('&&')
    .map((part) => part.trim())
    .filter((part) => !/^npm cache clean\b/.test(part))
    .map((part) => {
      const link = /^ln -s (\/\S+) (\/\S+)$/.exec(part);
      if (link !== null) {
        const target = link[1] ?? '';
        const at = link[2] ?? '';
        return `mkdir -p ${root}${posix.dirname(at)} && ln -sfn ${relative(dirname(at), target)} ${root}${at}`;
      }
      const rooted = part.replace(/(^|\s)(\/[\w./-]+)/g, (_m, space: string, path: string) => `${space}${root}${path}`);
      return /^npm install\b/.test(rooted) ? rooted.replace(/^npm install\b/, 'npm install --prefer-offline') : rooted;
    })
    .join(' && ');
}
