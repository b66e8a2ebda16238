// The README's "Send a span, a log and a metric, and query them back",
// run as a newcomer would: its own shell blocks, copied from the README at
// test time, against `npm start`'s process on free ports. Only the ports
// (4318, 8080) and the clock (one NOW for every block) are substituted; a
// README edit that breaks the walkthrough fails here.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startTenantry, testEnvironment } from '../../../support/tenantry-process.ts';
import type { TenantryProcess } from '../../../support/tenantry-process.ts';

const run = promisify(execFile);

/** The ```sh blocks of the README section headed `heading`, in order. */
async function shellBlocks(heading: string): Promise<string[]> {
  const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf(`## ${heading}`);
  if (start < 0) throw new Error(`README has no section "${heading}"`);
  const end = readme.indexOf('\n## ', start + 3);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

describe('the README walkthrough (send a span, a log and a metric, query them back)', function () {
  this.timeout(120_000);
  let dir: string;
  let running: TenantryProcess | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tenantry-readme-'));
  });
  after(async () => {
    await running?.stop('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('answers every command of the README as it shows', async () => {
    const blocks = await shellBlocks('Send a span, a log and a metric, and query them back');
    expect(blocks, 'start; send; query /v1; query the compatible APIs').to.have.length(4);
    const [startBlock = '', send = '', v1 = '', compat = ''] = blocks;
    expect(startBlock.trim()).to.equal('npm start | tee tenantry.log');

    // `npm start | tee tenantry.log`: the same process, its log lines in the file the next block reads.
    running = startTenantry(['all'], testEnvironment(join(dir, 'data')));
    const ports = await running.started();
    await writeFile(join(dir, 'tenantry.log'), running.lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const local = (script: string): string =>
      script
        .replaceAll('http://localhost:4318', `http://127.0.0.1:${ports['otlpHttp'] ?? 0}`)
        .replaceAll('http://localhost:8080', `http://127.0.0.1:${ports['api'] ?? 0}`)
        .replaceAll('NOW=$(date +%s)', `NOW=${Math.floor(Date.now() / 1000)}`);
    const shell = async (script: string): Promise<string> => (await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: dir, timeout: 30_000 })).stdout;

    const sent = local(send);
    expect(await shell(sent), 'each OTLP request answers {}').to.equal('{}{}{}');
    // The next blocks run in the same terminal: the variables the send block set, without sending again.
    const setup = sent.slice(0, sent.indexOf('\ncurl'));

    // "About a second later … the items can be queried": poll, with a deadline, until every answer shows them.
    const expected = {
      v1: ['"spanName":"GET /cart"', 'payment service timed out', '"http.route":"/cart"', '"values":[', '42'],
      compat: ['"http_route":"/cart"', '"42"', 'payment service timed out', '5b8efff798038103d269b633813fc60c', 'GET /cart'],
    };
    const deadline = Date.now() + 20_000;
    let answers = { v1: '', compat: '' };
    for (;;) {
      answers = { v1: await shell(`${setup}\n${local(v1)}`), compat: await shell(`${setup}\n${local(compat)}`) };
      const missing = [...expected.v1.filter((s) => !answers.v1.includes(s)), ...expected.compat.filter((s) => !answers.compat.includes(s))];
      if (missing.length === 0) break;
      if (Date.now() > deadline) expect.fail(`after 20 s the README's queries still miss ${JSON.stringify(missing)}:\n${answers.v1}\n${answers.compat}`);
      // Becoming queryable has no event a README user (or this test) can see: poll, bounded by the deadline above.
      await new Promise((resolve) => {
        setTimeout(resolve, 250);
      });
    }
    expect(answers.v1).to.include('"traceId":"5b8efff798038103d269b633813fc60c"');
    expect(await running.stop('SIGTERM'), 'Ctrl-C (SIGINT or SIGTERM) stops it with exit code 0').to.equal(0);
  });
});
