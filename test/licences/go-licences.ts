// The Go modules every build script of the test and benchmark binaries
// builds from, as each script declares them on its "Go modules built" line,
// and each module's licence text from the Go module cache.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GoModuleLicence } from './licence-policy.ts';

const declaration = /^# Go modules built \(the licence gate reads this line\): (.+)$/m;

/** `module@version` pairs a build script declares ([] when it has no such line). */
export function declaredModules(script: string): { module: string; version: string }[] {
  const line = declaration.exec(script)?.[1] ?? '';
  return line
    .split(/\s+/)
    .filter((w) => w !== '')
    .map((w) => {
      const at = w.lastIndexOf('@');
      return { module: w.slice(0, at), version: w.slice(at + 1) };
    });
}

/** The licence files' text in a module's root folder ('' when it has none). */
export function licenceText(dir: string): string {
  if (!existsSync(dir)) return '';
  return readdirSync(dir)
    .filter((f) => /^(LICEN[CS]E|COPYING)(\.|$)/i.test(f))
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
}

/** Where the module cache holds `module@version` (downloading it if needed), or why it cannot be had. */
export function moduleDir(module: string, version: string): { ok: true; dir: string } | { ok: false; reason: string } {
  const r = spawnSync('go', ['mod', 'download', '-json', `${module}@${version}`], {
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
  });
  if (r.error !== undefined) return { ok: false, reason: `go is not on PATH (${r.error.message})` };
  const info = JSON.parse(r.stdout === '' ? '{}' : r.stdout) as { Dir?: string; Error?: string };
  if (r.status !== 0 || info.Dir === undefined) return { ok: false, reason: info.Error ?? r.stderr.trim() };
  return { ok: true, dir: info.Dir };
}

/** The licence of every module the scripts declare. */
export function moduleLicences(scripts: readonly string[]): GoModuleLicence[] {
  return scripts.flatMap((script) =>
    declaredModules(readFileSync(script, 'utf8')).map(({ module, version }) => {
      const found = moduleDir(module, version);
      if (!found.ok) throw new Error(`${script}: cannot read ${module}@${version} from the module cache: ${found.reason}`);
      return { module: `${module}@${version}`, script, text: licenceText(found.dir) };
    }),
  );
}
