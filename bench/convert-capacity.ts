// npm run bench:capacity — what one core converts: OTLP/HTTP protobuf bodies
// (gzip-inflated, then converted to RowBinary rows) per second of this
// process's CPU, for realistic spans, logs and metric points
// (bench/ingest-payloads.ts) and for the compressible flood of issue 35
// (identical spans, 1.8 KB gzipped per MB). The figure sets the default
// per-tenant ingest rate (src/config/variables.ts, docs/gateway.md
// "Ingest capacity and default rates"). One thread, no writer, no
// ClickHouse: the gateway's whole cost per byte is higher (write-ahead log,
// INSERT), so this is an upper bound of what a core accepts.
//   BENCH_SECONDS=3 npm run bench:capacity   (seconds per payload)
import { gunzipSync, gzipSync } from 'node:zlib';
import { TenantResolver } from '../gateway/convert/common/tenant-resolver.ts';
import { rowConverters } from '../gateway/convert/row-converters.ts';
import type { SignalName } from '../gateway/wire/otlp-messages.ts';
import { logsRequest, metricsRequest, tracesRequest } from './ingest-payloads.ts';

const seconds = Number(process.env['BENCH_SECONDS'] ?? 3);
const converters = rowConverters();
const principal = { name: 'bench', scopes: new Set(['ingest'] as const), tenants: '*' as const };

/** Identical spans: the compressible body (each span the same bytes), about `megabytes` MB decoded. */
function identicalSpans(megabytes: number): Buffer {
  const one = tracesRequest(1, 'flood', 1);
  const copies = Math.ceil((megabytes * 1e6) / one.length);
  return Buffer.concat(Array.from({ length: copies }, () => one));
}

/** Decoded MiB per CPU second of inflating and converting `body` for `seconds`. */
function measure(signal: SignalName, body: Buffer): { mibPerCpuSecond: number; msPerRequest: number } {
  const gz = gzipSync(body);
  const cpu0 = process.cpuUsage();
  const until = performance.now() + seconds * 1000;
  let bytes = 0;
  let requests = 0;
  while (performance.now() < until || requests < 3) {
    const decoded = gunzipSync(gz);
    const converted = converters[signal].protobuf.convert(decoded, new TenantResolver(principal));
    if (!converted.ok) throw new Error(converted.error);
    bytes += decoded.length;
    requests++;
  }
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  return { mibPerCpuSecond: bytes / 1024 / 1024 / cpuSeconds, msPerRequest: (1000 * cpuSeconds) / requests };
}

const payloads: readonly (readonly [string, SignalName, Buffer])[] = [
  ['spans, 1,000 per request', 'traces', tracesRequest(1000, 'bench', 1)],
  ['log records, 1,000 per request', 'logs', logsRequest(1000, 'bench', 1)],
  ['metric points, 1,000 per request', 'metrics', metricsRequest(1000, 'bench', 1)],
  ['identical spans, 16 MB per request (issue 35)', 'traces', identicalSpans(16)],
];
for (const [name, signal, body] of payloads) {
  const r = measure(signal, body);
  const gz = gzipSync(body).length;
  console.log(`${name}: ${body.length} B (${gz} B gzipped): ${r.mibPerCpuSecond.toFixed(1)} MiB/s per core, ${r.msPerRequest.toFixed(1)} ms CPU per request`);
}
