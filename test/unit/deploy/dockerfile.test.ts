// What can be checked of the image without a Docker engine.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';

const root = join(import.meta.dirname, '..', '..', '..');

interface Instruction {
  readonly op: string;
  readonly args: string;
}

async function stages(): Promise<Instruction[][]> {
  const text = (await readFile(join(root, 'Dockerfile'), 'utf8')).replace(/\\\n/g, ' ');
  const result: Instruction[][] = [];
  for (const line of text.split('\n')) {
    const match = /^([A-Z]+)\s+(.*)$/.exec(line.trim());
    if (match === null) continue;
    const instruction = { op: match[1] ?? '', args: match[2] ?? '' };
    if (instruction.op === 'FROM') result.push([]);
    result.at(-1)?.push(instruction);
  }
  return result;
}

describe('Dockerfile', () => {
  it('builds on node:24-slim in every stage', async () => {
    const all = await stages();
    expect(all.length).to.be.greaterThanOrEqual(2);
    for (const stage of all) expect(stage[0]?.args).to.match(/^node:24-slim\b/);
  });

  it('runs as a non-root user in the final stage', async () => {
    const final = (await stages()).at(-1) ?? [];
    const user = final.filter((i) => i.op === 'USER').at(-1);
    expect(user, 'a USER instruction').to.not.equal(undefined);
    expect(user?.args).to.not.match(/^(root|0)(:|$)/);
  });

  it('installs production dependencies only, without chdb, in the final stage', async () => {
    const installs = ((await stages()).at(-1) ?? []).filter((i) => i.op === 'RUN' && /npm (install|ci)/.test(i.args));
    expect(installs).to.have.length(1);
    // chdb is left out by name: --omit=optional would also drop snappy's native binding (remote write needs it).
    expect(installs[0]?.args).to.contain('--omit=dev').and.contain('optionalDependencies.chdb').and.not.contain('--omit=optional');
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as {
      optionalDependencies: Record<string, string>;
      dependencies: Record<string, string>;
    };
    expect(pkg.optionalDependencies).to.have.property('chdb');
    expect(pkg.dependencies).to.not.have.property('chdb');
  });

  it('has `tenantry` as the entry point, linked to the built CLI', async () => {
    const final = (await stages()).at(-1) ?? [];
    expect(final.find((i) => i.op === 'ENTRYPOINT')?.args).to.equal('["tenantry"]');
    const link = final.find((i) => i.op === 'RUN' && i.args.includes('/usr/local/bin/tenantry'));
    expect(link?.args).to.contain('/app/dist/src/cli.js');
    // tsconfig.build.json emits src/cli.ts to dist/src/cli.js.
    const build = JSON.parse(await readFile(join(root, 'tsconfig.build.json'), 'utf8')) as { extends: string };
    const base = JSON.parse(await readFile(join(root, build.extends), 'utf8')) as { compilerOptions: { outDir: string; rootDir: string } };
    expect([base.compilerOptions.outDir, base.compilerOptions.rootDir]).to.deep.equal(['dist', '.']);
  });

  it('keeps local state out of the build context', async () => {
    const ignored = (await readFile(join(root, '.dockerignore'), 'utf8')).split('\n');
    expect(ignored).to.include.members(['node_modules', 'dist', 'data', '.git']);
  });
});
