import { expect } from 'chai';
import { detectedMemoryBytes } from '../../../src/config/memory-limit.ts';

/** A reader over a fake /sys: missing files throw as readFileSync does. */
const files =
  (entries: Record<string, string>) =>
  (path: string): string => {
    const text = entries[path];
    if (text === undefined) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return text;
  };

describe('detectedMemoryBytes', () => {
  const machine = 16 * 1024 ** 3;

  it('reads the cgroup v2 limit', () => {
    expect(detectedMemoryBytes(files({ '/sys/fs/cgroup/memory.max': '1073741824\n' }), machine)).to.equal(1024 ** 3);
  });

  it('reads the cgroup v1 limit when there is no v2 file', () => {
    expect(detectedMemoryBytes(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '536870912\n' }), machine)).to.equal(512 * 1024 ** 2);
  });

  it('falls back to the machine\'s memory for "max", v1\'s unlimited figure and no cgroup files', () => {
    expect(detectedMemoryBytes(files({ '/sys/fs/cgroup/memory.max': 'max\n' }), machine)).to.equal(machine);
    expect(detectedMemoryBytes(files({ '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n' }), machine)).to.equal(machine);
    expect(detectedMemoryBytes(files({}), machine)).to.equal(machine);
  });

  it("never exceeds the machine's memory", () => {
    expect(detectedMemoryBytes(files({ '/sys/fs/cgroup/memory.max': String(64 * 1024 ** 3) }), machine)).to.equal(machine);
  });
});
