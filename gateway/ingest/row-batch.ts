// What converting one request produces: JSONEachRow text for one table, the
// number of rows in it, and the tally of rejected items.
import type { RejectionTally } from './tenant-resolver.ts';

export type TableName = 'spans' | 'logs' | 'metrics';

export interface RowBatch {
  readonly table: TableName;
  /** JSONEachRow rows, each ending in "\n". */
  readonly rows: string;
  readonly rowCount: number;
  readonly rejected: RejectionTally;
}
