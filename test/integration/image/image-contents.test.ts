// The container image's contents run, without a Docker engine: the
// Dockerfile's stages are reproduced in a directory (image-tree.ts:
// production dependencies only, no chdb, no dev tools), and each target is
// started from that tree as the image's user (uid 1000) with the tree
// read-only and only the paths the operator and chart declare writable (the
// gateway's write-ahead log emptyDir, the operator's /tmp emptyDir). Each must
// reach the point where it needs its server: gateway and API up and unready,
// waiting for ClickHouse; migrate failing to reach ClickHouse; drain exiting 0
// on an empty log; the operator up and unready, waiting for the Kubernetes API server.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, readlinkSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ImageProcess } from './image-process.ts';
import { isolation, startFromImage } from './image-process.ts';
import type { ImageTree } from './image-tree.ts';
import { buildImageTree } from './image-tree.ts';

const repo = join(import.meta.dirname, '..', '..', '..');
const keys = JSON.stringify([{ name: 'image-test', key: 'image-test-key-0123456789', scopes: ['ingest', 'read', 'admin'], tenants: ['*'] }]);
const common = { TENANTRY_HOST: '127.0.0.1', TENANTRY_LOG_LEVEL: 'info' };

/** A loopback port nothing listens on (bound, then released): connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
  if (address === null || typeof address === 'string') throw new Error('bug: no port');
  return address.port;
}

/** A folder the image's user may write (what an emptyDir is in the pod). */
function writableDir(prefix: string, uid: number): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (isolation().ok) chownSync(dir, uid, uid);
  return dir;
}

/** Files the image's user created since `marker` in this machine's shared writable places, outside `allowed`. */
function strayWrites(uid: number, marker: string, allowed: readonly string[]): string[] {
  // Other processes' files come and go meanwhile; find then exits 1 for a vanished one, so its status is not the answer.
  const out = spawnSync('find', ['/tmp', '/var/tmp', '/dev/shm', '-xdev', '-user', String(uid), '-newer', marker], { encoding: 'utf8' }).stdout;
  return out.split('\n').filter((p) => p !== '' && !allowed.some((a) => p === a || p.startsWith(`${a}/`)));
}

/** As root: the process runs as the image's uid, and its tree is mounted read-only (its own mount namespace). */
function expectImageUserOnReadOnlyTree(p: ImageProcess, uid: number): void {
  if (!isolation().ok || p.child.pid === undefined) return;
  const uids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(readFileSync(`/proc/${p.child.pid}/status`, 'utf8'));
  expect([uids?.[1], uids?.[2]]).to.deep.equal([String(uid), String(uid)]);
  const cwd = readlinkSync(`/proc/${p.child.pid}/cwd`);
  const mount = readFileSync(`/proc/${p.child.pid}/mountinfo`, 'utf8')
    .split('\n')
    .find((l) => {
      const at = l.split(' ')[4];
      return at !== undefined && at !== '/' && cwd.startsWith(at);
    });
  expect(mount?.split(' ')[5], `mount of ${cwd}`).to.match(/^ro\b/);
}

async function status(port: unknown, path: string): Promise<number> {
  return (await fetch(`http://127.0.0.1:${String(port)}${path}`)).status;
}

