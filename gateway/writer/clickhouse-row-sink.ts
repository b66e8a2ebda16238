// RowSink over the store's RowBinary insert (src/clickhouse/row-binary-insert.ts),
// for the embedded and server connections alike.
import { classifyStoreError } from '../../src/clickhouse/clickhouse-error.ts';
import { insertRowBinary, rowBinaryTarget } from '../../src/clickhouse/row-binary-insert.ts';
import type { RowBinaryTarget } from '../../src/clickhouse/row-binary-insert.ts';
import { logsTable, metricsTable, spansTable } from '../../src/clickhouse/schema/tables.ts';
import type { Store } from '../../src/clickhouse/store.ts';
import { openGate } from '../../src/clickhouse/store-gate.ts';
import type { StoreGate } from '../../src/clickhouse/store-gate.ts';
import { rowColumns } from '../rowbinary/row-batch.ts';
import type { TableName } from '../rowbinary/row-batch.ts';
import type { RowSink, SinkResult } from './row-sink.ts';

// Column types do not depend on retention; any retention gives the same columns.
const retention = { logsDays: 1, tracesDays: 1, metricsDays: 1 };

/** Where each table's rows go: the converters' column order with the table's types. */
export const rowTargets: Readonly<Record<TableName, RowBinaryTarget>> = {
  spans: rowBinaryTarget(spansTable(retention), rowColumns.spans),
  logs: rowBinaryTarget(logsTable(retention), rowColumns.logs),
  metrics: rowBinaryTarget(metricsTable(retention), rowColumns.metrics),
};

/** The sink; each INSERT passes `gate` (the process's store gate), which lets it run beside the API's queries on the store's INSERT connection. */
export function clickHouseRowSink(store: Store, gate: StoreGate = openGate): RowSink {
  return {
    async insert(table: TableName, chunks: readonly Buffer[], dedupToken: string): Promise<SinkResult> {
      if (chunks.length === 0) return { ok: true };
      try {
        await gate.insert(() => insertRowBinary(store, rowTargets[table], chunks, dedupToken));
        return { ok: true };
      } catch (error) {
        const failure = classifyStoreError(error);
        return { ok: false, kind: failure.kind, message: failure.message };
      }
    },
  };
}
