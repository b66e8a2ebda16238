// npm run bench:capacity — what one core converts: OTLP/HTTP protobuf bodies
// (gzip-inflated, then converted to RowBinary rows) per second of this
// process's CPU, for realistic spans, logs and metric points
// (bench/ingest-payloads.ts) and for the compressible flood of issue 35
// (identical spans, 1.8 KB gzipped per MB). The figure sets the default
// per-tenant ingest rate (src/config/variables.ts, docs/gateway.md
// "Ingest capacity and default rates"). One thread, no writer, no
// ClickHouse: the gateway's whole cost per byte is higher (write-ahead log,
// INSERT), so this is an upper bound of what a core accepts.
// Then the offload threshold (gateway/ingest/ingest-pipeline.ts,
// defaultOffloadMinBytes): for spans bodies of growing size, the event
// loop's busy time per request converting inline, and handing the body to
// the conversion pool (gateway/convert/worker/) and taking its rows back.
//   BENCH_SECONDS=3 npm run bench:capacity   (seconds per payload)
import { performance } from 'node:perf_hooks';
import { gunzipSync, gzipSync } from 'node:zlib';
import { defaultItemLimits } from '../gateway/convert/common/item-limits.ts';
import { ConvertPool } from '../gateway/convert/worker/convert-pool.ts';
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

/** Event-loop busy ms per request over `n` sequential conversions of `body`, inline or through `pool`. */
async function loopMs(body: Buffer, n: number, pool?: ConvertPool): Promise<number> {
  // The pool takes the body as a read one comes: 64 KiB chunks the caller gives up (made before the measure).
  const owned = Array.from({ length: pool === undefined ? 0 : n }, () => {
    const chunks: Buffer[] = [];
    for (let at = 0; at < body.length; at += 65_536) chunks.push(Buffer.from(body.subarray(at, at + 65_536)));
    return { chunks, length: body.length };
  });
  const before = performance.eventLoopUtilization();
  for (let i = 0; i < n; i++) {
    const tenants = new TenantResolver(principal);
    const parts = owned[i];
    const converted =
      pool === undefined || parts === undefined
        ? converters.traces.protobuf.convert(body, tenants)
        : await pool.convert('traces', 'protobuf', parts, tenants, 'bench');
    if (!converted.ok) throw new Error('conversion failed');
    // A turn of the loop between requests, as between real ones (and idle time for the measure).
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const used = performance.eventLoopUtilization(before);
  return used.active / n;
}

const pool = new ConvertPool({ limits: defaultItemLimits, size: 1 });
await pool.convert('traces', 'protobuf', tracesRequest(1, 'warm', 1), new TenantResolver(principal), 'bench'); // starts the worker
console.log('event-loop busy ms per request, inline → through the conversion pool:');
for (const spans of [10, 30, 100, 300, 1000, 3000, 10_000, 30_000]) {
  const body = tracesRequest(spans, 'bench', 1);
  const n = Math.max(5, Math.min(200, Math.round(2e7 / body.length)));
  const inline = await loopMs(body, n);
  const pooled = await loopMs(body, n, pool);
  console.log(`  ${spans} spans, ${(body.length / 1024).toFixed(0)} KiB: ${inline.toFixed(2)} → ${pooled.toFixed(2)} ms`);
}
await pool.stop();
