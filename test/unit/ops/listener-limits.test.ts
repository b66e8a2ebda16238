import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { connectionCap, openFileLimit, reservedDescriptors } from '../../../src/ops/listener-limits.ts';

describe('listener limits', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tenantry-limits-'));
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const limitsFile = (openFiles: string): string => {
    const path = join(dir, `limits-${openFiles}`);
    writeFileSync(
      path,
      `Limit                     Soft Limit           Hard Limit           Units\nMax processes             95000                95000                processes\nMax open files            ${openFiles}                1048576              files\n`,
    );
    return path;
  };

  it('reads the soft open-file limit from /proc/self/limits', () => {
    expect(openFileLimit(limitsFile('20000'))).to.equal(20_000);
    expect(openFileLimit(limitsFile('unlimited'))).to.equal(Number.MAX_SAFE_INTEGER);
    expect(openFileLimit(join(dir, 'absent'))).to.equal(undefined);
  });

  it("reads this process's limit on Linux", () => {
    if (process.platform !== 'linux') return;
    expect(openFileLimit()).to.be.above(0);
  });

  it('keeps a configured cap and otherwise shares what the reserve leaves among four listeners', () => {
    expect(connectionCap(10, 20_000)).to.equal(10);
    expect(connectionCap(undefined, 20_000)).to.equal(Math.floor((20_000 - reservedDescriptors) / 4));
    // The derived caps of three listeners plus the reserve stay under the limit.
    expect(3 * connectionCap(undefined, 20_000) + reservedDescriptors).to.be.below(20_000);
    expect(connectionCap(undefined, 1024)).to.equal(64);
  });
});
