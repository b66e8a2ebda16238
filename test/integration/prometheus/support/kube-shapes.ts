// A synthetic exporter of the series a Kubernetes cluster's dashboards read,
// in the label shapes of node-exporter, kube-state-metrics, cAdvisor (via the
// kubelet) and the kube-apiserver, plus the recording rules such dashboards
// query by their colon names: 30 minutes at 15 s, deterministic, for one
// cluster of three nodes, three namespaces and a pod replaced half-way (the
// churn a rollout makes). Written for the dashboard differential; shapes
// learnt from reading kube-prometheus-stack's dashboards and rules, no query
// or rule copied.
import type { SampleSpec, SeriesSpec } from '../../../../support/remote-write-request.ts';
import { seeded } from './synthetic-series.ts';

/** The grid step and the span of the data. */
export const kubeStepMs = 15_000;
export const kubeSpanMs = 30 * 60_000;
export const cluster = 'c1';

const nodes = [
  { node: 'node-a', ip: '10.0.0.1' },
  { node: 'node-b', ip: '10.0.0.2' },
  { node: 'node-c', ip: '10.0.0.3' },
];

interface Pod {
  readonly namespace: string;
  readonly pod: string;
  readonly node: string;
  readonly owner: string;
  readonly containers: readonly string[];
  readonly from: number;
  readonly until: number;
}

/** Pods; `web-7d9f-x2k4q` is replaced by `web-7d9f-p8m2z` half-way (indices of the grid). */
function pods(points: number): Pod[] {
  const half = Math.floor(points / 2);
  return [
    { namespace: 'default', pod: 'web-7d9f-x2k4q', node: 'node-a', owner: 'web-7d9f', containers: ['nginx', 'app'], from: 0, until: half },
    { namespace: 'default', pod: 'web-7d9f-p8m2z', node: 'node-b', owner: 'web-7d9f', containers: ['nginx', 'app'], from: half - 4, until: points },
    { namespace: 'default', pod: 'web-7d9f-q5r7t', node: 'node-c', owner: 'web-7d9f', containers: ['nginx', 'app'], from: 0, until: points },
    { namespace: 'default', pod: 'worker-5c8b-h3j9k', node: 'node-a', owner: 'worker-5c8b', containers: ['worker'], from: 0, until: points },
    { namespace: 'kube-system', pod: 'coredns-6f4d-a1b2c', node: 'node-a', owner: 'coredns-6f4d', containers: ['coredns'], from: 0, until: points },
    { namespace: 'kube-system', pod: 'coredns-6f4d-d3e4f', node: 'node-b', owner: 'coredns-6f4d', containers: ['coredns'], from: 0, until: points },
    { namespace: 'kube-system', pod: 'kube-proxy-9xk2m', node: 'node-c', owner: 'kube-proxy', containers: ['kube-proxy'], from: 0, until: points },
    {
      namespace: 'monitoring',
      pod: 'prometheus-0',
      node: 'node-b',
      owner: 'prometheus',
      containers: ['prometheus', 'config-reloader'],
      from: 0,
      until: points,
    },
    { namespace: 'monitoring', pod: 'ksm-8d7c-m4n5p', node: 'node-c', owner: 'ksm-8d7c', containers: ['kube-state-metrics'], from: 0, until: points },
  ];
}

interface Grid {
  readonly startMs: number;
  readonly points: number;
}

function series(g: Grid, labels: Record<string, string>, value: (i: number) => number, from = 0, until = g.points): SeriesSpec {
  const samples: SampleSpec[] = [];
  for (let i = from; i < until; i++) samples.push({ value: value(i), timestampMs: g.startMs + i * kubeStepMs });
  return { labels: { cluster, ...labels }, samples };
}

const r6 = (v: number): number => Math.round(v * 1e6) / 1e6;

