// Spawns the real CLI (`node src/cli.ts <target>`) as a user would run it,
// collects its JSON log lines, and waits for readiness.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { nodeFlags } from '../src/target/node-flags.ts';

const cli = join(import.meta.dirname, '..', 'src', 'cli.ts');

export interface TenantryProcess {
  readonly child: ChildProcess;
  /** Parsed JSON log lines so far (stdout). */
  readonly lines: Record<string, unknown>[];
  /** Raw stderr so far. */
  stderr(): string;
  /** Resolves with the exit code, or the signal that ended the process. */
  readonly exited: Promise<number | NodeJS.Signals | null>;
  /** Resolves with the first log line that satisfies `match`, or rejects after `timeoutMs`. */
  waitForLine(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Waits for "tenantry started" and returns its ports. */
  started(timeoutMs?: number): Promise<Record<string, number>>;
  stop(signal?: NodeJS.Signals): Promise<number | NodeJS.Signals | null>;
}

/** Environment for a test process: ports 0 on loopback, the given data dir, nothing inherited that configures Tenantry. */
export function testEnvironment(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TENANTRY_')) env[k] = v;
  return {
    ...env,
    TENANTRY_HOST: '127.0.0.1',
    TENANTRY_DATA_DIR: dataDir,
    TENANTRY_OTLP_HTTP_PORT: '0',
    TENANTRY_OTLP_GRPC_PORT: '0',
    TENANTRY_API_PORT: '0',
    ...extra,
  };
}

export function startTenantry(args: readonly string[], env: Record<string, string>): TenantryProcess {
  const child = spawn(process.execPath, [...nodeFlags, cli, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: Record<string, unknown>[] = [];
  const waiters: Array<{ match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }> = [];
  let buffered = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        line = { unparsed: text };
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
    stderr += chunk;
  });
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve(code ?? signal);
    });
  });

  const waitForLine = (match: (l: Record<string, unknown>) => boolean, timeoutMs = 30_000): Promise<Record<string, unknown>> => {
    const seen = lines.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no matching log line within ${timeoutMs} ms; stdout: ${JSON.stringify(lines)} stderr: ${stderr}`));
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
        reject(new Error(`process exited (${code}) before the line; stdout: ${JSON.stringify(lines)} stderr: ${stderr}`));
      });
    });
  };

  return {
    child,
    lines,
    exited,
    waitForLine,
    stderr: () => stderr,
    started: async (timeoutMs) => (await waitForLine((l) => l['msg'] === 'tenantry started', timeoutMs))['ports'] as Record<string, number>,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
