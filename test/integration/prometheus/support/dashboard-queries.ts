// The dashboard differential's table: queries shaped like those of the
// Kubernetes dashboards and rules users import (written here after reading
// kube-prometheus-stack's dashboards-1.14 and rules-1.14 to learn what they
// lean on; none copied): info-metric joins with group_left, `or` fallbacks,
// sort_desc tables, scalar() quota lines, recording-rule names with colons,
// $__rate_interval written out as [1m] or [5m], label_replace to rename a
// label before a join, topk, count by, histogram_quantile over the
// apiserver's buckets, cAdvisor's container!="" filter, node-exporter's idle
// CPU and kube-state-metrics' requests and limits. Template variables are
// replaced by values of the synthetic cluster (support/kube-shapes.ts).
import type { DifferentialRow } from './differential-runner.ts';

const c = 'cluster="c1"';
const cad = `job="kubelet", metrics_path="/metrics/cadvisor", ${c}`;
const ksm = `job="kube-state-metrics", ${c}`;
const ne = `job="node-exporter", ${c}`;
const api = `job="apiserver", ${c}`;

/** Joins a pod-scoped vector to its node through kube_pod_info (one series per pod). */
const podNode = `topk by (namespace, pod) (1, max by (namespace, pod, node) (kube_pod_info{${ksm}, node!=""}))`;

const node = [
  `1 - avg without (cpu) (sum without (mode) (rate(node_cpu_seconds_total{${ne}, mode=~"idle|iowait|steal"}[5m])))`,
  `sum by (instance) (rate(node_cpu_seconds_total{${ne}, mode!="idle"}[1m]))`,
  `avg by (instance) (rate(node_cpu_seconds_total{${ne}, mode="idle"}[5m]))`,
  `1 - avg by (instance) (rate(node_cpu_seconds_total{${ne}, mode="idle"}[1m]))`,
  `count without (cpu, mode) (node_cpu_seconds_total{${ne}, mode="idle"})`,
  `count by (instance) (count by (instance, cpu) (node_cpu_seconds_total{${ne}}))`,
  `sum by (mode) (irate(node_cpu_seconds_total{${ne}, instance="10.0.0.1:9100"}[1m]))`,
  `(node_load1{${ne}} / on (instance) instance:node_num_cpu:sum) * 100`,
  `node_load1{${ne}} / scalar(count(count by (cpu) (node_cpu_seconds_total{${ne}, instance="10.0.0.2:9100"})))`,
  `1 - (node_memory_MemAvailable_bytes{${ne}} / node_memory_MemTotal_bytes{${ne}})`,
  `node_memory_MemTotal_bytes{${ne}} - node_memory_MemFree_bytes{${ne}} - node_memory_Buffers_bytes{${ne}} - node_memory_Cached_bytes{${ne}}`,
  `sum(node_memory_MemTotal_bytes{${ne}}) - sum(node_memory_MemAvailable_bytes{${ne}})`,
  `max without (fstype, mountpoint) (node_filesystem_size_bytes{${ne}, fstype!="", mountpoint!=""} - node_filesystem_avail_bytes{${ne}, fstype!="", mountpoint!=""})`,
  `1 - node_filesystem_avail_bytes{${ne}, fstype!~"tmpfs|ramfs"} / node_filesystem_size_bytes{${ne}, fstype!~"tmpfs|ramfs"}`,
  `predict_linear(node_filesystem_avail_bytes{${ne}, fstype!=""}[10m], 4 * 3600) < 0`,
  `(node_filesystem_avail_bytes{${ne}, fstype!=""} / node_filesystem_size_bytes{${ne}, fstype!=""} * 100 < 40 and node_filesystem_readonly{${ne}, fstype!=""} == 0)`,
  `sum by (instance) (rate(node_network_receive_bytes_total{${ne}, device!="lo"}[1m]))`,
  `sum by (instance) (rate(node_network_transmit_bytes_total{${ne}, device!~"lo|veth.+"}[5m])) * 8`,
  `rate(node_disk_io_time_seconds_total{${ne}, device=~"(/dev/)?(sd.+|nvme.+)"}[1m])`,
  `sum by (instance) (rate(node_disk_read_bytes_total{${ne}}[5m]))`,
  `node_uname_info{${ne}}`,
  `label_replace(node_uname_info{${ne}}, "node", "$1", "nodename", "(.*)")`,
  `instance:node_cpu_utilisation:rate5m{${ne}} * on (instance) group_left (nodename) node_uname_info{${ne}}`,
  `sum by (nodename) (instance:node_load1_per_cpu:ratio{${ne}} * on (instance) group_left (nodename) node_uname_info)`,
  `instance:node_cpu_utilisation:rate5m{${ne}} / scalar(count(instance:node_num_cpu:sum{${ne}}))`,
  `topk(2, sum by (instance) (rate(node_cpu_seconds_total{${ne}, mode="user"}[5m])))`,
  `sort_desc(1 - avg by (instance) (rate(node_cpu_seconds_total{${ne}, mode="idle"}[5m])))`,
  `up{${ne}} == 0`,
  `count(up{${ne}} == 1)`,
  `avg_over_time(up{${ne}}[10m]) * 100`,
  `absent(up{job="node-exporter", ${c}, instance="10.0.0.3:9100"} == 1)`,
];

