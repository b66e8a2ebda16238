// Spawns `node src/cli.ts all` on a data directory, as a user would run it,
// and reads that directory back with a separate process once it has stopped
// (libchdb allows one data directory per process, and this test process
// already holds one).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(import.meta.dirname, '..', '..', '..', '..');
export const processKey = 'process-test-key-0123456789';

export interface TenantryProcess {
  readonly child: ChildProcess;
  readonly httpUrl: string;
  readonly grpcUrl: string;
  /** Resolves with the exit code or signal. */
  readonly exited: Promise<number | NodeJS.Signals | null>;
  output(): string;
}

export async function startTenantry(dataDir: string, env: Record<string, string> = {}): Promise<TenantryProcess> {
  const child = spawn(process.execPath, [join(root, 'src', 'cli.ts'), 'all'], {
    cwd: root,
    env: {
      ...process.env,
      TENANTRY_DATA_DIR: dataDir, TENANTRY_HOST: '127.0.0.1', TENANTRY_OTLP_HTTP_PORT: '0', TENANTRY_OTLP_GRPC_PORT: '0', TENANTRY_API_PORT: '0',
      TENANTRY_API_KEYS: JSON.stringify([{ key: processKey, scopes: ['ingest', 'read', 'admin'], tenants: ['*'] }]),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => { child.once('exit', (code, signal) => { resolve(code ?? signal); }); });
  const ports = await new Promise<{ otlpHttp: number; otlpGrpc: number }>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      for (const line of out.split('\n')) {
        if (!line.includes('"tenantry started"')) continue;
        const parsed = JSON.parse(line) as { ports: { otlpHttp: number; otlpGrpc: number } };
        resolve(parsed.ports);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    void exited.then((code) => { reject(new Error(`tenantry exited (${String(code)}) before starting:\n${out}`)); });
  });
  return { child, httpUrl: `http://127.0.0.1:${ports.otlpHttp}`, grpcUrl: `http://127.0.0.1:${ports.otlpGrpc}`, exited, output: () => out };
}

/** Runs a query against a stopped process's data directory, in a child process. */
export async function queryDataDir<T>(dataDir: string, sql: string): Promise<T[]> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(import.meta.dirname, 'read-data-dir.ts'), dataDir, sql], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as T[];
}

/** The process's resident memory in bytes, from its /metrics. */
export async function residentBytes(httpUrl: string): Promise<number> {
  const text = await (await fetch(`${httpUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('tenantry_process_resident_memory_bytes '));
  return Number(line?.split(' ')[1]);
}
