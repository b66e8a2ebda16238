// OTLP metric → Prometheus names, as the compatibility specification and
// Prometheus' otlptranslator (with suffixes) name them.
import { expect } from 'chai';
import { exposedNames, otlpMetricName, prometheusType } from '../../../../../api/compat/prometheus/series-names.ts';
import type { StoredMetric } from '../../../../../api/compat/prometheus/series-names.ts';
import { remoteWriteScope, staleBitsLiteral } from '../../../../../api/compat/prometheus/remote-write-scope.ts';

const metric = (m: Partial<StoredMetric> & { name: string }): StoredMetric => ({
  type: 'gauge',
  unit: '',
  monotonic: false,
  temporality: 'cumulative',
  remoteWrite: false,
  ...m,
});

describe('prometheus series names', () => {
  it('adds unit words, _total and _ratio', () => {
    expect(otlpMetricName(metric({ name: 'http.server.duration', unit: 's', type: 'histogram' }))).to.equal('http_server_duration_seconds');
    expect(otlpMetricName(metric({ name: 'http.server.requests', unit: '{request}', type: 'sum', monotonic: true }))).to.equal('http_server_requests_total');
    expect(otlpMetricName(metric({ name: 'requests_total', type: 'sum', monotonic: true }))).to.equal('requests_total');
    expect(otlpMetricName(metric({ name: 'queue.size', type: 'sum', monotonic: false }))).to.equal('queue_size');
    expect(otlpMetricName(metric({ name: 'cpu.utilization', unit: '1' }))).to.equal('cpu_utilization_ratio');
    expect(otlpMetricName(metric({ name: 'cpu.ratio', unit: '1', type: 'sum' }))).to.equal('cpu_ratio');
    expect(otlpMetricName(metric({ name: 'net.io', unit: 'By', type: 'sum', monotonic: true }))).to.equal('net_io_bytes_total');
    expect(otlpMetricName(metric({ name: 'throughput', unit: 'By/s' }))).to.equal('throughput_bytes_per_second');
    expect(otlpMetricName(metric({ name: 'speed', unit: 'm/h' }))).to.equal('speed_meters_per_hour');
    expect(otlpMetricName(metric({ name: 'latency_seconds', unit: 's' }))).to.equal('latency_seconds');
    expect(otlpMetricName(metric({ name: 'temp', unit: 'Cel' }))).to.equal('temp_celsius');
    expect(otlpMetricName(metric({ name: 'odd', unit: 'widgets' }))).to.equal('odd_widgets');
    expect(otlpMetricName(metric({ name: 'disk', unit: '%' }))).to.equal('disk_percent');
  });

  it('sanitises names: non-alphanumerics to one "_", a leading digit prefixed', () => {
    expect(otlpMetricName(metric({ name: 'my-app..requests/sec' }))).to.equal('my_app_requests_sec');
    expect(otlpMetricName(metric({ name: '2xx.count' }))).to.equal('_2xx_count');
    expect(otlpMetricName(metric({ name: '_private__x_' }))).to.equal('private_x');
  });

  it('exposes each type as its Prometheus series (an exponential histogram as a native one); delta temporality not at all', () => {
    expect(exposedNames(metric({ name: 'd', unit: 's', type: 'histogram' }))).to.deep.equal([
      { name: 'd_seconds_bucket', role: 'bucket' },
      { name: 'd_seconds_sum', role: 'sum' },
      { name: 'd_seconds_count', role: 'count' },
    ]);
    expect(exposedNames(metric({ name: 'rpc', type: 'summary' })).map((e) => e.name)).to.deep.equal(['rpc', 'rpc_sum', 'rpc_count']);
    // An exponential histogram is one native histogram series under its name, as Prometheus 3's OTLP receiver makes it.
    expect(exposedNames(metric({ name: 'e', type: 'exponential_histogram' })).map((e) => e.name)).to.deep.equal(['e']);
    expect(exposedNames(metric({ name: 'c', type: 'sum', monotonic: true, temporality: 'delta' }))).to.deep.equal([]);
    expect(exposedNames(metric({ name: 'up.time', remoteWrite: true, unit: 's' }))).to.deep.equal([{ name: 'up.time', role: 'value' }]);
    expect(exposedNames(metric({ name: 'native', remoteWrite: true, type: 'exponential_histogram' }))).to.deep.equal([{ name: 'native', role: 'native' }]);
  });

  it('recognises remote-written rows and stale markers as the gateway writes them', () => {
    expect(remoteWriteScope).to.equal('tenantry.prometheus.remote_write');
    expect(staleBitsLiteral).to.equal('9218868437227405314');
  });

  it('gives the Prometheus metadata type', () => {
    expect(prometheusType(metric({ name: 'a', type: 'sum', monotonic: true }))).to.equal('counter');
    expect(prometheusType(metric({ name: 'a', type: 'sum' }))).to.equal('gauge');
    expect(prometheusType(metric({ name: 'a', type: 'histogram' }))).to.equal('histogram');
    expect(prometheusType(metric({ name: 'a', type: 'summary' }))).to.equal('summary');
  });
});
