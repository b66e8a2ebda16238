// The release workflow (.github/workflows/) cannot run here, so it is checked
// by actionlint (built from its Go module by test/prepare-binaries.sh):
// syntax, expressions, job dependencies, action inputs, and the shell of
// every `run:`. Also what it must publish: multi-arch images and the chart as
// an OCI artifact.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { findActionlint } from '../../actionlint/actionlint-binary.ts';
import { skipUnlessFound } from '../../support/skip-unless-found.ts';

const workflows = join(import.meta.dirname, '..', '..', '..', '.github', 'workflows');
const found = findActionlint();

function actionlint(files: readonly string[]): { status: number | null; output: string } {
  if (!found.ok) throw new Error('bug: actionlint missing');
  const run = spawnSync(found.actionlint, ['-no-color', ...files], { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

describe('the release workflow', () => {
  before(function () {
    skipUnlessFound(this, found);
  });

  it('passes actionlint', () => {
    const files = readdirSync(workflows)
      .filter((f) => /\.ya?ml$/.test(f))
      .map((f) => join(workflows, f));
    expect(files.map((f) => f.split('/').pop())).to.include('release.yaml');
    const result = actionlint(files);
    expect(result.output).to.equal('');
    expect(result.status).to.equal(0);
  });

  it('actionlint fails a broken workflow (the check can fail)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tenantry-actionlint-'));
    try {
      const broken = join(dir, 'broken.yaml');
      writeFileSync(
        broken,
        'on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    needs: [missing]\n    steps:\n      - run: echo ${{ github.nonexistent_context_field }}\n',
      );
      const result = actionlint([broken]);
      expect(result.status).to.not.equal(0);
      expect(result.output).to.contain('missing');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('publishes linux/amd64 and linux/arm64 images and pushes the chart as an OCI artifact, after the tests', () => {
    const wf = parse(readFileSync(join(workflows, 'release.yaml'), 'utf8')) as {
      jobs: Record<string, { needs?: string[]; steps: Array<{ uses?: string; run?: string; with?: Record<string, unknown> }> }>;
    };
    const build = wf.jobs['image']?.steps.find((s) => s.uses?.startsWith('docker/build-push-action') === true);
    expect(String(build?.with?.['platforms'])).to.equal('linux/amd64,linux/arm64');
    expect(build?.with?.['push']).to.equal(true);
    expect(wf.jobs['image']?.needs).to.include('test');
    const push = wf.jobs['chart']?.steps.map((s) => s.run ?? '').join('\n') ?? '';
    expect(push).to.match(/helm push "dist\/tenantry-\$\{VERSION\}\.tgz" "oci:\/\/ghcr\.io\//);
    expect(wf.jobs['test']?.steps.map((s) => s.run)).to.include('npm test');
  });
});
