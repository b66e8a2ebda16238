// The breakdown's live ingest (BENCH_PROMQL_LIVE=1): with Tenantry stopped
// and its data opened in the bench process, new points keep arriving as
// the gateway would insert them: once a second (TENANTRY_BATCH_MAX_DELAY_MS)
// one INSERT of the points scraped in that second, i.e. a fifteenth of the
// tenants' narrow series (each tenant one point every 15 s) and, every 15 s,
// one wide tenant's 10,000 series (each wide tenant every 60 s). A point is
// its series' last loaded row with its time moved past the loaded data, so
// every INSERT is a new part of the dataset's own shapes and the table's
// background merges run as under ingest; the timed range ends before them,
// so answers do not change. Bounded: it stops when told or after `maxMs`.
import { queryTable } from '../../src/clickhouse/schema/ddl.ts';
import type { Store } from '../../src/clickhouse/store.ts';
import type { Layout } from './dataset.ts';
import { stepSeconds, tenantName, wideSeries, wideStepSeconds } from './dataset.ts';

/** What the local ingest did. */
export interface LocalIngestStats {
  readonly inserts: number;
  readonly failed: number;
  readonly ms: number;
}

/** A local ingest under way. */
export interface LocalIngest {
  stop(): Promise<LocalIngestStats>;
}

const tickMs = 1000;

/** Starts inserting once a second into `store`'s metrics table; `lastSecond` is the loaded data's last point (narrow and wide). */
export function startLocalIngest(store: Store, l: Layout, lastSecond: number, maxMs: number): LocalIngest {
  const table = queryTable(store, 'metrics');
  const wideName = wideSeries(1)[0]?.name ?? '';
  const narrowTicks = stepSeconds;
  const started = Date.now();
  const stats = { inserts: 0, failed: 0 };
  let tick = 0;
  let stopped = false;
  let running: Promise<void> = Promise.resolve();

  const insert = async (k: number): Promise<void> => {
    const narrow = Array.from({ length: l.tenants }, (_, t) => t)
      .filter((t) => t % narrowTicks === k % narrowTicks)
      .map(tenantName);
    const narrowShiftS = stepSeconds * (Math.floor(k / narrowTicks) + 1);
    // Every 15 ticks one wide tenant in turn, so each gets a point every 60 s when there are four.
    const wideTurn = k % narrowTicks === 0 ? l.wideTenants[(k / narrowTicks) % Math.max(1, l.wideTenants.length)] : undefined;
    const wideShiftS = wideStepSeconds * (Math.floor(k / (narrowTicks * Math.max(1, l.wideTenants.length))) + 1);
    const query = `INSERT INTO ${table}
      SELECT * REPLACE (timestamp + toIntervalSecond(if(metric_name = {wide:String}, {wideShift:Int64}, {narrowShift:Int64})) AS timestamp)
      FROM ${table}
      WHERE timestamp = fromUnixTimestamp64Milli({last:Int64})
        AND ((tenant_id IN {narrow:Array(String)} AND metric_name != {wide:String}) OR (tenant_id = {wideTenant:String} AND metric_name = {wide:String}))`;
    try {
      await store.client.command({
        query,
        query_params: {
          wide: wideName,
          wideShift: wideShiftS,
          narrowShift: narrowShiftS,
          last: lastSecond * 1000,
          narrow,
          wideTenant: wideTurn === undefined ? '' : tenantName(wideTurn),
        },
      });
      stats.inserts += 1;
    } catch {
      stats.failed += 1;
    }
  };

  const timer = setInterval(() => {
    if (stopped || Date.now() - started > maxMs) return;
    const k = tick++;
    // One INSERT at a time, as the writer sends them.
    running = running.then(() => insert(k));
  }, tickMs);
  timer.unref();

  return {
    async stop(): Promise<LocalIngestStats> {
      stopped = true;
      clearInterval(timer);
      await running;
      return { ...stats, ms: Date.now() - started };
    },
  };
}
