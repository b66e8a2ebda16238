// The one way a read API starts a statement. A multi-tenant store lives by two
// rules: a query sees only its tenant's rows, and never rows past the tenant's
// retention. Both are applied here and nowhere else:
// - a TenantScan is opened from the checked caller (its key, the tenant the
//   route found within the key's reach, the request's abort signal) and one
//   telemetry signal; it carries the tenant's query budget (the key's and the
//   tenant's concurrency limits, the tenant's time limit, the abort signal)
//   explicitly to the runner;
// - every range the query will read goes through `window`, which moves its
//   start up to the oldest row retention keeps and refuses a range longer
//   than limits.maxQueryDays (PromQL's range selectors, subqueries, offsets
//   and lookback included: the engine asks for its widest read range);
// - every statement starts from `statement()`, whose parameters bind the
//   tenant first, and reaches the runner only as a Statement made by it.
// The tenants directory (the admin list, one tenant's record) is read across
// tenants by design: a DirectoryScan limits it to the tenants the key reaches.
import type { Principal } from '../../src/auth/api-keys.ts';
import type { QueryCaller } from '../../src/clickhouse/store-gate.ts';
import type { Result } from '../../src/result.ts';
import { fail, ok } from '../../src/result.ts';
import { nsPerDay, oldestVisibleNs } from '../../src/tenant/settings/tenant-settings.ts';
import type { EffectiveSettings, TenantSettingsView } from '../../src/tenant/settings/tenant-settings.ts';
import type { ApiError } from '../http/api-error.ts';
import { invalidRequest } from '../http/api-error.ts';
import type { ParamType } from './sql-params.ts';
import { SqlParams } from './sql-params.ts';
import type { TimeRange } from './time-range.ts';

/** What opening a scan reads: the clock and the tenants' settings. */
export interface ScanDeps {
  readonly now: () => bigint;
  readonly settings: TenantSettingsView;
}

/** The telemetry a scan reads: retention is set per signal; usage (daily sums of all three) has neither retention nor a range limit. */
export type TelemetrySignal = 'logs' | 'traces' | 'metrics' | 'usage';

/** What one request's statements run within, carried from the request to the runner (never through ambient context). */
export interface QueryBudget {
  /** Whose turn the store gate counts: the key, and for a tenant's query the tenant with its limits.maxConcurrentQueries. */
  readonly caller: QueryCaller;
  /** The tenant's limits.queryTimeoutSeconds in ms, applied within the process's limit (absent: the process's alone). */
  readonly timeoutMs?: number;
  /** Aborts once the request's client stopped waiting: the runner then stops the statement. */
  readonly abort?: AbortSignal;
  /** The request's id, so that every log line the runner writes about the statement names it (absent: not run for a request). */
  readonly requestId?: string;
}

/** Who asks, as the route checked it: the key, the tenant within its reach, and the request's abort signal and id. */
export interface ScanCaller {
  readonly principal: Principal;
  readonly tenantId: string;
  readonly abort?: AbortSignal;
  readonly requestId?: string;
}

/** The request's part of a budget: its abort signal and its id, when the caller has them. */
function requestPart(caller: { readonly abort?: AbortSignal; readonly requestId?: string }): Pick<QueryBudget, 'abort' | 'requestId'> {
  return { ...(caller.abort === undefined ? {} : { abort: caller.abort }), ...(caller.requestId === undefined ? {} : { requestId: caller.requestId }) };
}

declare const made: unique symbol;

/** A statement the runner accepts: only a scan's `statement().finish()` makes one. */
export interface Statement {
  readonly sql: string;
  readonly params: SqlParams;
  readonly budget: QueryBudget;
  readonly [made]: true;
}

/** A statement being built: its parameters, with the scan's tenant bound first. */
export class ScanStatement {
  readonly params = new SqlParams();
  readonly #budget: QueryBudget;
  readonly #tenant: string | undefined;

  /** `tenants`: one tenant (bound as String), a list (Array(String)), or null for every tenant (the directory for an all-tenants key). */
  constructor(budget: QueryBudget, tenants: string | readonly string[] | null) {
    this.#budget = budget;
    if (tenants === null) this.#tenant = undefined;
    else this.#tenant = typeof tenants === 'string' ? this.params.bind(tenants, 'String') : this.params.bind([...tenants], 'Array(String)');
  }

