// The configuration table of docs/configuration.md, rendered from the variable
// table in src/config/variables.ts, which also drives decoding: the docs cannot
// drift from what the process accepts. `node test/unit/docs/configuration-table.ts`
// rewrites the table in place after a variable is added or changed.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { allVariables } from '../../../src/config/variables.ts';
import type { Variable } from '../../../src/config/variables.ts';

/** The page holding the table, from the repository root. */
export const configurationPage = join(import.meta.dirname, '..', '..', '..', 'docs', 'configuration.md');

/** Lines around the generated rows; everything between them is the table. */
export const tableStart = '<!-- generated from src/config/variables.ts by test/unit/docs/configuration-table.ts -->';
export const tableEnd = '<!-- end of generated table -->';

const header = ['| variable | meaning | default |', '|---|---|---|'];

/** The default as the table shows it: `value`, `""` for the empty string, unset when there is none. */
export function shownDefault(variable: Variable): string {
  if (variable.default === undefined) return 'unset';
  return `\`${variable.default === '' ? '""' : variable.default}\``;
}

/** One table row per variable, in the variable table's order. */
export function configurationRows(variables: Readonly<Record<string, Variable>> = allVariables): Map<string, string> {
  const rows = new Map<string, string>();
  for (const [name, variable] of Object.entries(variables)) {
    // A `|` in a meaning would end its cell early.
    rows.set(name, `| \`${name}\` | ${variable.doc.replaceAll('|', '\\|')} | ${shownDefault(variable)} |`);
  }
  return rows;
}

/** The lines between the markers of a page, or undefined when a marker is missing. */
export function tableLines(page: string): string[] | undefined {
  const lines = page.split('\n');
  const start = lines.indexOf(tableStart);
  const end = lines.indexOf(tableEnd);
  if (start < 0 || end < start) return undefined;
  return lines.slice(start + 1, end);
}

/** The page with its table replaced by the rows rendered from the variable table. */
export function withGeneratedTable(page: string): string | undefined {
  const lines = page.split('\n');
  const start = lines.indexOf(tableStart);
  const end = lines.indexOf(tableEnd);
  if (start < 0 || end < start) return undefined;
  return [...lines.slice(0, start + 1), ...header, ...configurationRows().values(), ...lines.slice(end)].join('\n');
}

/** What is wrong with a page's table: rows missing or differing from the variable table, rows of unknown variables, repeated rows. */
export function tableProblems(page: string, rows: ReadonlyMap<string, string> = configurationRows()): string[] {
  const lines = tableLines(page);
  if (lines === undefined) return [`the page lacks the lines "${tableStart}" and "${tableEnd}"`];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const line of lines) {
    const name = /^\| `([A-Z0-9_]+)` \|/.exec(line)?.[1];
    if (name === undefined) continue;
    if (!rows.has(name)) problems.push(`${name} has a row but is not a variable of src/config/variables.ts`);
    if (seen.has(name)) problems.push(`${name} has more than one row`);
    seen.add(name);
  }
  for (const [name, row] of rows) {
    if (!seen.has(name)) problems.push(`${name} has no row`);
    else if (!lines.includes(row)) problems.push(`${name}'s row differs from its meaning or default; expected: ${row}`);
  }
  return problems;
}

if (import.meta.main) {
  const page = await readFile(configurationPage, 'utf8');
  const rewritten = withGeneratedTable(page);
  if (rewritten === undefined) throw new Error(`${configurationPage} lacks the lines "${tableStart}" and "${tableEnd}"`);
  await writeFile(configurationPage, rewritten);
  console.log(`rewrote the table of ${configurationPage}: ${configurationRows().size} variables`);
}