const workloads = [
  `sum by (namespace) (rate(container_cpu_usage_seconds_total{${cad}, container!="", image!=""}[5m]))`,
  `sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{${cad}, container!=""}[1m]))`,
  `sum by (pod) (rate(container_cpu_usage_seconds_total{${cad}, namespace="default", container!=""}[5m]))`,
  `sum by (container) (irate(container_cpu_usage_seconds_total{${cad}, namespace="default", pod="web-7d9f-q5r7t", container!="", image!=""}[1m]))`,
  `sum by (namespace, pod, container) (irate(container_cpu_usage_seconds_total{${cad}, image!=""}[5m])) * on (namespace, pod) group_left (node) ${podNode}`,
  `sum by (node) (rate(container_cpu_usage_seconds_total{${cad}, container!=""}[5m]) * on (namespace, pod) group_left (node) ${podNode})`,
  `sum by (namespace) (container_memory_working_set_bytes{${cad}, container!="", image!=""})`,
  `sum by (pod) (container_memory_working_set_bytes{${cad}, namespace="default", container!="", image!=""})`,
  `max by (namespace, pod, container) (container_memory_working_set_bytes{${cad}, image!=""}) * on (namespace, pod) group_left (node) ${podNode}`,
  `sum by (pod) (container_memory_rss{${cad}, namespace="monitoring", container!=""})`,
  `sum by (pod) (container_memory_cache{${cad}, namespace="monitoring", container!=""})`,
  `sum by (namespace) (rate(container_network_receive_bytes_total{${cad}, namespace=~".+"}[1m]))`,
  `sort_desc(sum by (pod) (rate(container_network_transmit_bytes_total{${cad}, namespace="default"}[5m])))`,
  `sum by (container) (increase(container_cpu_cfs_throttled_periods_total{${cad}, namespace="default", container!=""}[5m])) / sum by (container) (increase(container_cpu_cfs_periods_total{${cad}, namespace="default", container!=""}[5m]))`,
  `sum by (namespace) (max by (namespace, pod, container) (node_namespace_pod_container:container_cpu_usage_seconds_total:sum_rate5m{${c}}))`,
  `sum(max by (namespace, pod, container) (node_namespace_pod_container:container_cpu_usage_seconds_total:sum_rate5m{${c}, namespace="default"})) by (pod)`,
  `sum(node_namespace_pod_container:container_cpu_usage_seconds_total:sum_rate5m{${c}, namespace="default"}) / sum(kube_pod_container_resource_requests{${ksm}, namespace="default", resource="cpu"})`,
  `sum by (pod) (node_namespace_pod_container:container_cpu_usage_seconds_total:sum_rate5m{${c}}) / sum by (pod) (cluster:namespace:pod_cpu:active:kube_pod_container_resource_requests{${c}})`,
  `sum by (node) (node_namespace_pod_container:container_memory_working_set_bytes{${c}})`,
  `sum by (workload, workload_type) (node_namespace_pod_container:container_cpu_usage_seconds_total:sum_rate5m{${c}, namespace="default"} * on (namespace, pod) group_left (workload, workload_type) namespace_workload_pod:kube_pod_owner:relabel{${c}, namespace="default"})`,
  `count by (workload) (namespace_workload_pod:kube_pod_owner:relabel{${c}, workload_type="deployment"})`,
  `sum by (namespace) (rate(container_cpu_usage_seconds_total{${cad}, container!=""}[5m])) / on (namespace) group_left sum by (namespace) (kube_pod_container_resource_requests{${ksm}, resource="cpu"})`,
  `topk(3, sum by (namespace, pod) (rate(container_cpu_usage_seconds_total{${cad}, container!=""}[5m])))`,
  `bottomk(2, sum by (pod) (container_memory_working_set_bytes{${cad}, container!=""}))`,
  `sum by (namespace, pod) (container_memory_working_set_bytes{${cad}, container!=""}) / on (namespace, pod) group_left sum by (namespace, pod) (kube_pod_container_resource_limits{${ksm}, resource="memory"})`,
  `max_over_time(sum by (pod) (rate(container_cpu_usage_seconds_total{${cad}, container!=""}[1m]))[10m:1m])`,
  `quantile_over_time(0.95, sum by (namespace) (container_memory_working_set_bytes{${cad}, container!=""})[15m:1m])`,
  `label_replace(sum by (pod) (rate(container_cpu_usage_seconds_total{${cad}, container!=""}[5m])), "workload", "$1", "pod", "(.*)-[^-]+-[^-]+")`,
  `sum by (workload) (label_replace(rate(container_cpu_usage_seconds_total{${cad}, container!=""}[5m]), "workload", "$1", "pod", "([a-z]+)-.*"))`,
];

