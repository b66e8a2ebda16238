import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import { allVariables } from '../../../src/config/variables.ts';
import { configurationPage, configurationRows, tableEnd, tableProblems, tableStart } from './configuration-table.ts';

const fix = 'run `node test/unit/docs/configuration-table.ts` to regenerate the table';

describe('docs/configuration.md', () => {
  it('has one row per configuration variable, with its meaning and current default', async () => {
    const page = await readFile(configurationPage, 'utf8');
    expect(tableProblems(page), fix).to.deep.equal([]);
    expect(configurationRows().size).to.equal(Object.keys(allVariables).length);
  });

  it('names a missing row, a changed default and an unknown variable', () => {
    const rows = new Map([...configurationRows()].slice(0, 2));
    const [first, second] = [...rows.keys()];
    if (first === undefined || second === undefined) throw new Error('the variable table has fewer than two variables');
    const changed = (rows.get(second) ?? '').replace(/\| [^|]+ \|$/, '| `changed` |');
    const page = [tableStart, changed, '| `TENANTRY_NO_SUCH_SETTING` | none | unset |', tableEnd].join('\n');
    expect(tableProblems(page, rows)).to.have.members([
      `${first} has no row`,
      `${second}'s row differs from its meaning or default; expected: ${rows.get(second) ?? ''}`,
      'TENANTRY_NO_SUCH_SETTING has a row but is not a variable of src/config/variables.ts',
    ]);
  });
});
