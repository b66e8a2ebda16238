// The licence gate of `npm test` (../shared/COMPAT-APIS.md, "Licences"):
// every production npm dependency as installed, and every Go module a
// test or benchmark binary is built from, is under a permissive licence.
// The gate is also shown to fail: on an installed npm package without a
// licence or under AGPL, and on a Go module folder holding AGPL text or no
// licence at all.
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { declaredModules, licenceText, moduleLicences } from '../../licences/go-licences.ts';
import { refusedGoModules, refusedNpmPackages } from '../../licences/licence-policy.ts';
import { productionPackages } from '../../licences/npm-licences.ts';
import { parsePrerequisites } from '../../support/skip-unless-found.ts';

/** Every script that builds a binary a test or a benchmark runs. */
const buildScripts = (): string[] => [
  ...parsePrerequisites(readFileSync('test/prepare-binaries.sh', 'utf8')).map((p) => p.script),
  ...['bench/peers/build-peers.sh'].filter((s) => existsSync(s)),
];

describe('licence gate', function () {
  this.timeout(180_000);
  let scratch = '';
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'tenantry-licences-'));
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('every production npm dependency is under an allowed licence', async () => {
    const packages = await productionPackages(process.cwd());
    expect(packages.length, 'the reader found the installed tree').to.be.greaterThan(50);
    expect(refusedNpmPackages(packages)).to.deep.equal([]);
  });

  it('fails on an installed npm package without a licence and on one under AGPL', async () => {
    const project = join(scratch, 'npm-project');
    const pkg = async (name: string, manifest: Record<string, unknown>): Promise<void> => {
      await mkdir(join(project, 'node_modules', name), { recursive: true });
      await writeFile(join(project, 'node_modules', name, 'package.json'), JSON.stringify({ name, version: '1.0.0', ...manifest }));
    };
    await mkdir(project, { recursive: true });
    await writeFile(
      join(project, 'package.json'),
      JSON.stringify({
        name: 'fixture',
        version: '1.0.0',
        license: 'MIT',
        dependencies: { unlicensed: '1.0.0', copyleft: '1.0.0', fine: '1.0.0' },
      }),
    );
    await pkg('unlicensed', {});
    await pkg('copyleft', { license: 'AGPL-3.0-only' });
    await pkg('fine', { license: 'MIT' });
    const refused = refusedNpmPackages(await productionPackages(project));
    expect(refused.map((r) => r.id).sort()).to.deep.equal(['copyleft@1.0.0', 'unlicensed@1.0.0']);
  });

  it('every build script declares the Go modules it builds from, with the versions it pins', () => {
    for (const script of buildScripts()) {
      const text = readFileSync(script, 'utf8');
      const modules = declaredModules(text);
      expect(modules, `${script} has no "Go modules built" line`).to.not.deep.equal([]);
      for (const m of modules) expect(text.replace(/^# Go modules built.*$/m, ''), `${script} pins ${m.version}`).to.contain(m.version);
    }
  });

  it('every Go module a test or benchmark binary is built from is under a permissive licence', () => {
    expect(refusedGoModules(moduleLicences(buildScripts()))).to.deep.equal([]);
  });

  it('fails on a Go module whose folder holds AGPL text, and on one with no licence file', async () => {
    const agpl = join(scratch, 'agpl-module');
    const bare = join(scratch, 'bare-module');
    await mkdir(agpl, { recursive: true });
    await mkdir(bare, { recursive: true });
    await writeFile(join(agpl, 'LICENSE'), '                    GNU AFFERO GENERAL PUBLIC LICENSE\n                       Version 3, 19 November 2007\n');
    await writeFile(join(bare, 'README.md'), 'no licence here\n');
    const refused = refusedGoModules([
      { module: 'example.invalid/agpl@v1.0.0', script: 'fixture.sh', text: licenceText(agpl) },
      { module: 'example.invalid/bare@v1.0.0', script: 'fixture.sh', text: licenceText(bare) },
    ]);
    expect(refused.map((r) => r.reason)).to.have.length(2);
    expect(refused[0]?.reason).to.contain('AGPL');
    expect(refused[1]?.reason).to.contain('no licence file');
  });
});