function counterOf(rand: () => number, scale: number, g: Grid): number[] {
  const out: number[] = [];
  let v = r6(rand() * scale * 100);
  for (let i = 0; i < g.points; i++) {
    if (i > 0) v = r6(v + rand() * scale);
    out.push(v);
  }
  return out;
}

function nodeExporter(g: Grid): SeriesSpec[] {
  const rand = seeded(211);
  const out: SeriesSpec[] = [];
  const modes: Record<string, number> = { idle: 0.8, user: 0.1, system: 0.04, iowait: 0.02, steal: 0.005, irq: 0.003, softirq: 0.007, nice: 0.001 };
  for (const [n, { node, ip }] of nodes.entries()) {
    const base = { job: 'node-exporter', instance: `${ip}:9100`, namespace: 'monitoring', pod: `node-exporter-${node}` };
    for (let cpu = 0; cpu < 4; cpu++) {
      for (const [mode, share] of Object.entries(modes)) {
        const values = counterOf(() => rand() * 0.4 + 0.8, share * 15 * (1 + n * 0.2), g);
        out.push(series(g, { __name__: 'node_cpu_seconds_total', ...base, cpu: String(cpu), mode }, (i) => values[i] ?? 0));
      }
    }
    const total = 16e9 * (n + 1);
    out.push(series(g, { __name__: 'node_memory_MemTotal_bytes', ...base }, () => total));
    out.push(series(g, { __name__: 'node_memory_MemAvailable_bytes', ...base }, (i) => Math.round(total * (0.4 + 0.1 * Math.sin(i / 20 + n)))));
    out.push(series(g, { __name__: 'node_memory_MemFree_bytes', ...base }, (i) => Math.round(total * (0.2 + 0.05 * Math.cos(i / 15)))));
    out.push(series(g, { __name__: 'node_memory_Buffers_bytes', ...base }, () => 2e8 + n * 1e7));
    out.push(series(g, { __name__: 'node_memory_Cached_bytes', ...base }, (i) => 3e9 + i * 1e6));
    for (const [k, load] of ['node_load1', 'node_load5', 'node_load15'].entries())
      out.push(series(g, { __name__: load, ...base }, (i) => r6(1 + n + Math.sin(i / (5 + k * 5)) * 0.5)));
    for (const [device, fstype, mountpoint, size] of [
      ['/dev/sda1', 'ext4', '/', 100e9],
      ['/dev/sdb1', 'xfs', '/var/lib/data', 500e9],
      ['tmpfs', 'tmpfs', '/run', 1e9],
    ] as const) {
      const fs = { ...base, device, fstype, mountpoint };
      out.push(series(g, { __name__: 'node_filesystem_size_bytes', ...fs }, () => size));
      out.push(series(g, { __name__: 'node_filesystem_avail_bytes', ...fs }, (i) => Math.round(size * (0.6 - n * 0.1) - i * 1e6 * (n + 1))));
      out.push(series(g, { __name__: 'node_filesystem_readonly', ...fs }, () => 0));
    }
    for (const device of ['eth0', 'lo']) {
      const rx = counterOf(rand, device === 'lo' ? 1e4 : 1e7, g);
      const tx = counterOf(rand, device === 'lo' ? 1e4 : 5e6, g);
      out.push(series(g, { __name__: 'node_network_receive_bytes_total', ...base, device }, (i) => rx[i] ?? 0));
      out.push(series(g, { __name__: 'node_network_transmit_bytes_total', ...base, device }, (i) => tx[i] ?? 0));
    }
    for (const device of ['sda', 'nvme0n1']) {
      const io = counterOf(rand, 3, g);
      const rd = counterOf(rand, 1e6, g);
      out.push(series(g, { __name__: 'node_disk_io_time_seconds_total', ...base, device }, (i) => io[i] ?? 0));
      out.push(series(g, { __name__: 'node_disk_read_bytes_total', ...base, device }, (i) => rd[i] ?? 0));
    }
    out.push(
      series(g, { __name__: 'node_uname_info', ...base, nodename: node, sysname: 'Linux', release: `6.1.0-${20 + n}-amd64`, machine: 'x86_64' }, () => 1),
    );
    out.push(
      series(g, { __name__: 'up', job: 'node-exporter', instance: `${ip}:9100`, namespace: 'monitoring', pod: `node-exporter-${node}` }, (i) =>
        n === 2 && i > 80 && i < 90 ? 0 : 1,
      ),
    );
  }
  return out;
}

