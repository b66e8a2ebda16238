// What converting one request produces: JSONEachRow text for one table, the
// number of rows in it, and the tally of rejected items.
import type { RejectionTally } from './tenant-resolver.ts';

export type TableName = 'spans' | 'logs' | 'metrics';

export interface RowBatch {
  readonly table: TableName;
  /** JSONEachRow rows, each ending in "\n" (text from the message converters, bytes from the direct ones). */
  readonly rows: string | Buffer;
  readonly rowCount: number;
  readonly rejected: RejectionTally;
}
