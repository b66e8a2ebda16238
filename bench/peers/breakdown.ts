// Where a Tenantry query's time goes, for every case bench:peers finds it
// slower than its peer: with Tenantry stopped, its embedded store is opened in
// this process and the same /v1 call is replayed without HTTP, the way
// bench:promql and bench:query split theirs. Per call, p50 over the same picks:
//   planning   EXPLAIN of the page statement (parse, analysis, plan; nothing read)
//   statement  the page statement run and its rows read as JSON (reading + decoding)
//   API        the route's own function (plan, statement, rows to records)
//   SELECT 1   the least one statement costs in this store
// and, from the HTTP timing of the same case: HTTP + encoding = HTTP − API.
import { isRight } from 'fp-ts/lib/Either.js';
import { logPage } from '../../api/v1/logs/log-queries.ts';
import { LogRequest } from '../../api/v1/logs/log-codecs.ts';
import { createQueryRunner } from '../../api/query/query-runner.ts';
import { DirectoryScan } from '../../api/query/tenant-scan.ts';
import type { Statement } from '../../api/query/tenant-scan.ts';
import type { Principal } from '../../src/auth/api-keys.ts';
import { TraceRequest } from '../../api/v1/traces/trace-codecs.ts';
import { tracePage } from '../../api/v1/traces/trace-queries.ts';
import { statementOf } from '../recording-runner.ts';
import type { RouteDeps } from '../../api/query/deps.ts';
import { openStore } from '../../src/clickhouse/store.ts';
import { silentLogger } from '../../src/log/logger.ts';
import type { Pick, QueryCase, QueryTiming, Window } from './queries.ts';
import { fixedSettings } from '../../support/fixed-settings.ts';

export interface Breakdown {
  readonly name: string;
  readonly httpP50: number;
  readonly apiP50: number;
  readonly statementP50: number;
  readonly planningP50: number;
  readonly selectOneP50: number;
}

const p50 = (ms: number[]): number => {
  const sorted = [...ms].sort((a, b) => a - b);
  return Math.round((sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN) * 10) / 10;
};

/** Replays each case Tenantry lost (p95 above its peer's) in-process on Tenantry's data in `dataDir` (Tenantry must be stopped). */
export async function breakdowns(
  dataDir: string,
  cases: readonly QueryCase[],
  timings: readonly QueryTiming[],
  picks: readonly Pick[],
  window: Window,
  calls: number,
): Promise<Breakdown[]> {
  const lost = cases.filter((c) => {
    const t = timings.find((x) => x.name === c.name && x.system === 'tenantry');
    const peer = timings.find((x) => x.name === c.name && x.system === c.peer);
    return t !== undefined && peer !== undefined && !(t.p95 <= peer.p95);
  });
  if (lost.length === 0) return [];
  const opened = await openStore({ kind: 'embedded', dataDir, database: 'tenantry' });
  if (!opened.ok) throw new Error(opened.error);
  const store = opened.value;
  try {
    const runner = createQueryRunner(store, 30_000, silentLogger);
    const deps: RouteDeps = {
      schema: { database: 'tenantry', cluster: undefined },
      runner,
      now: () => BigInt(Date.now()) * 1_000_000n,
      pageMaxBytes: 8 * 1_048_576,
      settings: fixedSettings(),
    };
    const out: Breakdown[] = [];
    const one: number[] = [];
    for (let i = 0; i < calls; i++) {
      const t0 = performance.now();
      if (!(await runner.rows(new DirectoryScan({ principal: everyTenant }).statement().finish('SELECT 1 AS one'))).ok) throw new Error('SELECT 1 failed');
      one.push(performance.now() - t0);
    }
    for (const c of lost) {
      const api: number[] = [];
      const statement: number[] = [];
      const planning: number[] = [];
      for (let i = 0; i < calls; i++) {
        const pick = picks[(i * 7919) % picks.length];
        if (pick === undefined) break;
        const call = c.tenantry(pick, window);
        // The route's own decoding of the body, then its own functions.
        const built = await routeCall(deps, call.route, call.tenant, call.body);
        let t0 = performance.now();
        if (!(await built.page()).ok) throw new Error(`${c.name}: the API function failed`);
        api.push(performance.now() - t0);
        t0 = performance.now();
        if (!(await runner.rows(built.statement)).ok) throw new Error(`${c.name}: the statement failed`);
        statement.push(performance.now() - t0);
        t0 = performance.now();
        if (!(await runner.rows({ ...built.statement, sql: `EXPLAIN ${built.statement.sql}` })).ok) throw new Error(`${c.name}: EXPLAIN failed`);
        planning.push(performance.now() - t0);
      }
      const http = timings.find((x) => x.name === c.name && x.system === 'tenantry')?.p50 ?? Number.NaN;
      out.push({ name: c.name, httpP50: http, apiP50: p50(api), statementP50: p50(statement), planningP50: p50(planning), selectOneP50: p50(one) });
    }
    return out;
  } finally {
    await store.close();
  }
}

interface Built {
  readonly statement: Statement;
  page(): Promise<{ ok: boolean }>;
}

/** An all-tenants key: the bench calls the routes' functions as they would for any tenant. */
const everyTenant: Principal = { name: 'bench', scopes: new Set(['read'] as const), tenants: '*' };

/** The route's own decoding of the body, its handler (page), and the statement that handler runs, recorded (../recording-runner.ts). */
async function routeCall(deps: RouteDeps, route: 'logs' | 'traces', tenant: string, body: Record<string, unknown>): Promise<Built> {
  const caller = { principal: everyTenant, tenantId: tenant };
  if (route === 'logs') {
    const decoded = LogRequest.decode(body);
    if (!isRight(decoded)) throw new Error('a logs body the route would refuse');
    const q = decoded.right;
    return { statement: await statementOf(deps, (d) => logPage(d, caller, q)), page: () => logPage(deps, caller, q) };
  }
  const decoded = TraceRequest.decode(body);
  if (!isRight(decoded)) throw new Error('a traces body the route would refuse');
  const q = decoded.right;
  return { statement: await statementOf(deps, (d) => tracePage(d, caller, q)), page: () => tracePage(deps, caller, q) };
}

/** The breakdown lines for the report. */
export function breakdownLines(rows: readonly Breakdown[]): string[] {
  if (rows.length === 0) return [];
  const cell = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '—').padStart(9);
  const lines = [
    "Where Tenantry's time goes in the cases it loses (p50 ms; in one process on its data, Tenantry stopped; HTTP + encoding = HTTP − API):",
    `  ${'case'.padEnd(44)} ${'HTTP'.padStart(9)} ${'API'.padStart(9)} ${'statement'.padStart(9)} ${'planning'.padStart(9)} ${'SELECT 1'.padStart(9)} ${'HTTP+enc'.padStart(9)}`,
  ];
  for (const r of rows)
    lines.push(
      `  ${r.name.padEnd(44)} ${cell(r.httpP50)} ${cell(r.apiP50)} ${cell(r.statementP50)} ${cell(r.planningP50)} ${cell(r.selectOneP50)} ${cell(r.httpP50 - r.apiP50)}`,
    );
  lines.push("  (statement = planning + reading + ClickHouse's JSON; API − statement = page planning and rows to records in TypeScript)");
  return lines;
}