function kubeStateMetrics(g: Grid): SeriesSpec[] {
  const rand = seeded(223);
  const ksm = { job: 'kube-state-metrics', instance: '10.1.0.9:8080', namespace: 'monitoring', pod: 'ksm-8d7c-m4n5p' };
  const out: SeriesSpec[] = [];
  // Pod-scoped series carry the pod's own namespace and pod labels (ksm's honor_labels shape), so "exported_" ones are not needed.
  const own = (p: Pod): Record<string, string> => ({ job: ksm.job, instance: ksm.instance, namespace: p.namespace, pod: p.pod });
  for (const { node, ip } of nodes) {
    const base = { job: ksm.job, instance: ksm.instance, node };
    out.push(
      series(
        g,
        {
          __name__: 'kube_node_info',
          ...base,
          internal_ip: ip,
          kernel_version: '6.1.0',
          os_image: 'Debian GNU/Linux 12',
          container_runtime_version: 'containerd://1.7.0',
        },
        () => 1,
      ),
    );
    for (const [resource, unit, capacity] of [
      ['cpu', 'core', 4],
      ['memory', 'byte', 16e9],
      ['pods', 'integer', 110],
    ] as const) {
      out.push(series(g, { __name__: 'kube_node_status_capacity', ...base, resource, unit }, () => capacity));
      out.push(series(g, { __name__: 'kube_node_status_allocatable', ...base, resource, unit }, () => capacity * 0.95));
    }
    // node-b is NotReady for a while.
    out.push(
      series(g, { __name__: 'kube_node_status_condition', ...base, condition: 'Ready', status: 'true' }, (i) =>
        node === 'node-b' && i >= 100 && i < 110 ? 0 : 1,
      ),
    );
    out.push(series(g, { __name__: 'kube_node_spec_unschedulable', ...base }, () => 0));
  }
  for (const [k, p] of pods(g.points).entries()) {
    const o = own(p);
    const nodeIp = nodes.find((n) => n.node === p.node)?.ip ?? '';
    out.push(
      series(
        g,
        { __name__: 'kube_pod_info', ...o, node: p.node, host_ip: nodeIp, pod_ip: `10.2.0.${k + 10}`, created_by_kind: 'ReplicaSet', created_by_name: p.owner },
        () => 1,
        p.from,
        p.until,
      ),
    );
    out.push(
      series(g, { __name__: 'kube_pod_owner', ...o, owner_kind: 'ReplicaSet', owner_name: p.owner, owner_is_controller: 'true' }, () => 1, p.from, p.until),
    );
    for (const phase of ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']) {
      out.push(
        series(g, { __name__: 'kube_pod_status_phase', ...o, phase }, (i) => (phase === (i < p.from + 2 ? 'Pending' : 'Running') ? 1 : 0), p.from, p.until),
      );
    }
    for (const [c, container] of p.containers.entries()) {
      const co = { ...o, container, node: p.node };
      out.push(
        series(g, { __name__: 'kube_pod_container_resource_requests', ...co, resource: 'cpu', unit: 'core' }, () => 0.1 * (c + 1) + k * 0.05, p.from, p.until),
      );
      out.push(
        series(
          g,
          { __name__: 'kube_pod_container_resource_requests', ...co, resource: 'memory', unit: 'byte' },
          () => 128e6 * (c + 1 + (k % 3)),
          p.from,
          p.until,
        ),
      );
      if (container !== 'config-reloader') {
        out.push(series(g, { __name__: 'kube_pod_container_resource_limits', ...co, resource: 'cpu', unit: 'core' }, () => 0.5 * (c + 1), p.from, p.until));
        out.push(
          series(g, { __name__: 'kube_pod_container_resource_limits', ...co, resource: 'memory', unit: 'byte' }, () => 512e6 * (c + 1), p.from, p.until),
        );
      }
      let restarts = k % 4 === 0 ? 2 : 0;
      out.push(
        series(
          g,
          { __name__: 'kube_pod_container_status_restarts_total', ...o, container },
          (i) => (restarts += i % 47 === 13 && k % 3 === 0 ? 1 : 0),
          p.from,
          p.until,
        ),
      );
      out.push(series(g, { __name__: 'kube_pod_container_status_ready', ...o, container }, (i) => (i < p.from + 3 ? 0 : 1), p.from, p.until));
    }
  }
  for (const [namespace, deployment, replicas] of [
    ['default', 'web', 3],
    ['default', 'worker', 1],
    ['kube-system', 'coredns', 2],
    ['monitoring', 'ksm', 1],
  ] as const) {
    const base = { job: ksm.job, instance: ksm.instance, namespace, deployment };
    out.push(series(g, { __name__: 'kube_deployment_spec_replicas', ...base }, () => replicas));
    out.push(
      series(g, { __name__: 'kube_deployment_status_replicas_available', ...base }, (i) =>
        deployment === 'web' && i > 55 && i < 70 ? replicas - 1 : replicas,
      ),
    );
  }
  for (const namespace of ['default', 'kube-system', 'monitoring']) {
    for (const [resource, hard] of [
      ['requests.cpu', 8],
      ['limits.cpu', 16],
      ['requests.memory', 16e9],
      ['limits.memory', 32e9],
    ] as const) {
      const base = { job: ksm.job, instance: ksm.instance, namespace, resourcequota: 'quota', resource };
      out.push(series(g, { __name__: 'kube_resourcequota', ...base, type: 'hard' }, () => hard));
      out.push(series(g, { __name__: 'kube_resourcequota', ...base, type: 'used' }, () => r6(hard * (0.2 + rand() * 0.3))));
    }
  }
  out.push(series(g, { __name__: 'up', ...ksm }, () => 1));
  return out;
}

