// npm run bench:ack — where an acknowledgement's time goes in Tenantry `all`:
// OTLP/HTTP span requests (1,000 spans each) for a while, then the ack
// latency quantiles beside the gateway's own histograms of the wait to enter
// the write-ahead log (admission pacing) and of the append, and the
// process's CPU per acknowledged span during the load.
// Not a test: it prints figures (ADR 6, "Where the rest goes").
//
//   npm run bench:ack                                  # 4 closed-loop clients, 20 s
//   npm run bench:ack -- --rate=20000                  # an open loop at 20k spans/s instead
//   npm run bench:ack -- --rate=20000 --wal-dir=/dev/shm/wal   # the log on another disk
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { tracesRequest } from './ingest-payloads.ts';
import { nodeFlags } from '../src/target/node-flags.ts';

const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '20' }, clients: { type: 'string', default: '4' }, rate: { type: 'string' }, 'wal-dir': { type: 'string' } },
});
const seconds = Number(args.seconds);
const clients = Number(args.clients);
const rate = args.rate === undefined ? undefined : Number(args.rate);
if (!(seconds > 0) || !(clients > 0) || (rate !== undefined && !(rate > 0))) throw new Error('--seconds, --clients and --rate take positive numbers');

const key = 'bench-ack-breakdown-key-0123456789';
const dataDir = mkdtempSync(join(tmpdir(), 'tenantry-bench-ack-'));
const child = spawn(process.execPath, [...nodeFlags, 'src/cli.ts', 'all'], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: {
    ...process.env,
    TENANTRY_DATA_DIR: dataDir,
    TENANTRY_HOST: '127.0.0.1',
    TENANTRY_OTLP_HTTP_PORT: '0',
    TENANTRY_OTLP_GRPC_PORT: '0',
    TENANTRY_API_PORT: '0',
    TENANTRY_API_KEYS: JSON.stringify([{ key, scopes: ['ingest'], tenants: ['*'] }]),
    ...(args['wal-dir'] === undefined ? {} : { TENANTRY_WAL_DIR: args['wal-dir'] }),
  },
});

try {
  const otlpPort = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => {
      reject(new Error(`tenantry exited (${String(code)}) before it started`));
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      const record = JSON.parse(line) as { msg?: string; ports?: { otlpHttp?: number } };
      if (record.msg === 'tenantry started' && record.ports?.otlpHttp !== undefined) resolve(record.ports.otlpHttp);
    });
  });
  const url = `http://127.0.0.1:${String(otlpPort)}/v1/traces`;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const bodies = Array.from({ length: 8 }, (_, i) => tracesRequest(1000, 'bench', i * 1000));
  const post = (body: Buffer): Promise<number> =>
    new Promise((resolve) => {
      const started = performance.now();
      const req = request(
        url,
        { method: 'POST', agent, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-protobuf', 'content-length': String(body.length) } },
        (res) => {
          res.resume();
          res.on('end', () => {
            resolve(performance.now() - started);
          });
        },
      );
      req.on('error', () => {
        resolve(Number.NaN);
      });
      req.end(body);
    });

  const cpuSeconds = async (): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${String(otlpPort)}/metrics`)).text();
    return Number(/^tenantry_process_cpu_seconds_total (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
  };
  const cpuBefore = await cpuSeconds();
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  if (rate === undefined) {
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let i = c; performance.now() < until; i++) latencies.push(await post(bodies[i % bodies.length] ?? Buffer.alloc(0)));
      }),
    );
  } else {
    const answers: Promise<void>[] = [];
    const started = performance.now();
    for (let i = 0; performance.now() < until; i++) {
      const wait = started + (i * 1000 * 1000) / rate - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      answers.push(
        post(bodies[i % bodies.length] ?? Buffer.alloc(0)).then((ms) => {
          latencies.push(ms);
        }),
      );
    }
    await Promise.all(answers);
  }
  const cpu = (await cpuSeconds()) - cpuBefore;
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => Math.round(latencies[Math.floor(q * (latencies.length - 1))] ?? Number.NaN);
  process.stdout.write(
    `${rate === undefined ? `${String(clients)} closed-loop clients` : `open loop at ${String(rate)} spans/s`}, ${String(seconds)} s${args['wal-dir'] === undefined ? '' : `, log in ${args['wal-dir']}`}\n`,
  );
  process.stdout.write(
    `requests ${String(latencies.length)} (${String(Math.round((latencies.length * 1000) / seconds))} spans/s acknowledged), ack p50 ${String(at(0.5))} ms, p90 ${String(at(0.9))} ms, p99 ${String(at(0.99))} ms, max ${String(at(1))} ms\n`,
  );
  process.stdout.write(
    `process CPU during the load: ${cpu.toFixed(1)} s, ${((cpu * 1e6) / (latencies.length * 1000)).toFixed(1)} µs per acknowledged span (INSERTs included, merges after the load not)\n`,
  );
  const metrics = await (await fetch(`http://127.0.0.1:${String(otlpPort)}/metrics`)).text();
  for (const name of ['tenantry_gateway_admission_wait_seconds', 'tenantry_gateway_wal_append_duration_seconds']) {
    const buckets = metrics.split('\n').filter((l) => l.startsWith(`${name}_bucket{`) && l.includes('table="spans"'));
    const cells = buckets.map((l) => `≤${/le="([^"]+)"/.exec(l)?.[1] ?? '?'}s: ${l.slice(l.lastIndexOf(' ') + 1)}`);
    process.stdout.write(`${name} (requests, cumulative): ${cells.join(', ')}\n`);
  }
} finally {
  child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
}
