// Runs a target from the image's tree (image-tree.ts) the way the image runs
// it: through its ENTRYPOINT (`tenantry`, the CLI's shebang naming node), in
// its WORKDIR, as its USER (uid 1000), with the tree mounted read-only and
// nothing of this machine's environment but PATH. As root this takes a
// private mount namespace (`unshare`) holding a read-only bind mount of the
// tree and drops to the image's uid with `setpriv`; elsewhere it runs as the
// current user and says so.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ImageTree } from './image-tree.ts';

/** A running target: its JSON log lines, a wait for one, and its exit. */
export interface ImageProcess {
  readonly child: ChildProcess;
  readonly lines: Array<Record<string, unknown>>;
  readonly exited: Promise<number | string | null>;
  waitForLine(match: (line: Record<string, unknown>) => boolean, timeoutMs: number): Promise<Record<string, unknown>>;
  output(): string;
}

/** Whether this process can mount and switch users (root), or why not. */
export function isolation(): { readonly ok: true } | { readonly ok: false; readonly reason: string } {
  return process.getuid?.() === 0
    ? { ok: true }
    : { ok: false, reason: 'not root: runs as the current user on a writable tree (no mount namespace, no uid switch)' };
}

/** The command line that runs `args` from the tree; `mountPoint` is where the tree appears. */
export function imageCommand(tree: ImageTree, mountPoint: string, args: readonly string[], asRoot: boolean): { command: string; args: string[]; cwd: string } {
  const [uid, gid] = tree.user.split(':');
  const entry = [...tree.entrypoint, ...args];
  if (!asRoot) return { command: entry[0] ?? 'tenantry', args: entry.slice(1), cwd: join(tree.root, tree.workdir) };
  // $0 tree, $1 mount point, $2 workdir, $3 uid, $4 gid, then the entrypoint and its arguments.
  const script =
    'u=$3 g=$4; mount --bind "$0" "$1" && mount -o remount,bind,ro "$1" && cd "$1$2" && shift 4 && ' +
    'exec setpriv --reuid="$u" --regid="$g" --clear-groups --inh-caps=-all -- "$@"';
  return {
    command: 'unshare',
    args: ['--mount', '--propagation', 'private', '--', 'sh', '-c', script, tree.root, mountPoint, tree.workdir, uid ?? '1000', gid ?? uid ?? '1000', ...entry],
    cwd: '/',
  };
}

/** Starts `args` (a target and flags) from the tree with only `env` (plus PATH and the image's ENV). */
export function startFromImage(tree: ImageTree, args: readonly string[], env: Record<string, string>): ImageProcess {
  const asRoot = isolation().ok;
  const mountPoint = asRoot ? mkdtempSync(join(tmpdir(), 'tenantry-image-')) : tree.root;
  if (asRoot) chmodSync(mountPoint, 0o755);
  const bin = join(mountPoint, 'usr', 'local', 'bin');
  const path = `${dirname(process.execPath)}:${bin}:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin`;
  const cmd = imageCommand(tree, mountPoint, args, asRoot);
  const child = spawn(cmd.command, cmd.args, {
    cwd: cmd.cwd,
    env: { PATH: path, HOME: '/nonexistent', ...tree.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, unknown>> = [];
  const waiters: Array<{ match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }> = [];
  let text = '';
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const raw = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        line = { unparsed: raw };
      }
      lines.push(line);
      for (const w of [...waiters])
        if (w.match(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
  });
  const exited = new Promise<number | string | null>((resolve) => {
    child.once('exit', (code, signal) => {
      // The mount lived in the process's own namespace: the mount point is an empty folder again.
      if (asRoot) rmdirSync(mountPoint);
      resolve(code ?? signal);
    });
  });
  return {
    child,
    lines,
    exited,
    output: () => text,
    waitForLine: (match, timeoutMs) => {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(new Error(`no matching log line within ${timeoutMs} ms:\n${text}`));
        }, timeoutMs);
        waiters.push({
          match,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
        });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`exited (${code}) before the line:\n${text}`));
        });
      });
    },
  };
}
