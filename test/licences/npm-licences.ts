// The licences of a project's production npm dependencies, read by a
// maintained licence reader (license-checker-rseidelsohn, which walks the
// installed tree with npm's own arborist) rather than by hand.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { init } from 'license-checker-rseidelsohn';
import type { NpmPackage } from './licence-policy.ts';

/** The production dependencies installed under `root` (the project itself left out), each with its declared licences. */
export async function productionPackages(root: string): Promise<NpmPackage[]> {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  const direct = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.optionalDependencies ?? {})]);
  const self = `${manifest.name}@${manifest.version}`;
  const found = await new Promise<Record<string, { licenses?: string | string[] | undefined }>>((resolve, reject) => {
    init({ start: root, production: true }, (error, packages) => {
      if (error instanceof Error) reject(error);
      else resolve(packages);
    });
  });
  return Object.entries(found)
    .filter(([id]) => id !== self)
    .map(([id, info]) => {
      const declared = info.licenses;
      const licences = declared === undefined ? [] : (Array.isArray(declared) ? declared : [declared]).filter((l) => l !== 'UNKNOWN');
      return { id, licences, direct: direct.has(id.slice(0, id.lastIndexOf('@'))) };
    });
}
