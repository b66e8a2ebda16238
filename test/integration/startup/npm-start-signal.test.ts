// `npm start` stops Tenantry on SIGTERM and SIGINT sent to npm alone (a
// process manager signals the process it started) and on Ctrl-C (SIGINT to
// the whole group): it drains once, its ports are freed and its data
// directory unlocked, so the next `npm start` on the same directory starts.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { testEnvironment } from '../../../support/tenantry-process.ts';

const root = join(import.meta.dirname, '..', '..', '..');

interface NpmStart {
  readonly npm: ChildProcess;
  /** The ports of the "tenantry started" line. */
  readonly ports: Promise<Record<string, number>>;
  readonly exited: Promise<unknown>;
  output(): string;
}

/** Runs `npm start` in the repository in its own process group (so the test can clean up after a failure). */
function npmStart(dataDir: string): NpmStart {
  const npm = spawn('npm', ['start'], { cwd: root, env: testEnvironment(dataDir), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const ports = Promise.withResolvers<Record<string, number>>();
  const exited = new Promise((resolve) => {
    npm.once('exit', resolve);
  });
  void exited.then(() => {
    ports.reject(new Error(`npm exited before Tenantry started:\n${output}`));
  });
  const onData = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
    for (const text of output.split('\n')) {
      if (!text.startsWith('{')) continue;
      const line = JSON.parse(text) as Record<string, unknown>;
      if (line['msg'] === 'tenantry started') ports.resolve(line['ports'] as Record<string, number>);
    }
  };
  npm.stdout.on('data', onData);
  npm.stderr.on('data', onData);
  return { npm, ports: ports.promise, exited, output: () => output };
}

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => {
      resolve(false);
    });
  });
}

/** Polls until no port of `ports` accepts connections; false if one still does at the deadline. */
async function portsFreed(ports: Record<string, number>, withinMs: number): Promise<boolean> {
  const deadline = performance.now() + withinMs;
  for (;;) {
    const open = await Promise.all(Object.values(ports).map(listening));
    if (!open.includes(true)) return true;
    if (performance.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('npm start and stop signals', function () {
  this.timeout(180_000);
  const dataDirs: string[] = [];
  const started: NpmStart[] = [];
  after(async () => {
    // Whatever a failed run left behind, in the groups this test started.
    for (const s of started) {
      try {
        if (s.npm.pid !== undefined) process.kill(-s.npm.pid, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    }
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  });

  it('stops Tenantry on SIGTERM and SIGINT to npm alone and on Ctrl-C (SIGINT to the group): each time it drains once, frees its ports, and the next npm start on the same data directory starts', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'tenantry-npm-start-'));
    dataDirs.push(dataDir);
    for (const [signal, group] of [
      ['SIGTERM', false],
      ['SIGINT', false],
      ['SIGINT', true],
    ] as const) {
      const what = `${signal} to ${group ? 'the group (Ctrl-C)' : 'npm'}`;
      const run = npmStart(dataDir);
      started.push(run);
      const ports = await run.ports;
      if (group) process.kill(-(run.npm.pid ?? 0), signal);
      else run.npm.kill(signal);
      expect(await portsFreed(ports, 20_000), `ports ${JSON.stringify(ports)} still open after ${what}:\n${run.output()}`).to.equal(true);
      await run.exited;
      // One graceful stop, not a second signal's exit without draining.
      expect(run.output().match(/"msg":"shutting down"/g), what).to.have.length(1);
      expect(run.output(), what).to.contain('"msg":"stopped"');
    }
  });
});
