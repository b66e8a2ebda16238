// npm run bench:remote-write — Prometheus remote write ingest against OTLP
// metrics ingest of the same data, in one `node src/cli.ts all` on a
// temporary data dir (about a minute):
//   1. in-process conversion: samples per CPU-second of the remote write
//      converter (snappy + wire reader → rows) and data points per
//      CPU-second of the OTLP protobuf converter, on requests carrying the
//      same 2,000 series; and protobufjs decoding the same WriteRequest into
//      objects (what a generated decoder would cost before writing a row);
//   2. end to end: 4 closed-loop clients push 2,000-sample remote write
//      requests, then 4 push the equivalent 2,000-point OTLP/HTTP protobuf
//      requests, in alternating phases (twice each): acknowledged items per
//      second and the process's CPU per item (ClickHouse's INSERTs included:
//      each phase's CPU is counted until the process is idle again).
// bench:promql (issue 16) calls remoteWriteVsOtlp() for its ingest line.
//   BENCH_SECONDS=8 npm run bench:remote-write   (seconds per load phase)
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Principal } from '../src/auth/api-keys.ts';
import { defaultItemLimits } from '../gateway/convert/common/item-limits.ts';
import { TenantResolver } from '../gateway/convert/common/tenant-resolver.ts';
import { metricsFromProtobuf } from '../gateway/convert/metrics/protobuf.ts';
import { decompressSnappy } from '../gateway/prometheus/snappy-body.ts';
import { remoteWriteConverter } from '../gateway/prometheus/write-request.ts';
import { ExportMetricsServiceRequest } from '../gateway/wire/otlp-messages.ts';
import { startTenantry, testEnvironment } from '../support/tenantry-process.ts';
import { basicAuth, encodeWriteRequest, remoteWriteHeaders, snappyBlock } from '../support/remote-write-request.ts';
import type { SeriesSpec } from '../support/remote-write-request.ts';
import { cpuSeconds, waitIdle } from './peers/process-cpu.ts';
import protobuf from 'protobufjs';

/** Series per request: a full batch of a Prometheus with max_samples_per_send: 2000. */
export const seriesPerRequest = 2000;
const names = 20;

/** The labels of series i: 20 metric families × 100 series, job and instance, 4 labels. */
function labelsOf(i: number): Record<string, string> {
  return {
    __name__: `app_metric_${i % names}`,
    job: 'checkout',
    instance: `10.0.${i % 7}.${i % 50}:9090`,
    method: i % 3 === 0 ? 'POST' : 'GET',
    route: `/api/v1/cart/${i % 20}`,
    status_code: i % 50 === 0 ? '500' : '200',
    pod: `checkout-7d9f8c-${Math.floor(i / names) % 50}`,
  };
}

/** A remote write request of `seriesPerRequest` series of one sample each, snappy-compressed. */
export function remoteWriteBody(nowMs = Date.now()): { encoded: Buffer; block: Buffer } {
  const series: SeriesSpec[] = Array.from({ length: seriesPerRequest }, (_, i) => ({
    labels: labelsOf(i),
    samples: [{ value: 1000 + i, timestampMs: nowMs - i }],
  }));
  const encoded = encodeWriteRequest(series);
  return { encoded, block: snappyBlock(encoded) };
}