const kubeState = [
  `sum by (namespace) (kube_pod_container_resource_requests{${ksm}, resource="cpu"})`,
  `sum by (namespace) (kube_pod_container_resource_requests{${ksm}, resource="memory"})`,
  `sum by (node) (kube_pod_container_resource_requests{${ksm}, resource="cpu"}) / on (node) group_left kube_node_status_allocatable{${ksm}, resource="cpu"}`,
  `sum(kube_pod_container_resource_requests{${ksm}, resource="cpu"}) / sum(kube_node_status_allocatable{${ksm}, resource="cpu"})`,
  `sum(kube_pod_container_resource_limits{${ksm}, resource="memory"}) / sum(kube_node_status_capacity{${ksm}, resource="memory"})`,
  `sum by (namespace, pod) (kube_pod_container_resource_requests{${ksm}, resource="cpu"}) * on (namespace, pod) group_left max by (namespace, pod) (kube_pod_status_phase{${ksm}, phase=~"Pending|Running"} == 1)`,
  `kube_pod_container_resource_requests{${ksm}, resource="cpu"} * on (namespace, pod) group_left (host_ip) kube_pod_info{${ksm}}`,
  `max by (node, internal_ip) (kube_node_info{${ksm}})`,
  `kube_node_status_capacity{${ksm}, resource="pods"} * on (node) group_left (kernel_version, os_image) kube_node_info{${ksm}}`,
  `count by (node) (kube_pod_info{${ksm}})`,
  `count by (node) (kube_pod_info{${ksm}}) / on (node) group_left kube_node_status_capacity{${ksm}, resource="pods"}`,
  `sum by (namespace) (kube_pod_status_phase{${ksm}, phase="Running"})`,
  `sum by (phase) (kube_pod_status_phase{${ksm}})`,
  `count(kube_pod_info{${ksm}}) or vector(0)`,
  `count(kube_pod_status_phase{${ksm}, phase="Failed"} == 1) or vector(0)`,
  `sum(kube_pod_status_phase{${ksm}, phase="Pending"}) or on () vector(0)`,
  `kube_deployment_spec_replicas{${ksm}} - kube_deployment_status_replicas_available{${ksm}}`,
  `kube_deployment_spec_replicas{${ksm}} != kube_deployment_status_replicas_available{${ksm}}`,
  `(kube_deployment_spec_replicas{${ksm}} > kube_deployment_status_replicas_available{${ksm}}) and (changes(kube_deployment_status_replicas_available{${ksm}}[2m]) == 0)`,
  `sort_desc(sum by (namespace, pod) (increase(kube_pod_container_status_restarts_total{${ksm}}[10m])))`,
  `sum by (namespace, pod) (rate(kube_pod_container_status_restarts_total{${ksm}}[5m])) * 60 * 5 > 0`,
  `max_over_time(kube_pod_container_status_ready{${ksm}}[5m]) == 0`,
  `scalar(max(kube_resourcequota{${ksm}, namespace="default", type="hard", resource="requests.cpu"}))`,
  `scalar(max(kube_resourcequota{${ksm}, namespace="default", type="hard", resource="limits.memory"}))`,
  `kube_resourcequota{${ksm}, type="used"} / ignoring (type) kube_resourcequota{${ksm}, type="hard"}`,
  `sum by (namespace) (kube_pod_container_resource_requests{${ksm}, resource="cpu"}) / scalar(sum(kube_node_status_allocatable{${ksm}, resource="cpu"}))`,
  `kube_pod_owner{${ksm}, owner_kind="ReplicaSet"} * on (namespace, pod) group_left (node) kube_pod_info{${ksm}}`,
  `label_replace(kube_pod_owner{${ksm}, owner_kind="ReplicaSet"}, "workload", "$1", "owner_name", "(.*)-[^-]+")`,
  `count by (namespace, workload) (label_replace(kube_pod_owner{${ksm}}, "workload", "$1", "owner_name", "(.*)-[^-]+"))`,
  `node_namespace_pod:kube_pod_info:{${c}} * on (node) group_left (internal_ip) kube_node_info{${ksm}}`,
  `count by (node) (node_namespace_pod:kube_pod_info:{${c}})`,
  `sum by (namespace) (kube_pod_container_resource_limits{${ksm}, resource="cpu"}) or sum by (namespace) (kube_pod_container_resource_requests{${ksm}, resource="cpu"})`,
  `kube_node_status_condition{${ksm}, condition="Ready", status="true"} == 0`,
  `sum(kube_node_spec_unschedulable{${ksm}}) > 0 or vector(0)`,
  `group by (namespace) (kube_pod_info{${ksm}})`,
  `count(group by (namespace) (kube_pod_info{${ksm}}))`,
  `absent(kube_pod_info{${ksm}, namespace="nonexistent"})`,
  `sum by (namespace) (kube_pod_container_resource_requests{${ksm}, resource="cpu"} unless on (namespace, pod) kube_pod_status_phase{${ksm}, phase="Pending"} == 1)`,
];