function cadvisor(g: Grid): SeriesSpec[] {
  const rand = seeded(227);
  const out: SeriesSpec[] = [];
  for (const p of pods(g.points)) {
    const ip = nodes.find((n) => n.node === p.node)?.ip ?? '';
    const base = { job: 'kubelet', metrics_path: '/metrics/cadvisor', instance: `${ip}:10250`, node: p.node, namespace: p.namespace, pod: p.pod };
    // The pod's cgroup (container="") and each container's.
    for (const container of ['', ...p.containers]) {
      const image = container === '' ? '' : `registry.example/${container}:1.0`;
      const id = `/kubepods/${p.pod}${container === '' ? '' : `/${container}`}`;
      const labels = { ...base, container, image, id };
      const cpu = counterOf(rand, 0.5 * (container === '' ? p.containers.length : 1), g);
      out.push(series(g, { __name__: 'container_cpu_usage_seconds_total', ...labels, cpu: 'total' }, (i) => cpu[i] ?? 0, p.from, p.until));
      out.push(series(g, { __name__: 'container_memory_working_set_bytes', ...labels }, (i) => Math.round(1e8 + rand() * 5e7 + i * 1e5), p.from, p.until));
      out.push(series(g, { __name__: 'container_memory_rss', ...labels }, (i) => Math.round(8e7 + i * 1e5), p.from, p.until));
      out.push(series(g, { __name__: 'container_memory_cache', ...labels }, () => Math.round(2e7 + rand() * 1e6), p.from, p.until));
      const throttled = counterOf(rand, 2, g);
      out.push(series(g, { __name__: 'container_cpu_cfs_throttled_periods_total', ...labels }, (i) => Math.floor(throttled[i] ?? 0), p.from, p.until));
      const periods = counterOf(rand, 10, g);
      out.push(
        series(g, { __name__: 'container_cpu_cfs_periods_total', ...labels }, (i) => Math.floor((periods[i] ?? 0) + (throttled[i] ?? 0)), p.from, p.until),
      );
    }
    const rx = counterOf(rand, 2e5, g);
    const tx = counterOf(rand, 1e5, g);
    out.push(series(g, { __name__: 'container_network_receive_bytes_total', ...base, interface: 'eth0' }, (i) => rx[i] ?? 0, p.from, p.until));
    out.push(series(g, { __name__: 'container_network_transmit_bytes_total', ...base, interface: 'eth0' }, (i) => tx[i] ?? 0, p.from, p.until));
  }
  for (const { node, ip } of nodes)
    out.push(series(g, { __name__: 'up', job: 'kubelet', metrics_path: '/metrics/cadvisor', instance: `${ip}:10250`, node }, () => 1));
  return out;
}