/** The same data as OTLP: one resource (tenant, service.name = job, service.instance.id = instance) per instance, one gauge per family. */
export function otlpBody(tenant: string, nowMs = Date.now()): Buffer {
  const kv = (key: string, value: string): object => ({ key, value: { stringValue: value } });
  const byInstance = new Map<string, Map<string, object[]>>();
  for (let i = 0; i < seriesPerRequest; i++) {
    const { __name__: name = '', job: _job, instance = '', ...attrs } = labelsOf(i);
    const metrics = byInstance.get(instance) ?? new Map<string, object[]>();
    byInstance.set(instance, metrics);
    const points = metrics.get(name) ?? [];
    metrics.set(name, points);
    points.push({ attributes: Object.entries(attrs).map(([k, v]) => kv(k, v)), timeUnixNano: (BigInt(nowMs - i) * 1_000_000n).toString(), asDouble: 1000 + i });
  }
  const message = ExportMetricsServiceRequest.fromObject({
    resourceMetrics: [...byInstance].map(([instance, metrics]) => ({
      resource: { attributes: [kv('tenant.id', tenant), kv('service.name', 'checkout'), kv('service.instance.id', instance)] },
      scopeMetrics: [{ scope: { name: 'bench' }, metrics: [...metrics].map(([name, dataPoints]) => ({ name, gauge: { dataPoints } })) }],
    })),
  });
  return Buffer.from(ExportMetricsServiceRequest.encode(message).finish());
}

export interface LoadFigures {
  readonly protocol: 'remote_write' | 'otlp';
  readonly itemsPerSecond: number;
  /** Process CPU per item, µs, counted until the process was idle again; undefined without a pid. */
  readonly cpuMicrosPerItem: number | undefined;
  readonly failures: number;
}

export interface LoadOptions {
  /** The gateway's HTTP base URL. */
  readonly gatewayUrl: string;
  /** A key with the ingest scope for `tenant`. */
  readonly key: string;
  readonly tenant: string;
  readonly seconds: number;
  readonly clients?: number;
  /** Phases of each protocol, alternating. */
  readonly rounds?: number;
  /** The Tenantry process, to charge CPU to the items. */
  readonly pid?: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

function send(url: string, body: Buffer, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      res.resume();
      res.on('end', () => {
        resolve(res.statusCode ?? 0);
      });
      res.on('error', () => {
        resolve(0);
      });
    });
    req.on('error', () => {
      resolve(0);
    });
    req.end(body);
  });
}

