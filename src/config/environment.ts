// The only place that reads process.env and argv: it merges both into one
// record of TENANTRY_* strings, so a CLI flag --api-port=9090 and the
// variable TENANTRY_API_PORT=9090 are the same setting (the flag wins).
import { fail, ok } from '../result.ts';
import type { Result } from '../result.ts';

export type Settings = Readonly<Record<string, string | undefined>>;

export const prefix = 'TENANTRY_';

/** Maps `--otlp-http-port` to `TENANTRY_OTLP_HTTP_PORT`. */
export function flagToVariable(flag: string): string {
  return prefix + flag.replace(/^--/, '').replace(/-/g, '_').toUpperCase();
}

/** The command line: positional arguments (the target) and the settings its flags give. */
export interface ParsedArgs {
  readonly positional: readonly string[];
  readonly settings: Settings;
}

/** Splits argv into positional words and `--name=value` / `--name value` settings. */
export function parseArgs(argv: readonly string[]): Result<ParsedArgs, string> {
  const positional: string[] = [];
  const settings: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    if (eq > 0) {
      settings[flagToVariable(arg.slice(0, eq))] = arg.slice(eq + 1);
      continue;
    }
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) return fail(`flag ${arg} needs a value (${arg}=VALUE)`);
    settings[flagToVariable(arg)] = value;
    i++;
  }
  return ok({ positional, settings });
}

/** The TENANTRY_* variables of an environment, overlaid with CLI settings. */
export function collectSettings(env: NodeJS.ProcessEnv, cli: Settings): Settings {
  const merged: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) if (name.startsWith(prefix)) merged[name] = value;
  return { ...merged, ...cli };
}

/** The process's own environment; the single sanctioned read of process.env. */
export function processEnvironment(): NodeJS.ProcessEnv {
  return process.env;
}
