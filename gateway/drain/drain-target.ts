// Target `drain` (`tenantry drain`, the operator's drain Job,
// operator/desired/wal-drain-job.ts): inserts the write-ahead log in
// TENANTRY_WAL_DIR into the ClickHouse the settings name, configured exactly as
// the gateway that wrote it, and answers 0 when nothing is left, 1 otherwise
// (the Job retries with backoff). An empty log exits 0 without ClickHouse: a
// replica that drained on its stop leaves nothing to insert, and its claim
// should go even while ClickHouse is down.
import type { StorageConfig, WriterConfig } from '../../src/config/config.ts';
import { openStore } from '../../src/clickhouse/store.ts';
import type { Logger } from '../../src/log/logger.ts';
import type { RunDrain } from '../../src/target/component.ts';
import { clickHouseRowSink } from '../writer/clickhouse-row-sink.ts';
import { countSegments, drainLogDirectory } from './wal-drain.ts';

/** How long one attempt waits for ClickHouse before the Job's next attempt takes over. */
const attemptTimeoutMs = 10 * 60_000;

/** The drain target: 0 when the log is empty at the end, 1 when segments are left (or ClickHouse cannot be opened). */
export const runDrain: RunDrain = async (config: { readonly storage: StorageConfig; readonly writer: WriterConfig }, log: Logger): Promise<number> => {
  if ((await countSegments(config.writer.logDir)) === 0) {
    log.info('write-ahead log drained', { dir: config.writer.logDir, segmentsFound: 0, rowsInserted: 0, rowsDeadLettered: 0 });
    return 0;
  }
  const opened = await openStore(config.storage.clickhouse);
  if (!opened.ok) {
    log.error(opened.error);
    return 1;
  }
  try {
    const drained = await drainLogDirectory(clickHouseRowSink(opened.value), config.writer, log, attemptTimeoutMs);
    if (!drained.ok) {
      log.error('write-ahead log not drained; the next attempt goes on', { message: drained.error.message, segmentsLeft: drained.error.segmentsLeft });
      return 1;
    }
    log.info('write-ahead log drained', { dir: config.writer.logDir, ...drained.value });
    return 0;
  } finally {
    await opened.value.close();
  }
};
