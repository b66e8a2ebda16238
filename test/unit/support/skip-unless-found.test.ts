// The prerequisite rules of test/support/skip-unless-found.ts: a missing
// prerequisite fails the suite unless TENANTRY_TEST_SKIP names it, the names
// come from test/prepare-binaries.sh's list, every finder's reason names a
// script of that list, and the closing line counts skips with their reasons.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findActionlint } from '../../actionlint/actionlint-binary.ts';
import { findHelm } from '../../chart/helm-binary.ts';
import { findK8sBinaries } from '../../k8s/k8s-binaries.ts';
import { findPrometheus } from '../../../support/prometheus-binaries.ts';
import { parsePrerequisites, parseSkipList, verdict } from '../../support/skip-unless-found.ts';

const list = parsePrerequisites(readFileSync('test/prepare-binaries.sh', 'utf8'));

/** A finder's answer with every cache variable pointing at an empty directory. */
function missingReason(find: () => { readonly ok: boolean; readonly reason?: string }): string {
  const empty = mkdtempSync(join(tmpdir(), 'tenantry-empty-cache-'));
  const vars = ['K8S_TEST_CACHE', 'PROMETHEUS_CACHE', 'ACTIONLINT_CACHE'] as const;
  const saved = vars.map((v) => process.env[v]);
  try {
    for (const v of vars) process.env[v] = empty;
    const found = find();
    expect(found.ok).to.equal(false);
    return found.reason ?? '';
  } finally {
    vars.forEach((v, i) => {
      const old = saved[i];
      if (old === undefined) Reflect.deleteProperty(process.env, v);
      else process.env[v] = old;
    });
    rmSync(empty, { recursive: true, force: true });
  }
}

describe('test prerequisites (skip-unless-found)', () => {
  it('reads the list of test/prepare-binaries.sh, whose every script exists', () => {
    expect(list.map((p) => p.name)).to.include.members(['k8s', 'helm', 'prometheus', 'actionlint']);
    for (const p of list) expect(existsSync(p.script), p.script).to.equal(true);
  });

  it('every finder names, when its binary is missing, a build script of the list', () => {
    for (const find of [findK8sBinaries, findHelm, findPrometheus, findActionlint]) {
      const reason = missingReason(find);
      expect(
        list.some((p) => reason.includes(p.script)),
        reason,
      ).to.equal(true);
    }
  });

  it('runs when nothing is missing', () => {
    expect(verdict([], list, [])).to.deep.equal({ kind: 'run' });
  });

  it('fails on a missing prerequisite not named in TENANTRY_TEST_SKIP, saying how to fix or skip it', () => {
    const v = verdict(['helm missing; run: bash test/chart/build-helm.sh'], list, ['k8s']);
    expect(v.kind).to.equal('fail');
    if (v.kind === 'fail') expect(v.message).to.contain('bash test/chart/build-helm.sh').and.contain('TENANTRY_TEST_SKIP=helm');
  });

  it('skips, with the variable as its reason, when every missing prerequisite is named', () => {
    const reasons = ['helm missing; run: bash test/chart/build-helm.sh', 'k8s missing; run: bash test/k8s/build-binaries.sh'];
    expect(verdict(reasons, list, parseSkipList('k8s, helm'))).to.deep.equal({
      kind: 'skip',
      label: 'TENANTRY_TEST_SKIP=helm,k8s',
      detail: reasons.join('; '),
    });
    expect(verdict(reasons, list, ['helm']).kind).to.equal('fail');
  });

  it('fails on a missing piece that names no listed script, whatever is asked', () => {
    expect(verdict(['something else is missing'], list, ['k8s', 'helm', 'peers']).kind).to.equal('fail');
  });

  it('the closing line counts skipped tests with their reasons', function () {
    this.timeout(60_000);
    mkdirSync(join(process.cwd(), '.tenantry-test'), { recursive: true }); // absent in a fresh clone
    const dir = mkdtempSync(join(process.cwd(), '.tenantry-test', 'reporter-'));
    try {
      const spec = join(dir, 'skips.test.ts');
      const support = join(process.cwd(), 'test', 'support', 'skip-unless-found.ts');
      writeFileSync(
        spec,
        [
          `import { skipBecause } from ${JSON.stringify(support)};`,
          `describe('needs docker', function () { before(function () { skipBecause(this, 'no Docker engine', 'detail'); }); it('a', () => {}); it('b', () => {}); });`,
          `describe('plain', () => { it('runs', () => {}); it.skip('later', () => {}); });`,
        ].join('\n'),
      );
      const mocha = join(process.cwd(), 'node_modules', '.bin', 'mocha');
      const run = spawnSync(mocha, ['--no-config', '--extension', 'ts', '--reporter', 'test/support/summary-reporter.cjs', spec], { encoding: 'utf8' });
      expect(run.stdout).to.contain('tests: 1 passed, 0 failed, 3 skipped (2 no Docker engine; 1 no reason given)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('test/prepare-binaries.sh', () => {
  /** Runs the script with every cache empty, `go` off PATH, and TENANTRY_TEST_SKIP = `skip`. */
  function prepare(skip: string | undefined): { status: number | null; stdout: string; stderr: string } {
    const empty = mkdtempSync(join(tmpdir(), 'tenantry-prepare-'));
    try {
      const env: Record<string, string> = {
        PATH: '/usr/bin:/bin',
        HOME: empty,
        TMPDIR: empty,
        K8S_TEST_CACHE: empty,
        PEERS_CACHE: empty,
        ACTIONLINT_CACHE: empty,
      };
      if (skip !== undefined) env['TENANTRY_TEST_SKIP'] = skip;
      const run = spawnSync('bash', ['test/prepare-binaries.sh'], { encoding: 'utf8', env });
      return { status: run.status, stdout: run.stdout, stderr: run.stderr };
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }

  it('without Go, fails with one closing line naming what is missing and the fixes', function () {
    this.timeout(30_000);
    const run = prepare(undefined);
    expect(run.status).to.equal(1);
    const last = run.stderr.trim().split('\n').at(-1) ?? '';
    expect(last).to.match(/^\[prepare-binaries\] FAILED: k8s needs Go .*go is not on PATH; install Go >= [\d.]+ /);
    expect(last).to.contain(`TENANTRY_TEST_SKIP=${list.map((p) => p.name).join(',')} npm test`);
  });

  it('builds nothing and succeeds when every prerequisite is named in TENANTRY_TEST_SKIP', () => {
    const run = prepare(list.map((p) => p.name).join(', '));
    expect(run.status, run.stderr).to.equal(0);
    expect(run.stdout.match(/skipped \(TENANTRY_TEST_SKIP\)/g)).to.have.length(list.length);
  });

  it('refuses a name that is not in its list (a typo would otherwise build or require everything)', () => {
    const run = prepare('k8s,helmm');
    expect(run.status).to.equal(1);
    expect(run.stderr).to.contain(`TENANTRY_TEST_SKIP names 'helmm', which is not a prerequisite (known: ${list.map((p) => p.name).join(',')},containers)`);
  });
});
