// Runs the PromQL compliance tester (github.com/prometheus/compliance/promql,
// built into the test cache) with the real Prometheus as reference and a
// target API (Tenantry's /prometheus with the tenant's key and X-Scope-OrgID),
// over its standard query suite, and sorts its JSON results into passed,
// unsupported (the target refused the construct with 400 bad_data) and
// failed (a supported query answered differently).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ComplianceTarget {
  readonly url: string;
  readonly basicAuthPassword?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface ComplianceOptions {
  readonly tester: string;
  readonly queriesFile: string;
  readonly dir: string;
  readonly referenceUrl: string;
  readonly target: ComplianceTarget;
  /** Unix seconds: the end of the range queries, and their range and step. */
  readonly end: number;
  readonly rangeSeconds: number;
  readonly stepSeconds: number;
  /** The demo targets' host, replacing the suite's demo.promlabs.com in its instance matchers. */
  readonly host: string;
}

export interface ComplianceCase {
  readonly query: string;
  readonly detail: string;
}

export interface ComplianceReport {
  readonly total: number;
  readonly passed: number;
  readonly unsupported: readonly ComplianceCase[];
  readonly failed: readonly ComplianceCase[];
  /** The tester's exit code (1 when anything did not pass, unsupported included). */
  readonly exitCode: number | null;
}

interface TesterResult {
  readonly testCase?: { readonly query?: string };
  readonly diff?: string;
  readonly unexpectedFailure?: string;
  readonly unexpectedSuccess?: boolean;
}

/** A refusal of a construct outside the supported set, as the Go client renders Tenantry's 400 bad_data answer. */
export function isUnsupportedRefusal(failure: string): boolean {
  return /bad_data/.test(failure) && /unsupported|not supported/i.test(failure);
}

/** How many refused queries name each construct (`unsupported function "x"` → `function "x"`). */
export function constructsOf(cases: readonly ComplianceCase[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const c of cases) {
    const name = /unsupported ([a-z ]+?"[^"]*")/i.exec(c.detail)?.[1] ?? c.detail.slice(0, 60);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return new Map([...counts].sort((a, b) => b[1] - a[1]));
}

function configYaml(o: ComplianceOptions): string {
  const headers = Object.entries(o.target.headers ?? {})
    .map(([k, v]) => `    ${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join('\n');
  return [
    'reference_target_config:',
    `  query_url: ${JSON.stringify(o.referenceUrl)}`,
    'test_target_config:',
    `  query_url: ${JSON.stringify(o.target.url)}`,
    ...(o.target.basicAuthPassword !== undefined
      ? ['  basic_auth_user: "compliance"', `  basic_auth_pass: ${JSON.stringify(o.target.basicAuthPassword)}`]
      : []),
    ...(headers !== '' ? ['  headers:', headers] : []),
    'query_time_parameters:',
    `  end_time: "${o.end}"`,
    `  range_in_seconds: ${o.rangeSeconds}`,
    `  resolution_in_seconds: ${o.stepSeconds}`,
    '',
  ].join('\n');
}

/** Runs the tester once and sorts its results. */
export async function runComplianceTester(o: ComplianceOptions): Promise<ComplianceReport> {
  const configFile = join(o.dir, 'compliance-target.yml');
  const queriesFile = join(o.dir, 'compliance-queries.yml');
  writeFileSync(configFile, configYaml(o));
  writeFileSync(queriesFile, readFileSync(o.queriesFile, 'utf8').replaceAll('demo.promlabs.com', o.host));
  const child = spawn(
    o.tester,
    [`-config-file=${configFile}`, `-config-file=${queriesFile}`, '-output-format=json', '-output-passing', '-query-parallelism=2'],
    { cwd: o.dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const exitCode = await new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      resolve(code);
    });
  });
  let parsed: { totalResults?: number; results?: TesterResult[] };
  try {
    parsed = JSON.parse(stdout) as typeof parsed;
  } catch {
    throw new Error(`compliance tester gave no JSON (exit ${exitCode}):\n${stdout.slice(0, 2000)}\n${stderr.slice(-2000)}`);
  }
  const results = parsed.results ?? [];
  const unsupported: ComplianceCase[] = [];
  const failed: ComplianceCase[] = [];
  let passed = 0;
  for (const r of results) {
    const query = r.testCase?.query ?? '?';
    const failure = r.unexpectedFailure ?? '';
    if ((r.diff ?? '') === '' && failure === '' && r.unexpectedSuccess !== true) passed += 1;
    else if (failure !== '' && isUnsupportedRefusal(failure)) unsupported.push({ query, detail: failure.slice(0, 200) });
    else failed.push({ query, detail: (failure !== '' ? failure : r.unexpectedSuccess === true ? 'unexpected success' : (r.diff ?? '')).slice(0, 600) });
  }
  return { total: parsed.totalResults ?? results.length, passed, unsupported, failed, exitCode };
}
