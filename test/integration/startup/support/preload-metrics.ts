// Writes a tenant's gauge of many series into a data dir before a test
// starts the `all` process on it (libchdb binds one data dir per process, so
// a child process running this file writes the rows): `series` series
// (attribute user_id) sharing `points` points over the last 30 days.
import { spawn } from 'node:child_process';
import { migrate } from '../../../../src/clickhouse/schema/migrator.ts';
import { openStore } from '../../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../../src/log/logger.ts';

const day = 86_400;

/** Gauge `metric` of `tenant`: `points` points spread over the last 30 days, over `series` values of user_id. */
export function preloadGauge(dataDir: string, tenant: string, metric: string, series: number, points: number): Promise<void> {
  const child = spawn(process.execPath, [import.meta.filename, dataDir, tenant, metric, String(series), String(points)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`preloading metrics failed (${code}): ${stderr}`));
    });
  });
}

async function writeGauge(dataDir: string, tenant: string, metric: string, series: number, points: number): Promise<void> {
  const opened = await openStore({ kind: 'embedded', dataDir, database: 'tenantry' });
  if (!opened.ok) throw new Error(opened.error);
  const store = opened.value;
  try {
    const migrated = await migrate(store, { logsDays: 30, tracesDays: 30, metricsDays: 90 }, silentLogger);
    if (!migrated.ok) throw new Error(migrated.error.message);
    const from = Math.floor(Date.now() / 1000) - 30 * day + 3600;
    await store.client.command({
      query: `INSERT INTO tenantry.metrics (tenant_id, metric_name, metric_type, service_name, resource_attributes, attributes, timestamp, value)
        SELECT {tenant:String}, {metric:String}, 'gauge', 'svc', map('service.name', 'svc'), map('user_id', concat('user-', toString(number % {series:UInt64}))),
          fromUnixTimestamp64Nano(toInt64({from:UInt32}) * 1000000000 + toInt64(number) * {spacing:UInt64}), toFloat64(cityHash64(number) % 1000)
        FROM numbers({points:UInt64})`,
      query_params: { tenant, metric, series, points, from, spacing: Math.floor((29 * day * 1e9) / points) },
    });
  } finally {
    await store.close();
  }
}

if (import.meta.main) {
  const [dataDir, tenant, metric, series, points] = process.argv.slice(2);
  if (dataDir === undefined || tenant === undefined || metric === undefined || series === undefined || points === undefined)
    throw new Error('usage: preload-metrics.ts <dataDir> <tenant> <metric> <series> <points>');
  await writeGauge(dataDir, tenant, metric, Number(series), Number(points));
}
