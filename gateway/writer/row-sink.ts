// The port through which the group-commit writer stores rows. Failures are
// values, classified by the adapter (the only place that knows ClickHouse).
import type { StoreFailureKind } from '../../src/clickhouse/clickhouse-error.ts';
import type { Result } from '../../src/result.ts';
import type { TableName } from '../rowbinary/row-batch.ts';

/** Why rows were not written: the kind (a store failure's, or the writer's own such as 'overloaded'), and what happened. */
export interface WriteFailure<K extends string = StoreFailureKind> {
  readonly kind: K;
  readonly message: string;
}

/**
 * A block's RowBinary rows (whole rows, in rowColumns order): chunks in
 * memory, or a file holding nothing else (a write-ahead-log segment's rows
 * file, which ClickHouse reads itself).
 */
export type RowSource = { readonly chunks: readonly Buffer[] } | { readonly file: string };

export interface RowSink {
  /** Inserts the rows into one table, in one INSERT; a block with a token already stored is skipped. */
  insert(table: TableName, rows: RowSource, dedupToken: string): Promise<Result<void, WriteFailure>>;
}
