// Runs the real Prometheus (3.16, from the test cache) on 127.0.0.1
// with its data in a temp dir, scraping the given targets and optionally
// remote-writing everything it scrapes to Tenantry's /api/v1/push with the
// tenant's key as the basic-auth password and X-Scope-OrgID. Also reads its
// own /metrics to tell when remote write has sent everything.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, spawnReady } from '../../../../support/server-process.ts';

export interface RemoteWriteTarget {
  readonly url: string;
  readonly key: string;
  readonly tenant: string;
}

export interface PrometheusOptions {
  readonly binary: string;
  readonly dir: string;
  readonly targets: readonly string[];
  readonly scrapeInterval?: string;
  readonly remoteWrite?: RemoteWriteTarget;
}

export interface PrometheusServer {
  readonly url: string;
  /** Its process id (benchmarks read its CPU). */
  readonly pid: number;
  /** The sum, over all label sets, of one of its own metrics (read from its /metrics page). */
  selfMetric(name: string): Promise<number>;
  tail(): string;
  stop(): Promise<void>;
}

function configOf(options: PrometheusOptions): Record<string, unknown> {
  const interval = options.scrapeInterval ?? '1s';
  const config: Record<string, unknown> = {
    global: { scrape_interval: interval, scrape_timeout: interval, evaluation_interval: '1m' },
    scrape_configs: [{ job_name: 'demo', static_configs: [{ targets: options.targets }] }],
  };
  const rw = options.remoteWrite;
  if (rw !== undefined) {
    config['remote_write'] = [
      {
        // The key is bound to the tenant; Prometheus 3 sends the header too.
        url: rw.url,
        basic_auth: { username: 'prometheus', password: rw.key },
        headers: { 'X-Scope-OrgID': rw.tenant },
        // Small, quick batches: the test waits for the queue to drain before it compares.
        queue_config: { batch_send_deadline: '200ms', max_samples_per_send: 2000, min_backoff: '50ms', max_backoff: '1s' },
        metadata_config: { send: true, send_interval: '2s' },
      },
    ];
  }
  return config;
}

/** Starts Prometheus and resolves once /-/ready answers 200. */
export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  const port = await freePort();
  const configFile = join(options.dir, 'prometheus.yml');
  writeFileSync(configFile, JSON.stringify(configOf(options), null, 2));
  const url = `http://127.0.0.1:${port}`;
  const { child, tail, stop } = await spawnReady(
    'prometheus',
    options.binary,
    [`--config.file=${configFile}`, `--storage.tsdb.path=${join(options.dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    options.dir,
    `${url}/-/ready`,
    60_000,
  );
  const selfMetric = async (name: string): Promise<number> => {
    const res = await fetch(`${url}/metrics`);
    const text = await res.text();
    let sum = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith(name)) continue;
      const rest = line.slice(name.length);
      if (rest[0] !== ' ' && rest[0] !== '{') continue;
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return sum;
  };
  return { url, pid: child.pid ?? 0, selfMetric, tail, stop };
}
