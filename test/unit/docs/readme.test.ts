import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { allVariables } from '../../../src/config/variables.ts';

describe('README', () => {
  it('documents every configuration variable with its current default', async () => {
    const readme = await readFile(join(import.meta.dirname, '..', '..', '..', 'README.md'), 'utf8');
    for (const [name, variable] of Object.entries(allVariables)) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
      expect(row, `${name} has a row in the configuration table`).to.be.a('string');
      const shown = variable.default === undefined ? 'unset' : `\`${variable.default === '' ? '""' : variable.default}\``;
      expect(row?.endsWith(`| ${shown} |`), `${name} shows default ${shown}`).to.equal(true);
    }
  });
});
