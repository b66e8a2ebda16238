// The embedded store's connections as one: chDB runs one statement at a
// time per connection, so the store opens several on the same data
// directory and this adapter sends each statement to an idle one (else the
// one with the fewest in flight). The store gate lets fewer query
// statements run at once than there are connections, so a query finds an
// idle connection even beside a long one and a statement that does not
// pass the gate. Every statement goes without bound parameters (its
// placeholders inlined, ./inline-params.ts explains why): with them chDB
// would run one at a time in the whole process however many connections
// there are. It also keeps the write epoch (./write-epoch.ts) and clears
// a failed statement's leftover entry in system.processes, which stays
// until its connection's next statement.
import type { createClient } from '@clickhouse/client';
import { inlineParams } from './inline-params.ts';
import { readOnly, writtenTable } from './write-epoch.ts';
import type { WriteEpoch } from './write-epoch.ts';

/** A connection as @clickhouse/client's createClient takes it. */
export type ClientConnection = NonNullable<NonNullable<Parameters<typeof createClient>[0]>['connection']>;

/**
 * Longest statement text a connection parses (ClickHouse's default is 256 KiB): inlined values are part of the text
 * now, and a statement binds up to 256 KiB of label values (series-matchers.ts) plus their quoting.
 */
export const maxQueryBytes = 4 * 1024 ** 2;

/** One connection of the pool, with the statements it runs, set up once before its first. */
interface Slot {
  readonly connection: ClientConnection;
  inFlight: number;
  ready: Promise<unknown> | undefined;
}

/** The params of a connection call without its bound parameters: the statement carries them as literals. */
function inlined<P extends { query: string; query_params?: Record<string, unknown> }>(params: P): P {
  if (params.query_params === undefined) return params;
  const { query_params: values, ...rest } = params;
  return { ...rest, query: inlineParams(params.query, values) } as P;
}

/** `connections` (chDB, one data directory) as one connection; statements that may write are counted in `writes`. */
export function pooledConnection(connections: readonly ClientConnection[], writes: WriteEpoch): ClientConnection {
  if (connections.length === 0) throw new Error('bug: a pool of no connections');
  const slots: Slot[] = connections.map((connection) => ({ connection, inFlight: 0, ready: undefined }));

  const leastBusy = (): Slot => slots.reduce((best, s) => (s.inFlight < best.inFlight ? s : best));

  /** Runs `call` on the least busy connection, counted as a write unless it only reads; `clear`: a failure leaves an entry to clear. */
  async function run<T>(sql: string, call: (c: ClientConnection) => Promise<T>, clear: boolean): Promise<T> {
    const slot = leastBusy();
    const write = readOnly(sql) ? undefined : writes.begin(writtenTable(sql));
    slot.inFlight++;
    try {
      // A session setting (it holds for the connection's later statements): the text must be parsed before its SETTINGS clause is read.
      slot.ready ??= slot.connection.command({ query: `SET max_query_size = ${maxQueryBytes}` }).catch((error: unknown) => {
        // Tried again by the next statement rather than failing every later one.
        slot.ready = undefined;
        throw error;
      });
      await slot.ready;
      return await call(slot.connection);
    } catch (error) {
      if (clear) {
        try {
          await slot.connection.command({ query: 'SELECT 1' });
        } catch {
          // Only bookkeeping: the failed statement itself no longer runs.
        }
      }
      throw error;
    } finally {
      slot.inFlight--;
      write?.end();
    }
  }

  return {
    ping: (params) => run('SELECT 1', (c) => c.ping(params), false),
    query: (params) => {
      const p = inlined(params);
      return run(p.query, (c) => c.query(p), true);
    },
    exec: (params) => {
      const p = inlined(params);
      return run(p.query, (c) => c.exec(p), true);
    },
    command: (params) => {
      const p = inlined(params);
      return run(p.query, (c) => c.command(p), true);
    },
    insert: (params) => {
      const p = inlined(params);
      // The client's INSERT text (`INSERT INTO db.table … FORMAT …`) names its table; anything else still counts as a write.
      return run(/^\s*INSERT\b/i.test(p.query) ? p.query : `INSERT ${p.query}`, (c) => c.insert(p), false);
    },
    close: async () => {
      await Promise.all(slots.map((s) => s.connection.close()));
    },
  };
}