const apiserver = [
  `histogram_quantile(0.99, sum by (le) (rate(apiserver_request_duration_seconds_bucket{${api}, verb!="WATCH"}[5m])))`,
  `histogram_quantile(0.99, sum by (verb, le) (rate(apiserver_request_duration_seconds_bucket{${api}}[5m])))`,
  `histogram_quantile(0.9, sum by (resource, le) (rate(apiserver_request_duration_seconds_bucket{${api}, verb=~"LIST|GET"}[1m])))`,
  `histogram_quantile(0.5, sum without (instance, scope) (rate(apiserver_request_duration_seconds_bucket{${api}}[5m])))`,
  `sum by (le) (rate(apiserver_request_duration_seconds_bucket{${api}}[5m]))`,
  `sum(rate(apiserver_request_duration_seconds_sum{${api}}[5m])) / sum(rate(apiserver_request_duration_seconds_count{${api}}[5m]))`,
  `sum by (code) (rate(apiserver_request_total{${api}}[5m]))`,
  `sum by (verb) (rate(apiserver_request_total{${api}, code=~"5.."}[5m])) / sum by (verb) (rate(apiserver_request_total{${api}}[5m]))`,
  `sum(rate(apiserver_request_total{${api}, code=~"5.."}[1m])) / sum(rate(apiserver_request_total{${api}}[1m])) * 100`,
  `sum by (resource) (rate(apiserver_request_total{${api}, verb=~"LIST|GET"}[5m]))`,
  `topk(3, sum by (resource, verb) (rate(apiserver_request_total{${api}}[5m])))`,
  `sort_desc(sum by (code) (increase(apiserver_request_total{${api}}[10m])))`,
  `sum(rate(apiserver_request_total{${api}, code=~"2.."}[5m])) / sum(rate(apiserver_request_total{${api}}[5m]))`,
  `label_replace(sum by (code) (rate(apiserver_request_total{${api}}[5m])), "class", "\${1}xx", "code", "([0-9]).*")`,
  `sum by (class) (label_replace(rate(apiserver_request_total{${api}}[5m]), "class", "\${1}xx", "code", "([0-9]).*"))`,
  `sum by (request_kind) (apiserver_current_inflight_requests{${api}})`,
  `max_over_time(sum by (request_kind) (apiserver_current_inflight_requests{${api}})[5m:])`,
  `apiserver_request:burnrate1h{${c}} > (0.5 * 0.01) and apiserver_request:burnrate5m{${c}} > (0.5 * 0.01)`,
  `sum by (verb) (apiserver_request:burnrate1h{${c}})`,
  `cluster_quantile:apiserver_request_sli_duration_seconds:histogram_quantile{${c}, quantile="0.99"} > 0.2`,
  `100 * apiserver_request:availability30d{${c}, verb="all"}`,
  `1 - apiserver_request:availability30d{${c}}`,
  `up{${api}} or on () vector(0)`,
  `count by (job) (up{${c}} == 1)`,
  `sum by (job) (up{${c}}) / count by (job) (up{${c}})`,
  `sum(rate(apiserver_request_total{${api}}[5m] offset 10m))`,
  `histogram_quantile(0.99, sum by (le) (rate(apiserver_request_duration_seconds_bucket{${api}}[5m] @ end())))`,
  `increase(apiserver_request_total{${api}, code="500"}[15m]) > 0`,
  `avg_over_time(sum(rate(apiserver_request_total{${api}}[1m]))[10m:1m])`,
  `deriv(sum(apiserver_current_inflight_requests{${api}})[5m:])`,
];

/** Rows whose answers Prometheus orders. */
const isOrdered = (query: string): boolean => /^(sort|sort_desc|topk|bottomk)\(/.test(query);

/** The dashboard-shaped table. */
export const dashboardQueries: readonly DifferentialRow[] = [
  ...node.map((query) => ({ query, construct: 'node-exporter' })),
  ...workloads.map((query) => ({ query, construct: 'cAdvisor workloads' })),
  ...kubeState.map((query) => ({ query, construct: 'kube-state-metrics' })),
  ...apiserver.map((query) => ({ query, construct: 'apiserver' })),
].map((r) => (isOrdered(r.query) ? { ...r, ordered: true } : r));
