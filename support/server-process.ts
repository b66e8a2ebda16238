// Running a server binary for the tests and the benchmarks: free loopback
// ports, the process with its output in one file, ready when
// its readiness URL answers 200, stopped with SIGTERM (SIGKILL after 30 s).
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** A server a test or benchmark started. */
export interface RunningServer {
  readonly name: string;
  readonly pid: number;
  readonly dataDir: string;
  /** Last lines of its output, for an error message. */
  tail(): string;
  stop(): Promise<void>;
}

/**
 * Distinct ports free on 127.0.0.1 right now, one per name (a server binds
 * them a moment later). They are held open together until all are chosen:
 * ports chosen one after another can repeat, since a closed port is free
 * again, and a server given the same port twice fails to bind the second
 * (etcd failed once in CI to bind its client port: address already in use).
 */
export async function freePorts<K extends string>(names: readonly K[]): Promise<Record<K, number>> {
  const servers = names.map(() => createServer());
  try {
    const ports = await Promise.all(
      servers.map(async (server) => {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', resolve);
        });
        return (server.address() as AddressInfo).port;
      }),
    );
    return Object.fromEntries(names.map((name, i) => [name, ports[i]])) as Record<K, number>;
  } finally {
    await Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            if (server.listening)
              server.close(() => {
                resolve();
              });
            else resolve();
          }),
      ),
    );
  }
}

/** A port free on 127.0.0.1 right now (the server binds it a moment later). */
export async function freePort(): Promise<number> {
  return (await freePorts(['port'])).port;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Stops a child: SIGTERM, then SIGKILL if it has not exited after `graceMs`
 * (a bound on a graceful shutdown, not a wait: the exit event ends it), then
 * closes its output file.
 */
export function stopper(child: ChildProcess, out: WriteStream, graceMs: number): () => Promise<void> {
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  return async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      // A bound, not a wait: the exit event below ends the stop, and the timer only kills a child that ignores SIGTERM.
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    out.end();
  };
}

/** The last lines of a file (a server's output), or '' when it cannot be read. */
export function tailOf(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Spawns a Go binary with its output in `<dir>/output.log`, resolves when GET `readyUrl` answers 200. */
export async function spawnReady(
  name: string,
  binary: string,
  args: readonly string[],
  dir: string,
  readyUrl: string,
  timeoutMs = 120_000,
): Promise<{ child: ChildProcess; tail: () => string; stop: () => Promise<void> }> {
  const logFile = join(dir, 'output.log');
  const out = createWriteStream(logFile);
  const child = spawn(binary, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(out, { end: false });
  child.stderr.pipe(out, { end: false });
  const tail = (): string => tailOf(logFile);
  const stop = stopper(child, out, 30_000);
  // Readiness is an HTTP answer of another program, whose log lines differ by program and version:
  // there is no event to wait on from outside the process, so a bounded poll.
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${tail()}`);
    try {
      const response = await fetch(readyUrl, { signal: AbortSignal.timeout(2000) });
      await response.text();
      if (response.status === 200) return { child, tail, stop };
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  await stop();
  throw new Error(`${name} not ready within ${timeoutMs} ms:\n${tail()}`);
}