describe("the image's contents (Dockerfile stages reproduced without Docker)", function () {
  this.timeout(600_000);
  let tree: ImageTree;
  let uid = 1000;
  let clickhouse = '';
  const running: ImageProcess[] = [];
  let marker = '';

  before(async function () {
    tree = buildImageTree(repo, (line) => {
      console.log(`      ${line}`);
    });
    uid = Number(tree.user.split(':')[0]);
    const iso = isolation();
    if (!iso.ok) console.log(`      (${iso.reason})`);
    clickhouse = `http://127.0.0.1:${await closedPort()}`;
    marker = join(mkdtempSync(join(tmpdir(), 'tenantry-image-marker-')), 'since');
    writeFileSync(marker, '');
    const past = new Date(Date.now() - 1000);
    utimesSync(marker, past, past);
  });

  after(() => {
    if (marker !== '') rmSync(dirname(marker), { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const p of running.splice(0)) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
      await p.exited;
    }
  });

  it('holds production dependencies only: no chdb, no dev tools, the native modules of its dependencies', () => {
    const modules = join(tree.root, tree.workdir, 'node_modules');
    expect(existsSync(join(modules, 'chdb')), 'chdb').to.equal(false);
    for (const dev of ['mocha', 'typescript', 'eslint', 'protobufjs-cli', 'testcontainers', 'node'])
      expect(existsSync(join(modules, dev)), dev).to.equal(false);
    for (const prod of ['@clickhouse/client', '@grpc/grpc-js', 'koa', 'protobufjs', 'io-ts']) expect(existsSync(join(modules, prod)), prod).to.equal(true);
    expect(existsSync(join(tree.root, 'usr', 'local', 'bin', 'tenantry')), 'the ENTRYPOINT on PATH').to.equal(true);
    expect(tree.user).to.equal('1000:1000');
  });

  it('gateway: starts, live and unready, waiting for ClickHouse; only its write-ahead log is written', async () => {
    const wal = writableDir('tenantry-image-wal-', uid);
    const p = startFromImage(tree, ['gateway'], {
      ...common,
      TENANTRY_CLICKHOUSE_URL: clickhouse,
      TENANTRY_API_KEYS: keys,
      TENANTRY_WAL_DIR: wal,
      TENANTRY_OTLP_HTTP_PORT: '0',
      TENANTRY_OTLP_GRPC_PORT: '0',
    });
    running.push(p);
    const ports = (await p.waitForLine((l) => l['msg'] === 'tenantry started', 60_000))['ports'] as Record<string, number>;
    await p.waitForLine((l) => String(l['msg']).startsWith('schema not applied yet'), 30_000);
    expectImageUserOnReadOnlyTree(p, uid);
    expect(await status(ports['otlpHttp'], '/healthz')).to.equal(200);
    expect(await status(ports['otlpHttp'], '/readyz')).to.equal(503);
    p.child.kill('SIGTERM');
    expect(await p.exited).to.equal(0);
    expect(strayWrites(uid, marker, [wal])).to.deep.equal([]);
    rmSync(wal, { recursive: true, force: true });
  });

  it('api: starts, live and unready, waiting for ClickHouse; writes nothing', async () => {
    const p = startFromImage(tree, ['api'], { ...common, TENANTRY_CLICKHOUSE_URL: clickhouse, TENANTRY_API_KEYS: keys, TENANTRY_API_PORT: '0' });
    running.push(p);
    const ports = (await p.waitForLine((l) => l['msg'] === 'tenantry started', 60_000))['ports'] as Record<string, number>;
    await p.waitForLine((l) => String(l['msg']).startsWith('schema not applied yet'), 30_000);
    expectImageUserOnReadOnlyTree(p, uid);
    expect(await status(ports['api'], '/healthz')).to.equal(200);
    expect(await status(ports['api'], '/readyz')).to.equal(503);
    p.child.kill('SIGTERM');
    expect(await p.exited).to.equal(0);
    expect(strayWrites(uid, marker, [])).to.deep.equal([]);
  });

  it("migrate: reaches ClickHouse's address, fails there with the reason, writes nothing", async () => {
    const p = startFromImage(tree, ['migrate'], { ...common, TENANTRY_CLICKHOUSE_URL: clickhouse });
    running.push(p);
    const failed = await p.waitForLine((l) => String(l['msg']).startsWith('schema migration failed'), 60_000);
    expect(String(failed['msg'])).to.contain('ECONNREFUSED');
    expect(await p.exited).to.not.equal(0);
    expect(strayWrites(uid, marker, [])).to.deep.equal([]);
  });

  it("drain (the operator's drain Job: the ENTRYPOINT with target drain): an empty log exits 0 without ClickHouse, writing only its log's folder", async () => {
    expect(existsSync(join(tree.root, tree.workdir, 'dist', 'gateway', 'drain', 'drain-target.js')), 'the target loads it from the tree').to.equal(true);
    const wal = writableDir('tenantry-image-drain-', uid);
    // ClickHouse refuses connections: a replica that drained on its stop leaves nothing to insert, and its claim may go anyway.
    const p = startFromImage(tree, ['drain'], { ...common, TENANTRY_CLICKHOUSE_URL: clickhouse, TENANTRY_WAL_DIR: wal });
    running.push(p);
    const drained = await p.waitForLine((l) => l['msg'] === 'write-ahead log drained', 60_000);
    expect(drained).to.deep.include({ segmentsFound: 0, dir: wal });
    expect(await p.exited).to.equal(0);
    expect(p.lines.filter((l) => l['level'] === 'error' || l['level'] === 'warn')).to.deep.equal([]);
    expect(strayWrites(uid, marker, [wal])).to.deep.equal([]);
    rmSync(wal, { recursive: true, force: true });
  });

  it('operator: starts, live and unready, waiting for the Kubernetes API server; only its /tmp is written', async () => {
    const tmp = writableDir('tenantry-image-optmp-', uid);
    const config = mkdtempSync(join(tmpdir(), 'tenantry-image-kube-'));
    chmodSync(config, 0o755);
    const kubeconfig = join(config, 'kubeconfig');
    const server = `https://127.0.0.1:${await closedPort()}`;
    writeFileSync(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: c',
        `clusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]`,
        'users: [{name: u, user: {token: image-test}}]',
        'contexts: [{name: c, context: {cluster: c, user: u}}]',
        '',
      ].join('\n'),
      { mode: 0o644 },
    );
    const p = startFromImage(tree, ['operator'], { ...common, TENANTRY_KUBECONFIG: kubeconfig, TENANTRY_OPERATOR_PORT: '0', TMPDIR: tmp });
    running.push(p);
    const ports = (await p.waitForLine((l) => l['msg'] === 'tenantry started', 60_000))['ports'] as Record<string, number>;
    await p.waitForLine((l) => l['msg'] === 'Kubernetes API server not reachable yet', 30_000);
    expectImageUserOnReadOnlyTree(p, uid);
    expect(await status(ports['operator'], '/healthz')).to.equal(200);
    expect(await status(ports['operator'], '/readyz')).to.equal(503);
    p.child.kill('SIGTERM');
    expect(await p.exited).to.equal(0);
    expect(strayWrites(uid, marker, [tmp])).to.deep.equal([]);
    rmSync(tmp, { recursive: true, force: true });
    rmSync(config, { recursive: true, force: true });
  });
});
