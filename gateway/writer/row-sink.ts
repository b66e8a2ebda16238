// The port through which the group-commit writer stores rows. Failures are
// values, classified by the adapter (the only place that knows ClickHouse).
import type { StoreFailureKind } from '../../src/clickhouse/clickhouse-error.ts';
import type { TableName } from '../rowbinary/row-batch.ts';

export type SinkResult = { readonly ok: true } | { readonly ok: false; readonly kind: StoreFailureKind; readonly message: string };

export interface RowSink {
  /**
   * Inserts RowBinary chunks (each whole rows, in rowColumns order) into one
   * table, in one INSERT; a block with a token already stored is skipped.
   */
  insert(table: TableName, chunks: readonly Buffer[], dedupToken: string): Promise<SinkResult>;
}