const apiserverBounds = ['0.005', '0.025', '0.05', '0.1', '0.2', '0.4', '0.6', '0.8', '1', '1.5', '3', '5', '10', '30', '60', '+Inf'];

function apiserver(g: Grid): SeriesSpec[] {
  const rand = seeded(229);
  const out: SeriesSpec[] = [];
  const base = { job: 'apiserver', instance: '10.0.0.1:6443', namespace: 'default', service: 'kubernetes' };
  for (const [verb, resource, scope] of [
    ['GET', 'pods', 'resource'],
    ['LIST', 'pods', 'namespace'],
    ['LIST', 'nodes', 'cluster'],
    ['POST', 'pods', 'resource'],
    ['PUT', 'leases', 'resource'],
    ['WATCH', 'pods', 'cluster'],
  ] as const) {
    for (const code of verb === 'WATCH' ? ['0'] : ['200', '404', '500']) {
      const v = counterOf(rand, code === '200' ? 20 : code === '404' ? 1 : 0.2, g);
      out.push(
        series(
          g,
          { __name__: 'apiserver_request_total', ...base, verb, resource, scope, code, group: '', version: 'v1', component: 'apiserver' },
          (i) => v[i] ?? 0,
        ),
      );
    }
    if (verb === 'WATCH') continue;
    const cumulative = apiserverBounds.map(() => 0);
    const buckets = apiserverBounds.map(() => [] as number[]);
    const sums: number[] = [];
    let sum = 0;
    for (let i = 0; i < g.points; i++) {
      for (let k = 0; k < 20; k++) {
        const d = -Math.log(1 - rand()) * (verb === 'LIST' ? 0.3 : 0.04);
        sum += d;
        for (const [b, le] of apiserverBounds.entries()) if (le === '+Inf' || d <= Number(le)) cumulative[b] = (cumulative[b] ?? 0) + 1;
      }
      for (const [b] of apiserverBounds.entries()) buckets[b]?.push(cumulative[b] ?? 0);
      sums.push(r6(sum));
    }
    const labels = { ...base, verb, resource, scope, group: '', version: 'v1', component: 'apiserver' };
    for (const [b, le] of apiserverBounds.entries())
      out.push(series(g, { __name__: 'apiserver_request_duration_seconds_bucket', ...labels, le }, (i) => buckets[b]?.[i] ?? 0));
    out.push(series(g, { __name__: 'apiserver_request_duration_seconds_sum', ...labels }, (i) => sums[i] ?? 0));
    out.push(series(g, { __name__: 'apiserver_request_duration_seconds_count', ...labels }, (i) => buckets[apiserverBounds.length - 1]?.[i] ?? 0));
  }
  out.push(series(g, { __name__: 'up', job: 'apiserver', instance: '10.0.0.1:6443' }, () => 1));
  const inflight = { ...base, request_kind: 'readOnly' };
  out.push(series(g, { __name__: 'apiserver_current_inflight_requests', ...inflight }, (i) => 3 + (i % 7)));
  out.push(series(g, { __name__: 'apiserver_current_inflight_requests', ...inflight, request_kind: 'mutating' }, (i) => i % 3));
  return out;
}

