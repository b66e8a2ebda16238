// The Dockerfile reader behind the image test (test/integration/image/): the
// project's own Dockerfile read into its stages, and RUN commands turned into
// ones that run in a directory standing for the stage's root.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { ignoredByDockerignore, localRunCommand, parseCopy, parseDockerfile, parseDockerignore } from '../../integration/image/dockerfile-stages.ts';

describe('Dockerfile stages (image test)', () => {
  const stages = parseDockerfile(readFileSync('Dockerfile', 'utf8'));

  it("reads the project's Dockerfile: a build stage and a runtime stage on node:24-slim, running as uid 1000", () => {
    expect(stages.map((s) => [s.name, s.base])).to.deep.equal([
      ['build', 'node:24-slim'],
      ['runtime', 'node:24-slim'],
    ]);
    const runtime = stages[1]?.instructions ?? [];
    expect(runtime.find((i) => i.keyword === 'USER')?.args).to.equal('1000:1000');
    expect(runtime.find((i) => i.keyword === 'ENTRYPOINT')?.args).to.equal('["tenantry"]');
    expect(runtime.some((i) => i.keyword === 'COPY' && parseCopy(i.args).from === 'build')).to.equal(true);
  });

  it('the runtime stage installs production dependencies without chdb, keeping other optional native packages', () => {
    const install = stages[1]?.instructions.find((i) => i.keyword === 'RUN' && i.args.includes('npm install'))?.args ?? '';
    expect(install).to.contain('--omit=dev').and.contain('optionalDependencies.chdb');
    expect(install).to.not.contain('--omit=optional');
  });

  it('joins continued lines and drops comments', () => {
    const [s] = parseDockerfile('# c\nFROM a AS b\nRUN x \\\n && y\n# d\nCOPY p q ./\n');
    expect(s?.instructions).to.deep.equal([
      { keyword: 'RUN', args: 'x && y' },
      { keyword: 'COPY', args: 'p q ./' },
    ]);
  });

  it('reads COPY with and without --from', () => {
    expect(parseCopy('package.json package-lock.json ./')).to.deep.equal({ sources: ['package.json', 'package-lock.json'], dest: './' });
    expect(parseCopy('--from=build /src/dist ./dist')).to.deep.equal({ from: 'build', sources: ['/src/dist'], dest: './dist' });
  });

  it('honours .dockerignore paths and extensions', () => {
    const patterns = parseDockerignore(readFileSync('.dockerignore', 'utf8'));
    expect(ignoredByDockerignore('proto/gen/otlp.js', patterns)).to.equal(true);
    expect(ignoredByDockerignore('proto/opentelemetry/x.proto', patterns)).to.equal(false);
    expect(ignoredByDockerignore('src/a.log', patterns)).to.equal(true);
  });

  it('runs RUN commands inside the root: no npm cache wipe, npm cache first, relative symlinks, rooted paths', () => {
    expect(localRunCommand('npm install --omit=dev && npm cache clean --force', '/r')).to.equal('npm install --prefer-offline --omit=dev');
    expect(localRunCommand('chmod +x dist/src/cli.js && ln -s /app/dist/src/cli.js /usr/local/bin/tenantry', '/r')).to.equal(
      'chmod +x dist/src/cli.js && mkdir -p /r/usr/local/bin && ln -sfn ../../../app/dist/src/cli.js /r/usr/local/bin/tenantry',
    );
    expect(localRunCommand('cp -r /src/a /app/b', '/r')).to.equal('cp -r /r/src/a /r/app/b');
  });
});
