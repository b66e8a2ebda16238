#!/usr/bin/env node
// The drain Job's process (operator/desired/wal-drain-job.ts): drains the
// write-ahead log in TENANTRY_WAL_DIR into the ClickHouse the gateway
// settings name, then exits 0 when nothing is left, 1 otherwise (the Job
// retries with backoff). Configured exactly as the gateway target is.
import { decodeConfig } from '../../src/config/config.ts';
import { collectSettings, processEnvironment } from '../../src/config/environment.ts';
import { openStore } from '../../src/clickhouse/store.ts';
import { createLogger } from '../../src/log/logger.ts';
import { clickHouseRowSink } from '../writer/clickhouse-row-sink.ts';
import { drainLogDirectory } from './wal-drain.ts';

/** How long one attempt waits for ClickHouse before the Job's next attempt takes over. */
const attemptTimeoutMs = 10 * 60_000;

async function main(): Promise<number> {
  const decoded = decodeConfig('gateway', collectSettings(processEnvironment(), {}));
  if (!decoded.ok) {
    process.stderr.write(`tenantry drain: invalid configuration:\n${decoded.error.map((e) => `  - ${e}`).join('\n')}\n`);
    return 2;
  }
  const config = decoded.value;
  if (config.target !== 'gateway') return 2;
  const log = createLogger(config.logLevel, { target: 'wal-drain' });
  const opened = await openStore(config.storage.clickhouse);
  if (!opened.ok) {
    log.error(opened.error);
    return 1;
  }
  try {
    const drained = await drainLogDirectory(clickHouseRowSink(opened.value), config.gateway.writer, log, attemptTimeoutMs);
    if (!drained.ok) {
      log.error('write-ahead log not drained; the next attempt goes on', { message: drained.error.message, segmentsLeft: drained.error.segmentsLeft });
      return 1;
    }
    log.info('write-ahead log drained', { ...drained.value });
    return 0;
  } finally {
    await opened.value.close();
  }
}

process.exitCode = await main();
