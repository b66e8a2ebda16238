// RowSink over the store's RowBinary insert (src/clickhouse/row-binary-insert.ts),
// for the embedded and server connections alike.
import type { ClickHouseClient } from '@clickhouse/client';
import { classifyStoreError } from '../../src/clickhouse/clickhouse-error.ts';
import { insertRowBinary, insertRowBinaryFile, rowBinaryTarget } from '../../src/clickhouse/row-binary-insert.ts';
import type { RowBinaryTarget } from '../../src/clickhouse/row-binary-insert.ts';
import { logsTable, metricsTable, spansTable } from '../../src/clickhouse/schema/tables.ts';
import type { Store } from '../../src/clickhouse/store.ts';
import { openGate } from '../../src/clickhouse/store-gate.ts';
import type { StoreGate } from '../../src/clickhouse/store-gate.ts';
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';
import { rowColumns } from '../rowbinary/row-batch.ts';
import type { TableName } from '../rowbinary/row-batch.ts';
import type { RowSink, RowSource, WriteFailure } from './row-sink.ts';

// Column types do not depend on retention; any retention gives the same columns.
const retention = { logsDays: 1, tracesDays: 1, metricsDays: 1 };

/** Where each table's rows go: the converters' column order with the table's types. */
export const rowTargets: Readonly<Record<TableName, RowBinaryTarget>> = {
  spans: rowBinaryTarget(spansTable(retention), rowColumns.spans),
  logs: rowBinaryTarget(logsTable(retention), rowColumns.logs),
  metrics: rowBinaryTarget(metricsTable(retention), rowColumns.metrics),
};

/**
 * The sink; each INSERT passes `gate` (the process's store gate), which lets
 * it run beside the API's queries on one of the store's INSERT connections.
 * An embedded connection runs one INSERT at a time: concurrent INSERTs lease
 * one each, and wait for one when all are busy.
 */
export function clickHouseRowSink(store: Store, gate: StoreGate = openGate): RowSink {
  const connections = store.mode === 'embedded' ? new Lease(store.insertClients) : undefined;
  return {
    async insert(table: TableName, rows: RowSource, dedupToken: string): Promise<Result<void, WriteFailure>> {
      if ('chunks' in rows && rows.chunks.length === 0) return ok(undefined);
      const run = (client?: ClickHouseClient): Promise<void> =>
        'file' in rows
          ? insertRowBinaryFile(store, rowTargets[table], rows.file, dedupToken, client)
          : insertRowBinary(store, rowTargets[table], rows.chunks, dedupToken, client);
      try {
        await gate.insert(async () => {
          if (connections === undefined) {
            await run();
            return;
          }
          const client = await connections.take();
          try {
            await run(client);
          } finally {
            connections.give(client);
          }
        });
        return ok(undefined);
      } catch (error) {
        const failure = classifyStoreError(error);
        return fail({ kind: failure.kind, message: failure.message });
      }
    },
  };
}

/** Items used by one holder at a time: take() resolves with a free one, in the order asked. */
class Lease<T> {
  readonly #free: T[];
  readonly #waiting: Array<(item: T) => void> = [];

  constructor(items: readonly T[]) {
    this.#free = [...items];
  }

  take(): Promise<T> {
    const item = this.#free.pop();
    return item === undefined
      ? new Promise((resolve) => {
          this.#waiting.push(resolve);
        })
      : Promise.resolve(item);
  }

  give(item: T): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#free.push(item);
    else next(item);
  }
}