async function phase(protocol: LoadFigures['protocol'], options: LoadOptions, body: Buffer): Promise<LoadFigures> {
  const [url, headers, ok] =
    protocol === 'remote_write'
      ? [`${options.gatewayUrl}/api/v1/push`, remoteWriteHeaders({ authorization: basicAuth(options.key), 'X-Scope-OrgID': options.tenant }), 204]
      : [`${options.gatewayUrl}/v1/metrics`, { 'content-type': 'application/x-protobuf', authorization: `Bearer ${options.key}` }, 200];
  const cpuBefore = options.pid === undefined ? 0 : cpuSeconds(options.pid);
  const started = performance.now();
  const end = started + options.seconds * 1000;
  let accepted = 0;
  let failures = 0;
  await Promise.all(
    Array.from({ length: options.clients ?? 4 }, async () => {
      while (performance.now() < end) {
        if ((await send(url, body, headers)) === ok) accepted++;
        else failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  let cpuMicrosPerItem: number | undefined;
  if (options.pid !== undefined) {
    await waitIdle([options.pid], { threshold: 0.05, quietSeconds: 1, maxMs: 20_000 });
    cpuMicrosPerItem = ((cpuSeconds(options.pid) - cpuBefore) * 1e6) / Math.max(1, accepted * seriesPerRequest);
  }
  return { protocol, itemsPerSecond: (accepted * seriesPerRequest) / seconds, cpuMicrosPerItem, failures };
}

/** Remote write samples/s against OTLP metric points/s of the same data, on a running gateway, in alternating phases. */
export async function remoteWriteVsOtlp(options: LoadOptions): Promise<LoadFigures[]> {
  const rw = remoteWriteBody().block;
  const otlp = otlpBody(options.tenant);
  const figures: LoadFigures[] = [];
  for (let round = 0; round < (options.rounds ?? 2); round++) {
    figures.push(await phase('remote_write', options, rw));
    figures.push(await phase('otlp', options, otlp));
  }
  return figures;
}

/** Items per CPU-second of `run` (which converts `items` items), over about `ms` of repetitions. */
function perCpuSecond(items: number, run: () => void, ms = 2500): number {
  for (let i = 0; i < 20; i++) run(); // warm-up
  const cpu = process.cpuUsage();
  const end = performance.now() + ms;
  let n = 0;
  while (performance.now() < end) {
    run();
    n++;
  }
  const used = process.cpuUsage(cpu);
  return (n * items) / ((used.user + used.system) / 1e6);
}

/** In-process conversion rates of the same 2,000 series. */
export function conversionRates(): { remoteWrite: number; otlp: number; protobufjsDecodeOnly: number } {
  const principal: Principal = { name: 'bench', scopes: new Set(['ingest']), tenants: '*' };
  const { encoded, block } = remoteWriteBody();
  const convert = remoteWriteConverter(defaultItemLimits);
  const otlp = metricsFromProtobuf(defaultItemLimits, Date.now);
  const otlpRequest = otlpBody('bench');
  const writeRequest = protobuf.loadSync(join(import.meta.dirname, '..', 'proto', 'prometheus', 'remote.proto')).lookupType('prometheus.WriteRequest');
  const check = (ok: boolean): void => {
    if (!ok) throw new Error('conversion failed');
  };
  return {
    remoteWrite: perCpuSecond(seriesPerRequest, () => {
      const body = decompressSnappy(block, 64 << 20);
      check(body.ok && convert(body.value, 'bench', new TenantResolver(principal)).ok);
    }),
    otlp: perCpuSecond(seriesPerRequest, () => {
      check(otlp.convert(otlpRequest, new TenantResolver(principal)).ok);
    }),
    protobufjsDecodeOnly: perCpuSecond(seriesPerRequest, () => {
      writeRequest.decode(encoded);
    }),
  };
}

const k = (x: number): string => `${(x / 1000).toFixed(1)}k`;

async function main(): Promise<void> {
  const seconds = Number(process.env['BENCH_SECONDS'] ?? 8);
  const rates = conversionRates();
  console.log('conversion, items per CPU-second (2,000 series per request):');
  console.log(`  remote write (snappy + wire reader → rows)  ${k(rates.remoteWrite)} samples`);
  console.log(`  OTLP protobuf converter                    ${k(rates.otlp)} points`);
  console.log(`  protobufjs decode of the WriteRequest only  ${k(rates.protobufjsDecodeOnly)} samples (objects, no rows)`);
  const key = 'bench-remote-write-key-0123456789';
  const dataDir = mkdtempSync(join(tmpdir(), 'tenantry-bench-rw-'));
  const tenantry = startTenantry(['all'], testEnvironment(dataDir, { TENANTRY_API_KEYS: JSON.stringify([{ key, scopes: ['ingest'], tenants: ['bench'] }]) }));
  try {
    const ports = await tenantry.started();
    const pid = tenantry.child.pid;
    const figures = await remoteWriteVsOtlp({ gatewayUrl: `http://127.0.0.1:${ports['otlpHttp'] ?? 0}`, key, tenant: 'bench', seconds, pid });
    console.log(`end to end, 4 clients, ${seconds} s phases, alternating:`);
    for (const f of figures)
      console.log(
        `  ${f.protocol.padEnd(12)} ${k(f.itemsPerSecond).padStart(8)} items/s  ${f.cpuMicrosPerItem?.toFixed(2) ?? '-'} µs CPU/item  ${f.failures} failures`,
      );
    const mean = (p: LoadFigures['protocol']): number => {
      const xs = figures.filter((f) => f.protocol === p);
      return xs.reduce((s, f) => s + f.itemsPerSecond, 0) / xs.length;
    };
    console.log(`  remote write samples/s ÷ OTLP points/s: ${(mean('remote_write') / mean('otlp')).toFixed(2)}`);
  } finally {
    await tenantry.stop();
    rmSync(dataDir, { recursive: true, force: true });
    agent.destroy();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
