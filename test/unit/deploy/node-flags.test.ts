// The V8 flags of src/target/node-flags.ts reach every way Tenantry starts:
// the CLI's shebang (the image's entry point links to it) and the npm scripts.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { nodeFlags } from '../../../src/target/node-flags.ts';

const root = join(import.meta.dirname, '..', '..', '..');

describe('node flags', () => {
  it("are on the CLI's shebang line, which env -S splits into arguments", async () => {
    const first = (await readFile(join(root, 'src', 'cli.ts'), 'utf8')).split('\n')[0];
    expect(first).to.equal(`#!/usr/bin/env -S node ${nodeFlags.join(' ')}`);
  });

  // `exec`: npm runs a script through `sh -c`, which does not pass npm's SIGTERM on; exec makes Node the process npm signals.
  it('are on the npm scripts that start the CLI, which exec Node', async () => {
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    for (const name of ['start', 'tenantry']) expect(pkg.scripts[name], name).to.match(new RegExp(`^exec node ${nodeFlags.join(' ')} src/cli\\.ts\\b`));
  });
});
