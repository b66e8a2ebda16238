// Target `all` with a full-scope key, for the gateway's process tests, on top
// of the shared spawner; reads a data directory back with a separate process
// once it has stopped (libchdb allows one data directory per process, and
// this test process already holds one).
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTenantry as spawnTenantry, testEnvironment } from '../../../../support/tenantry-process.ts';

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
  const p = spawnTenantry(
    ['all'],
    testEnvironment(dataDir, {
      TENANTRY_API_KEYS: JSON.stringify([{ key: processKey, scopes: ['ingest', 'read', 'admin'], tenants: ['*'] }]),
      ...env,
    }),
  );
  const ports = await p.started();
  return {
    child: p.child,
    httpUrl: `http://127.0.0.1:${ports['otlpHttp'] ?? 0}`,
    grpcUrl: `http://127.0.0.1:${ports['otlpGrpc'] ?? 0}`,
    exited: p.exited,
    output: () => p.lines.map((l) => JSON.stringify(l)).join('\n') + p.stderr(),
  };
}

/** Runs a query against a stopped process's data directory, in a child process. */
export async function queryDataDir<T>(dataDir: string, sql: string): Promise<T[]> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(import.meta.dirname, 'read-data-dir.ts'), dataDir, sql], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout) as T[];
}

/** The process's resident memory in bytes, from its /metrics. */
export async function residentBytes(httpUrl: string): Promise<number> {
  const text = await (await fetch(`${httpUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('tenantry_process_resident_memory_bytes '));
  return Number(line?.split(' ')[1]);
}
