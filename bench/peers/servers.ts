// Starts and stops the three systems bench:peers compares, each as a user
// would run it on one machine: Tenantry `all` (embedded ClickHouse), Loki and
// Tempo single binaries with filesystem storage and multi-tenancy on. All
// listen on 127.0.0.1 only, on free ports, with their data in one temp dir.
// ../shared/LOKI-TEMPO.md records why each setting is there.
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { nodeFlags } from '../../src/target/node-flags.ts';

export type SystemName = 'loki' | 'tempo' | 'tenantry';

export interface RunningServer extends BaseServer { readonly name: SystemName }

import type { RunningServer as BaseServer } from '../../test/support/server-process.ts';
import { stopper, tailOf } from '../../test/support/server-process.ts';
export { freePort, spawnReady } from '../../test/support/server-process.ts';
export type { LokiServer as Loki } from '../../test/peers/loki-server.ts';
export { startLoki } from '../../test/peers/loki-server.ts';
export type { Tempo } from '../../test/peers/tempo-server.ts';
export { startTempo } from '../../test/peers/tempo-server.ts';
export interface Tenantry extends RunningServer { readonly name: 'tenantry'; readonly otlpUrl: string; readonly apiUrl: string; readonly key: string }

/** The checkout whose Tenantry this bench runs: this one unless told otherwise. */
export const defaultTenantryRoot = join(import.meta.dirname, '..', '..');

/**
 * Tenantry `all` as `npm start` runs it (`node src/cli.ts all` of the checkout at `root`),
 * embedded ClickHouse in `dir`, ports 0, one API key for ingest and read, no TENANTRY_*
 * variable inherited (BENCH_TENANTRY_* ones are passed on without their prefix).
 */
export async function startTenantryAll(root: string, dir: string, timeoutMs = 180_000): Promise<Tenantry> {
  mkdirSync(dir, { recursive: true });
  const key = 'bench-peers-key-0123456789abcdef';
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('TENANTRY_')) env[k] = v;
  // BENCH_TENANTRY_X=v sets TENANTRY_X=v for Tenantry (A/B of a setting in one checkout).
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k.startsWith('BENCH_TENANTRY_')) env[k.slice('BENCH_'.length)] = v;
  Object.assign(env, {
    TENANTRY_HOST: '127.0.0.1', TENANTRY_DATA_DIR: dir, TENANTRY_OTLP_HTTP_PORT: '0', TENANTRY_OTLP_GRPC_PORT: '0', TENANTRY_API_PORT: '0',
    TENANTRY_API_KEYS: JSON.stringify([{ key, scopes: ['ingest', 'read'], tenants: ['*'] }]),
  });
  const logFile = join(dir, 'output.log');
  const out = createWriteStream(logFile);
  const child = spawn(process.execPath, [...nodeFlags, join(root, 'src', 'cli.ts'), 'all'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr.pipe(out, { end: false });
  const exited = new Promise<void>((resolve) => { child.once('exit', () => { resolve(); }); });
  const stop = stopper(child, out, 60_000);
  const tail = (): string => tailOf(logFile);
  // Its JSON log lines go to the log file; the "tenantry started" line carries the ports.
  const ports = await new Promise<Record<string, number>>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => { reject(new Error(`tenantry not started within ${timeoutMs} ms:\n${tail()}`)); }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out.write(chunk);
      buffered += chunk;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        const text = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          const line = JSON.parse(text) as { msg?: unknown; ports?: Record<string, number> };
          if (line.msg === 'tenantry started' && line.ports !== undefined) { clearTimeout(timer); resolve(line.ports); }
        } catch {
          // not a JSON line
        }
      }
    });
    void exited.then(() => { clearTimeout(timer); reject(new Error(`tenantry exited (${child.exitCode ?? child.signalCode}) before it started:\n${tail()}`)); });
  }).catch(async (error: unknown) => { await stop(); throw error; });
  return {
    name: 'tenantry', pid: child.pid ?? 0, dataDir: dir, key, tail, stop,
    otlpUrl: `http://127.0.0.1:${ports['otlpHttp'] ?? 0}`, apiUrl: `http://127.0.0.1:${ports['api'] ?? 0}`,
  };
}
