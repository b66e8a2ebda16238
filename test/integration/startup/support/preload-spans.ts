// Writes many spans of one tenant into a data dir before a test starts the
// `all` process on it, so that its API queries have rows to scan. libchdb
// binds one data dir per process, and the test process has its own, so the
// rows are written by a child process running this file.
import { spawn } from 'node:child_process';
import { migrate } from '../../../../src/clickhouse/schema/migrator.ts';
import { openStore } from '../../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../../src/log/logger.ts';

const day = 86_400;

/** `rows` spans of `tenant` over the last 20 hours, in database "tenantry" of `dataDir` (migrated first). */
export function preloadSpans(dataDir: string, tenant: string, rows: number): Promise<void> {
  const child = spawn(process.execPath, [import.meta.filename, dataDir, tenant, String(rows)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`preloading spans failed (${code}): ${stderr}`));
    });
  });
}

async function writeSpans(dataDir: string, tenant: string, rows: number): Promise<void> {
  const opened = await openStore({ kind: 'embedded', dataDir, database: 'tenantry' });
  if (!opened.ok) throw new Error(opened.error);
  const store = opened.value;
  try {
    const migrated = await migrate(store, { logsDays: 30, tracesDays: 30, metricsDays: 90 }, silentLogger);
    if (!migrated.ok) throw new Error(migrated.error.message);
    const from = Math.floor(Date.now() / 1000) - day + 3600;
    await store.client.command({
      query: `INSERT INTO tenantry.spans (tenant_id, timestamp, trace_id, span_id, parent_span_id, span_name, span_kind, service_name, duration_ns, status_code, status_message, resource_attributes, span_attributes)
        SELECT {tenant:String}, fromUnixTimestamp64Nano(toInt64({from:UInt32}) * 1000000000 + toInt64(number) * {spacing:UInt64}),
          hex(cityHash64(intDiv(number, 5))), hex(cityHash64(number)), '', concat('GET /checkout ', toString(number % 97)), 'SERVER', 'checkout',
          cityHash64(number) % 1000000000, 'OK', '', map('service.name', 'checkout', 'host.name', concat('host-', toString(number % 50))),
          map('http.method', ['GET', 'POST'][number % 2 + 1], 'url.path', concat('/cart/', toString(number % 1000)))
        FROM numbers({rows:UInt64})`,
      query_params: { tenant, from, rows, spacing: Math.floor((20 * 3600 * 1e9) / rows) },
    });
  } finally {
    await store.close();
  }
}

if (import.meta.main) {
  const [dataDir, tenant, rows] = process.argv.slice(2);
  if (dataDir === undefined || tenant === undefined || rows === undefined) throw new Error('usage: preload-spans.ts <dataDir> <tenant> <rows>');
  await writeSpans(dataDir, tenant, Number(rows));
}
