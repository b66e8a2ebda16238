// Drains a write-ahead-log directory another gateway left behind: a replica
// scaled away while ClickHouse was down leaves acknowledged segments on its
// volume, and nothing would ever start on that volume again
// (docs/adr/0007-gateway-wal-volumes.md). It opens the directory as the
// gateway's own writer does on start (which inserts what it finds, each
// segment once: its INSERT carries the segment's deduplication token, and the
// segment is deleted only after the INSERT succeeded), accepts no rows of its
// own, waits until everything found is inserted, and says what is left.
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { WriterConfig } from '../../src/config/config.ts';
import type { Logger } from '../../src/log/logger.ts';
import { fail, ok } from '../../src/result.ts';
import type { Result } from '../../src/result.ts';
import type { TableName } from '../rowbinary/row-batch.ts';
import { LoggedWriter } from '../writer/logged-writer.ts';
import type { WriterObserver } from '../writer/logged-writer.ts';
import type { RowSink } from '../writer/row-sink.ts';

/** Where the writer keeps rows ClickHouse refused (logged-writer.ts). */
const deadLetterFolder = 'dead-letter';

export interface DrainReport {
  /** Segments found on open, and rows inserted from them. */
  readonly segmentsFound: number;
  readonly rowsInserted: number;
  /** Rows ClickHouse refused as unparseable, kept in the directory's dead-letter folder (they go with the volume). */
  readonly rowsDeadLettered: number;
}

export interface DrainFailure {
  readonly message: string;
  /** Segments still in the directory: inserted by a later drain. */
  readonly segmentsLeft: number;
}

/** The segments in a log directory: one index file `*.wal` each, in a folder per table (the dead-letter folder is not the log). */
export async function countSegments(dir: string): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  let n = entries.filter((e) => e.isFile() && e.name.endsWith('.wal')).length;
  for (const e of entries) if (e.isDirectory() && e.name !== deadLetterFolder) n += await countSegments(join(dir, e.name));
  return n;
}

/**
 * Inserts every segment in `config.logDir` through `sink`; fails when some are
 * still there after `timeoutMs` (ClickHouse down or too slow), having stopped
 * the writer so that a later drain finds them intact.
 */
export async function drainLogDirectory(sink: RowSink, config: WriterConfig, log: Logger, timeoutMs: number): Promise<Result<DrainReport, DrainFailure>> {
  const segmentsFound = await countSegments(config.logDir);
  let rowsInserted = 0;
  let rowsDeadLettered = 0;
  const observer: WriterObserver = {
    inserted: (stats) => {
      if (stats.ok) rowsInserted += stats.rows;
    },
    deadLettered: (table: TableName, rows: number, reason: string) => {
      rowsDeadLettered += rows;
      log.error('ClickHouse refused rows as unparseable; kept in the dead-letter folder', { table, rows, reason });
    },
    submitted: () => undefined,
    health: (condition, healthy, message) => {
      if (healthy) log.info('writes succeed again', { condition });
      else log.warn('writes fail; the segments stay and are retried', { condition, message });
    },
  };
  log.info('draining write-ahead log', { dir: config.logDir, segments: segmentsFound });
  const writer = await LoggedWriter.open(sink, config, observer);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      resolve('timeout');
    }, timeoutMs);
  });
  const outcome = await Promise.race([writer.flush().then(() => 'drained' as const), timedOut]);
  clearTimeout(timer);
  await writer.stop();
  const segmentsLeft = await countSegments(config.logDir);
  if (outcome === 'timeout' || segmentsLeft > 0) {
    return fail({ message: `${segmentsLeft} of ${segmentsFound} segments not inserted within ${timeoutMs} ms`, segmentsLeft });
  }
  return ok({ segmentsFound, rowsInserted, rowsDeadLettered });
}