/** Recording-rule outputs as Prometheus would have stored them (colon names). */
function recordingRules(g: Grid): SeriesSpec[] {
  const rand = seeded(233);
  const out: SeriesSpec[] = [];
  for (const p of pods(g.points)) {
    for (const container of p.containers) {
      const labels = { namespace: p.namespace, pod: p.pod, container, node: p.node };
      out.push(
        series(
          g,
          { __name__: 'node_namespace_pod_container:container_cpu_usage_seconds_total:sum_rate5m', ...labels },
          () => r6(0.05 + rand() * 0.3),
          p.from,
          p.until,
        ),
      );
      out.push(
        series(
          g,
          { __name__: 'node_namespace_pod_container:container_memory_working_set_bytes', ...labels },
          () => Math.round(1e8 + rand() * 5e7),
          p.from,
          p.until,
        ),
      );
      out.push(
        series(
          g,
          { __name__: 'cluster:namespace:pod_cpu:active:kube_pod_container_resource_requests', ...labels, job: 'kube-state-metrics' },
          () => 0.25,
          p.from,
          p.until,
        ),
      );
    }
    out.push(series(g, { __name__: 'node_namespace_pod:kube_pod_info:', namespace: p.namespace, pod: p.pod, node: p.node }, () => 1, p.from, p.until));
    out.push(
      series(
        g,
        {
          __name__: 'namespace_workload_pod:kube_pod_owner:relabel',
          namespace: p.namespace,
          pod: p.pod,
          workload: p.owner.replace(/-[a-z0-9]+$/, ''),
          workload_type: 'deployment',
        },
        () => 1,
        p.from,
        p.until,
      ),
    );
  }
  for (const { ip } of nodes) {
    out.push(
      series(g, { __name__: 'instance:node_cpu_utilisation:rate5m', job: 'node-exporter', instance: `${ip}:9100` }, (i) => r6(0.1 + 0.05 * Math.sin(i / 9))),
    );
    out.push(series(g, { __name__: 'instance:node_num_cpu:sum', job: 'node-exporter', instance: `${ip}:9100` }, () => 4));
    out.push(
      series(g, { __name__: 'instance:node_load1_per_cpu:ratio', job: 'node-exporter', instance: `${ip}:9100` }, (i) => r6(0.3 + 0.1 * Math.cos(i / 7))),
    );
  }
  for (const verb of ['read', 'write']) {
    for (const window of ['5m', '1h']) {
      out.push(series(g, { __name__: `apiserver_request:burnrate${window}`, verb }, () => r6(rand() * 0.01)));
    }
    out.push(
      series(g, { __name__: 'cluster_quantile:apiserver_request_sli_duration_seconds:histogram_quantile', verb, quantile: '0.99' }, () =>
        r6(0.1 + rand() * 0.2),
      ),
    );
  }
  out.push(series(g, { __name__: 'apiserver_request:availability30d', verb: 'all' }, (i) => r6(0.9995 - i * 1e-7)));
  return out;
}

/** Every series of the cluster for the span [startMs, startMs + kubeSpanMs]. */
export function kubeSeries(startMs: number): SeriesSpec[] {
  const g: Grid = { startMs, points: kubeSpanMs / kubeStepMs + 1 };
  return [...nodeExporter(g), ...kubeStateMetrics(g), ...cadvisor(g), ...apiserver(g), ...recordingRules(g)];
}
