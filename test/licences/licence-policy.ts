// What Tenantry may depend on and run (../shared/COMPAT-APIS.md, "Licences"):
// permissive licences only, for production npm dependencies and for every
// program a test or benchmark builds. The decisions are pure functions here;
// npm-licences.ts and go-licences.ts gather the facts.
import satisfies from 'spdx-satisfies';

/** SPDX ids a production npm dependency may carry. */
export const allowedNpmLicences: readonly string[] = [
  'Apache-2.0',
  'MIT',
  'ISC',
  'BSD-2-Clause',
  'BSD-3-Clause',
  '0BSD',
  'BlueOak-1.0.0',
  'Unlicense',
  'CC0-1.0',
];

/** Licences allowed only for a package the project does not depend on directly (argparse's Python licence, reached through js-yaml). */
export const allowedTransitiveLicences: readonly string[] = ['Python-2.0', 'PSF-2.0'];

/** One npm package as the licence reader reports it. */
export interface NpmPackage {
  readonly id: string;
  readonly licences: readonly string[];
  readonly direct: boolean;
}

/** A package the gate refuses, with the reason in one sentence. */
export interface Refusal {
  readonly id: string;
  readonly reason: string;
}

/** The packages whose licence is not on the allow-list (none, missing, guessed, or copyleft). */
export function refusedNpmPackages(packages: readonly NpmPackage[]): Refusal[] {
  return packages.flatMap((p) => {
    const allowed = p.direct ? allowedNpmLicences : [...allowedNpmLicences, ...allowedTransitiveLicences];
    if (p.licences.length === 0) return [{ id: p.id, reason: 'declares no licence' }];
    // Several entries (the old `licenses` array) must each be acceptable; a guess ends in `*`
    // (the reader's mark for a licence read from a file's text, not declared): refused.
    const bad = p.licences.filter((l) => l.endsWith('*') || !isSpdxAllowed(l, allowed));
    return bad.length === 0 ? [] : [{ id: p.id, reason: `licence ${bad.join(', ')} is not on the allow-list (${allowed.join(', ')})` }];
  });
}

function isSpdxAllowed(expression: string, allowed: readonly string[]): boolean {
  try {
    return satisfies(expression, [...allowed]);
  } catch {
    return false; // not an SPDX expression at all (UNKNOWN, UNLICENSED, "Custom: …")
  }
}

/** Licence families recognised from a Go module's licence text. */
export type GoLicenceFamily = 'Apache-2.0' | 'MIT' | 'BSD' | 'ISC' | 'MPL-2.0' | 'AGPL' | 'GPL' | 'LGPL' | 'SSPL' | 'BUSL' | 'unknown' | 'none';

/** Families a binary built for the tests or benchmarks may come from. */
export const allowedGoFamilies: readonly GoLicenceFamily[] = ['Apache-2.0', 'MIT', 'BSD', 'ISC'];

/** The family of a module's LICENSE text; copyleft and source-available licences are checked first, since their texts may quote others. */
export function goLicenceFamily(text: string): GoLicenceFamily {
  if (text.trim() === '') return 'none';
  const t = text.replace(/\s+/g, ' ');
  if (/GNU AFFERO GENERAL PUBLIC LICENSE/i.test(t)) return 'AGPL';
  if (/Server Side Public License/i.test(t)) return 'SSPL';
  if (/Business Source License/i.test(t)) return 'BUSL';
  if (/GNU LESSER GENERAL PUBLIC LICENSE/i.test(t)) return 'LGPL';
  if (/GNU GENERAL PUBLIC LICENSE/i.test(t)) return 'GPL';
  if (/Apache License,? Version 2\.0/i.test(t)) return 'Apache-2.0';
  if (/Mozilla Public License,? (version )?2\.0/i.test(t)) return 'MPL-2.0';
  if (/Permission is hereby granted, free of charge/i.test(t)) return 'MIT';
  if (/Redistribution and use in source and binary forms/i.test(t)) return 'BSD';
  if (/Permission to use, copy, modify, and(\/or)? distribute this software for any purpose/i.test(t)) return 'ISC';
  return 'unknown';
}

/** A Go module a build script builds a binary from, with its licence text ('' when it has none). */
export interface GoModuleLicence {
  readonly module: string;
  readonly script: string;
  readonly text: string;
}

/** The modules whose licence is not a permissive one (or cannot be recognised). */
export function refusedGoModules(modules: readonly GoModuleLicence[]): Refusal[] {
  return modules.flatMap((m) => {
    const family = goLicenceFamily(m.text);
    if (allowedGoFamilies.includes(family)) return [];
    const what = family === 'none' ? 'has no licence file' : family === 'unknown' ? 'has a licence the gate does not recognise' : `is under ${family}`;
    return [{ id: m.module, reason: `${what} (built by ${m.script}); only ${allowedGoFamilies.join(', ')} may be built or run` }];
  });
}
