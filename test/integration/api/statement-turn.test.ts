// Issue 33, bench:isolation's heavy neighbour: on embedded ClickHouse the
// store runs two query statements at once, one per tenant (the store's two
// query connections, the gate's slots), so another tenant's query runs
// beside a tenant's long statement. When both slots hold long statements,
// the one that started first is killed once it has run the gate's turn
// (1 s) while a third tenant's query waits (503 naming the turn limit), and
// the waiting query runs at once; a tenant alone keeps its whole time
// limit. Checked through the store itself (system.processes) and the
// answers' timing.
import { expect } from 'chai';
import { createStoreGate } from '../../../src/clickhouse/store-gate.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../src/log/logger.ts';
import { embeddedTurnMs, storeGatePolicy } from '../../../src/target/store-gate-policy.ts';
import { createQueryRunner } from '../../../api/query/query-runner.ts';
import type { StoppableQueryRunner } from '../../../api/query/query-runner.ts';
import { ScanStatement } from '../../../api/query/tenant-scan.ts';
import type { QueryBudget, Statement } from '../../../api/query/tenant-scan.ts';
import type { Principal } from '../../../src/auth/api-keys.ts';
import { sharedStore } from '../../support/embedded-store.ts';

const principals = new Map<string, Principal>();
/** One key per name: the gate compares keys by identity. */
function principal(name: string): Principal {
  let p = principals.get(name);
  if (p === undefined) {
    p = { name, scopes: new Set(['read']), tenants: '*' } as unknown as Principal;
    principals.set(name, p);
  }
  return p;
}

/** The budget of a query of tenant `id` through its own key, with a time limit of a minute (and the client's signal, if given). */
function budgetOf(id: string, abort?: AbortSignal): QueryBudget {
  return { caller: { key: principal(id), tenant: { id, maxConcurrentQueries: 8 } }, timeoutMs: 60_000, ...(abort === undefined ? {} : { abort }) };
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

describe("api/a tenant's long statement runs beside other tenants' queries on embedded ClickHouse, and gives up its slot when all are taken", function () {
  this.timeout(60_000);
  let store: Store;
  let runner: StoppableQueryRunner;

  /** Statements running in the store other than the watcher's own. */
  async function running(): Promise<number> {
    const rs = await store.insertClients[0].query({ query: 'SELECT count() AS n FROM system.processes WHERE query_id != queryID()', format: 'JSONEachRow' });
    return Number((await rs.json<{ n: number | string }>())[0]?.n ?? 0);
  }

  /** Polls system.processes (the store reports no event when a statement starts or ends) until `want` holds; throws past `withinMs`. */
  async function until(want: (n: number) => boolean, withinMs: number, what: string): Promise<number> {
    const started = Date.now();
    for (;;) {
      if (want(await running())) return Date.now() - started;
      if (Date.now() - started > withinMs) throw new Error(`${what}: not within ${withinMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  before(async () => {
    store = await sharedStore();
    const gate = createStoreGate(storeGatePolicy('embedded', { maxConcurrentQueries: 8, embeddedTimeoutMs: 60_000, memoryLimitBytes: 2 * 1024 ** 3 }, 1000));
    runner = createQueryRunner({ client: store.client, mode: 'embedded', control: store.insertClients[1] }, 60_000, silentLogger, gate);
  });

  afterEach(async () => {
    await until((n) => n === 0, 5000, 'the store is idle after the test');
  });

  it("answers tenant B's query at once beside tenant A's long statement, which keeps running", async () => {
    const client = new AbortController();
    const a = runner.rows(heavy(budgetOf('a', client.signal)));
    await until((n) => n > 0, 10_000, "A's statement shows in system.processes");
    const asked = Date.now();
    const b = await runner.rows<{ one: number | string }>(trivial(budgetOf('b')));
    const bMs = Date.now() - asked;
    expect(b.ok).to.equal(true);
    if (b.ok) expect(Number(b.value[0]?.one)).to.equal(1);
    expect(bMs, "B runs in the other slot, not behind A's statement").to.be.below(500);
    expect(await running(), "A's statement still runs").to.equal(1);
    client.abort();
    const answer = await a;
    expect(answer.ok).to.equal(false);
    if (!answer.ok) expect(answer.error.message, 'A was not stopped for B').to.not.contain('turn');
  });

  it("with both slots held by A's and C's long statements, stops A's once it ran its turn for B's query, answers A 503 naming the turn, and B at once", async () => {
    const aStarted = Date.now();
    const a = runner.rows(heavy(budgetOf('a')));
    await until((n) => n > 0, 10_000, "A's statement shows in system.processes");
    const client = new AbortController();
    const c = runner.rows(heavy(budgetOf('c', client.signal)));
    await until((n) => n > 1, 10_000, "C's statement shows in system.processes");
    // A keeps its slot until it has run turnMs and someone waits: B arrives after that, so A must be stopped on B's arrival.
    await until(() => Date.now() - aStarted > embeddedTurnMs + 200, 5000, 'A has run past its turn');
    expect(await running(), 'no one waited: both ran past the turn').to.equal(2);
    const asked = Date.now();
    const b = await runner.rows<{ one: number | string }>(trivial(budgetOf('b')));
    const bMs = Date.now() - asked;
    expect(b.ok).to.equal(true);
    expect(bMs, "B waits only for the KILL of A's statement, not for its minute").to.be.below(1000);
    const answer = await a;
    expect(answer.ok).to.equal(false);
    if (!answer.ok) {
      expect(answer.error.code).to.equal('unavailable');
      expect(answer.error.message).to.contain(`its turn of ${embeddedTurnMs / 1000} s`);
    }
    expect(await running(), "C's statement, which started later, still runs").to.equal(1);
    client.abort();
    const cAnswer = await c;
    if (!cAnswer.ok) expect(cAnswer.error.message).to.not.contain('turn');
  });

  it("gives B's query a slot at most about turnMs after A's statement started when B came sooner, both slots held", async () => {
    const aStarted = Date.now();
    const a = runner.rows(heavy(budgetOf('a')));
    await until((n) => n > 0, 10_000, "A's statement shows in system.processes");
    const client = new AbortController();
    const c = runner.rows(heavy(budgetOf('c', client.signal)));
    await until((n) => n > 1, 10_000, "C's statement shows in system.processes");
    const b = await runner.rows(trivial(budgetOf('b')));
    const bAnsweredAfter = Date.now() - aStarted;
    expect(b.ok).to.equal(true);
    expect(bAnsweredAfter, 'A ran its turn, then was stopped for B').to.be.within(embeddedTurnMs, embeddedTurnMs + 1000);
    expect((await a).ok).to.equal(false);
    client.abort();
    await c;
  });

  it('lets a tenant alone run past the turn, and another query of the same tenant does not stop it', async () => {
    const client = new AbortController();
    const aStarted = Date.now();
    let settled = false;
    const a = runner.rows(heavy(budgetOf('a', client.signal))).finally(() => {
      settled = true;
    });
    await until((n) => n > 0, 10_000, "A's statement shows in system.processes");
    const own = runner.rows(trivial(budgetOf('a')));
    // Watched for three turns: the statement stays in the store and its answer does not come.
    await until(() => settled || Date.now() - aStarted > 3 * embeddedTurnMs, 10_000, 'three turns pass');
    expect(settled, "A's statement was not stopped").to.equal(false);
    expect(await running()).to.equal(1);
    client.abort();
    const answer = await a;
    expect(answer.ok).to.equal(false);
    if (!answer.ok) expect(answer.error.message).to.not.contain('turn');
    expect((await own).ok, "A's own next query ran once the first was cancelled").to.equal(true);
  });
});