  /** The tenant predicate on `column` (`tenant_id` unless the table names it otherwise), or `true` for an all-tenants directory read. */
  tenantIs(column = 'tenant_id'): string {
    if (this.#tenant === undefined) return 'true';
    return this.#tenant.includes('Array(') ? `${column} IN ${this.#tenant}` : `${column} = ${this.#tenant}`;
  }

  /** Binds a value and returns its placeholder. */
  bind(value: unknown, type: ParamType): string {
    return this.params.bind(value, type);
  }

  /** The statement the runner takes. */
  finish(sql: string): Statement {
    return { sql, params: this.params, budget: this.#budget } as Statement;
  }
}

/** The refusal of a range longer than limits.maxQueryDays. */
function tooLong(days: number, maxDays: number, signal: TelemetrySignal, what: string, narrow: string): ApiError {
  return invalidRequest(
    `the time range ${what}spans ${days} days (counted from the later of its start and the start of this tenant's ${signal} retention), ` +
      `more than this tenant's limits.maxQueryDays (${maxDays}): narrow ${narrow}`,
  );
}

/** One tenant's rows of one signal, read for one request within its budget. */
export class TenantScan {
  readonly tenantId: string;
  readonly signal: TelemetrySignal;
  readonly budget: QueryBudget;
  /** The oldest instant the tenant's retention of this signal keeps visible, Unix ns. */
  readonly visibleFromNs: bigint;
  readonly #maxQueryDays: number | undefined;

  private constructor(tenantId: string, signal: TelemetrySignal, settings: EffectiveSettings, budget: QueryBudget, nowNs: bigint) {
    this.tenantId = tenantId;
    this.signal = signal;
    this.budget = budget;
    this.visibleFromNs = signal === 'usage' ? 0n : oldestVisibleNs(settings, signal, nowNs);
    this.#maxQueryDays = signal === 'usage' ? undefined : settings.limits.maxQueryDays;
  }

  /** The scan of `caller.tenantId`'s `signal` under that tenant's settings now. */
  static open(deps: ScanDeps, caller: ScanCaller, signal: TelemetrySignal): TenantScan {
    const settings = deps.settings.effective(caller.tenantId);
    const { limits } = settings;
    const budget: QueryBudget = {
      caller: { key: caller.principal, tenant: { id: caller.tenantId, maxConcurrentQueries: limits.maxConcurrentQueries } },
      timeoutMs: limits.queryTimeoutSeconds * 1000,
      ...requestPart(caller),
    };
    return new TenantScan(caller.tenantId, signal, settings, budget, deps.now());
  }

  /**
   * The part of `range` the tenant may read: its start moves up to the oldest
   * visible instant (empty, at its end, when all of it is past retention); a
   * range whose visible part is longer than limits.maxQueryDays (plus
   * `graceNs`: the lookback a read adds before a range already checked) is a
   * 400; `what` names the range in that message, `narrow` what the client
   * narrows in its own API's words (default: "the time range").
   */
  window(range: TimeRange, options: { readonly graceNs?: bigint; readonly what?: string; readonly narrow?: string } = {}): Result<TimeRange, ApiError> {
    const oldest = this.visibleFromNs;
    const startNs = range.startNs > oldest ? range.startNs : oldest < range.endNs ? oldest : range.endNs;
    if (this.#maxQueryDays !== undefined && range.endNs - startNs > BigInt(this.#maxQueryDays) * nsPerDay + (options.graceNs ?? 0n)) {
      return fail(
        tooLong(
          Math.round((Number(range.endNs - startNs) / Number(nsPerDay)) * 10) / 10,
          this.#maxQueryDays,
          this.signal,
          options.what ?? '',
          options.narrow ?? 'the time range',
        ),
      );
    }
    return ok({ startNs, endNs: range.endNs });
  }

  /** A new statement of this scan. */
  statement(): ScanStatement {
    return new ScanStatement(this.budget, this.tenantId);
  }

  /**
   * A statement this query runs for the API's shared caches over the rows of
   * `tenants` (the series index it refreshes for every tenant in use, in its
   * own turn and budget): bound to exactly those tenants. What it reads goes
   * to each tenant's own cache entry, never into this query's answer.
   */
  cacheStatement(tenants: readonly string[]): ScanStatement {
    const [only] = tenants;
    return new ScanStatement(this.budget, tenants.length === 1 && only !== undefined ? only : tenants);
  }
}

/** The tenants directory as one key may read it: only the tenants it reaches. */
export class DirectoryScan {
  readonly budget: QueryBudget;
  readonly #tenants: readonly string[] | null;

  constructor(caller: { readonly principal: Principal; readonly abort?: AbortSignal; readonly requestId?: string }) {
    this.budget = { caller: { key: caller.principal }, ...requestPart(caller) };
    this.#tenants = caller.principal.tenants === '*' ? null : [...caller.principal.tenants];
  }

  /** A statement over the key's tenants. */
  statement(): ScanStatement {
    return new ScanStatement(this.budget, this.#tenants);
  }

  /** A statement about one tenant the route already found within the key's reach. */
  tenant(tenantId: string): ScanStatement {
    return new ScanStatement(this.budget, tenantId);
  }
}
