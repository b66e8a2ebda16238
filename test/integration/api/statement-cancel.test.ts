// Issue 33: a statement the client no longer waits for stops inside embedded
// ClickHouse, not only in JavaScript. chDB's own abort only settles the
// promise (the engine runs on, and every bound statement of the process
// waits behind it); the runner kills it by name. Checked here through the
// store itself: system.processes shows no statement within a second of the
// cancellation, and another caller's next query answers at once.
import { expect } from 'chai';
import { createStoreGate } from '../../../src/clickhouse/store-gate.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { storeGatePolicy } from '../../../src/target/store-gate-policy.ts';
import { createQueryRunner } from '../../../api/query/query-runner.ts';
import type { StoppableQueryRunner } from '../../../api/query/query-runner.ts';
import { ScanStatement } from '../../../api/query/tenant-scan.ts';
import type { QueryBudget, Statement } from '../../../api/query/tenant-scan.ts';
import type { Principal } from '../../../src/auth/api-keys.ts';
import { sharedStore } from '../../support/embedded-store.ts';

const principal = (name: string): Principal => ({ name, scopes: new Set(['read']), tenants: '*' }) as unknown as Principal;

/** The budget of a query of tenant `id` (time limit `timeoutMs`, the client's signal if given). */
function budgetOf(id: string, timeoutMs = 60_000, abort?: AbortSignal): QueryBudget {
  return { caller: { key: principal(id), tenant: { id, maxConcurrentQueries: 8 } }, timeoutMs, ...(abort === undefined ? {} : { abort }) };
}

/** A GROUP BY over two billion numbers: about a minute on one thread, far longer than any test waits. */
function heavy(budget: QueryBudget): Statement {
  const s = new ScanStatement(budget, budget.caller.tenant?.id ?? '');
  return s.finish(
    `SELECT number % ${s.bind(10_000_000, 'UInt64')} AS k, count() AS c FROM numbers(${s.bind(2_000_000_000, 'UInt64')}) GROUP BY k ORDER BY k LIMIT 1`,
  );
}

function trivial(budget: QueryBudget): Statement {
  const s = new ScanStatement(budget, budget.caller.tenant?.id ?? '');
  return s.finish(`SELECT ${s.bind(1, 'UInt64')} AS one`);
}

describe('api/cancelled statements stop inside embedded ClickHouse', function () {
  this.timeout(60_000);
  let store: Store;
  let runner: StoppableQueryRunner;

  /** Statements running in the store other than the watcher's own. */
  async function running(): Promise<number> {
    const rs = await store.insertClients[0].query({ query: 'SELECT count() AS n FROM system.processes WHERE query_id != queryID()', format: 'JSONEachRow' });
    return Number((await rs.json<{ n: number | string }>())[0]?.n ?? 0);
  }

  /** Polls system.processes until no statement runs (the store reports no event when one ends); the ms it took, or -1 past `withinMs`. */
  async function goneWithin(withinMs: number): Promise<number> {
    const started = Date.now();
    while (Date.now() - started < withinMs) {
      if ((await running()) === 0) return Date.now() - started;
      await new Promise((r) => setTimeout(r, 20));
    }
    return -1;
  }

  before(async () => {
    store = await sharedStore();
    const gate = createStoreGate(storeGatePolicy('embedded', { maxConcurrentQueries: 8, embeddedTimeoutMs: 60_000, memoryLimitBytes: 2 * 1024 ** 3 }, 1000));
    runner = createQueryRunner({ client: store.client, mode: 'embedded', control: store.insertClients[1] }, 60_000, silentLogger, gate);
  });

  /** Waits until the heavy statement shows in system.processes (no event says it started): polls, bounded by 10 s. */
  async function untilRunning(): Promise<void> {
    const started = Date.now();
    while ((await running()) === 0) {
      if (Date.now() - started > 10_000) throw new Error('the heavy statement never started');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('a statement whose client went away is gone from system.processes within a second, and the next caller answers at once', async () => {
    const client = new AbortController();
    const answer = runner.rows(heavy(budgetOf('a', 60_000, client.signal)));
    await untilRunning();
    const cancelledAt = Date.now();
    client.abort();
    const result = await answer;
    expect(result.ok).to.equal(false);
    expect(Date.now() - cancelledAt, 'the runner answers once the statement ended').to.be.below(1000);
    const gone = await goneWithin(1000);
    expect(gone, 'no statement runs in the store within 1 s').to.be.at.least(0);
    const asked = Date.now();
    const next = await runner.rows<{ one: number }>(trivial(budgetOf('b')));
    expect(next.ok).to.equal(true);
    expect(Date.now() - asked, "another caller's trivial query does not wait behind it").to.be.below(1000);
  });

  it("a statement past its tenant's time limit is gone at the limit, and the next caller answers at once", async () => {
    const started = Date.now();
    const result = await runner.rows(heavy(budgetOf('slow', 1000)));
    expect(result.ok).to.equal(false);
    if (!result.ok) expect(result.error.code).to.equal('unavailable');
    expect(Date.now() - started, 'answered within a second of its 1 s limit').to.be.below(2000);
    expect(await goneWithin(1000)).to.be.at.least(0);
    const asked = Date.now();
    expect((await runner.rows(trivial(budgetOf('b')))).ok).to.equal(true);
    expect(Date.now() - asked).to.be.below(1000);
  });

  it('stopAll kills the statement in flight at once (shutdown) and refuses new ones with 503', async () => {
    const answer = runner.rows(heavy(budgetOf('a')));
    await untilRunning();
    const stoppedAt = Date.now();
    await runner.stopAll();
    const result = await answer;
    expect(Date.now() - stoppedAt).to.be.below(1000);
    expect(result.ok).to.equal(false);
    if (!result.ok) expect(result.error.message).to.contain('shutting down');
    expect(await goneWithin(1000)).to.be.at.least(0);
    const refused = await runner.rows(trivial(budgetOf('b')));
    expect(refused.ok).to.equal(false);
    if (!refused.ok) expect(refused.error.code).to.equal('unavailable');
  });
});
