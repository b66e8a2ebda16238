// Writes a tenant's spans into a data dir before a test starts the `all`
// process on it (libchdb binds one data dir per process, so a child process
// running this file writes the rows): `spans` spans in traces of ten (one
// root each), spread over the last 23 hours, with a span attribute user_id
// of 5,000 values, an http.method, and three services.
import { spawn } from 'node:child_process';
import { migrate } from '../../../../src/clickhouse/schema/migrator.ts';
import { openStore } from '../../../../src/clickhouse/store.ts';
import { silentLogger } from '../../../../src/log/logger.ts';

/** Spans per trace. */
export const spansPerTrace = 10;

/** `spans` spans of `tenant` over the last 23 hours, written by a child process into `dataDir`. */
export function preloadSpans(dataDir: string, tenant: string, spans: number): Promise<void> {
  const child = spawn(process.execPath, [import.meta.filename, dataDir, tenant, String(spans)], { stdio: ['ignore', 'ignore', 'pipe'] });
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

async function writeSpans(dataDir: string, tenant: string, spans: number): Promise<void> {
  const opened = await openStore({ kind: 'embedded', dataDir, database: 'tenantry' });
  if (!opened.ok) throw new Error(opened.error);
  const store = opened.value;
  try {
    const migrated = await migrate(store, { logsDays: 30, tracesDays: 30, metricsDays: 90 }, silentLogger);
    if (!migrated.ok) throw new Error(migrated.error.message);
    const from = Math.floor(Date.now() / 1000) - 23 * 3600;
    await store.client.command({
      query: `INSERT INTO tenantry.spans (tenant_id, timestamp, trace_id, span_id, parent_span_id, span_name, span_kind, service_name, duration_ns, status_code, resource_attributes, span_attributes)
        SELECT {tenant:String},
          fromUnixTimestamp64Nano(toInt64({from:UInt32}) * 1000000000 + toInt64(intDiv(number, {perTrace:UInt64})) * {spacing:UInt64} + toInt64(number % {perTrace:UInt64}) * 1000000),
          lower(hex(MD5(concat('trace-', toString(intDiv(number, {perTrace:UInt64})))))),
          substring(lower(hex(MD5(concat('span-', toString(number))))), 1, 16),
          if(number % {perTrace:UInt64} = 0, '', substring(lower(hex(MD5(concat('span-', toString(number - number % {perTrace:UInt64}))))), 1, 16)),
          concat('op-', toString(number % 7)), if(number % {perTrace:UInt64} = 0, 'SERVER', 'INTERNAL'), concat('svc-', toString(number % 3)),
          1000000 + cityHash64(number) % 100000000, if(number % 50 = 0, 'ERROR', 'UNSET'),
          map('service.name', concat('svc-', toString(number % 3))),
          map('user_id', concat('user-', toString(number % 5000)), 'http.method', ['GET', 'POST', 'PUT'][1 + number % 3])
        FROM numbers({spans:UInt64})`,
      query_params: { tenant, from, spans, perTrace: spansPerTrace, spacing: Math.floor((23 * 3600 * 1e9) / (spans / spansPerTrace)) },
    });
  } finally {
    await store.close();
  }
}

if (import.meta.main) {
  const [dataDir, tenant, spans] = process.argv.slice(2);
  if (dataDir === undefined || tenant === undefined || spans === undefined) throw new Error('usage: preload-spans.ts <dataDir> <tenant> <spans>');
  await writeSpans(dataDir, tenant, Number(spans));
}
