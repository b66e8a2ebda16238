import { expect } from 'chai';
import { rowLabels } from '../../../../../api/compat/loki/row-labels.ts';
import type { RawLogRow } from '../../../../../api/compat/loki/row-labels.ts';

const row: RawLogRow = {
  ts: '1',
  body: 'line',
  service_name: '',
  observed_ns: '1795490000005000000',
  severity_number: 17,
  severity_text: 'ERROR',
  trace_flags: 1,
  trace_id: '0af7651916cd43dd8448eb211c80319c',
  span_id: 'b7ad6b7169203331',
  scope_name: 'shop',
  scope_version: '',
  resource_attributes: { 'k8s.pod.name': 'pod-1', 'host.name': 'h1', 'tenant.id': 'acme', 'cloud.region': '' },
  scope_attributes: { 'lib.kind': 'sdk' },
  log_attributes: { 'http.request-id': 'r1', '9lives': '1', 'odd..__key': 'x', empty: '' },
};

describe('Loki labels of a stored log row (built in Node)', () => {
  it('maps stream labels, record fields and attributes as Loki 3 maps OTLP, keys sorted, empty values left out', () => {
    expect(rowLabels(row)).to.deep.equal({
      detected_level: 'error',
      flags: '1',
      host_name: 'h1',
      http_request_id: 'r1',
      k8s_pod_name: 'pod-1',
      key_9lives: '1',
      lib_kind: 'sdk',
      odd_key: 'x',
      observed_timestamp: '1795490000005000000',
      scope_name: 'shop',
      service_name: 'unknown_service',
      severity_number: '17',
      severity_text: 'ERROR',
      span_id: 'b7ad6b7169203331',
      tenant_id: 'acme',
      trace_id: '0af7651916cd43dd8448eb211c80319c',
    });
    expect(Object.keys(rowLabels(row))).to.deep.equal(Object.keys(rowLabels(row)).sort());
  });

  it("derives detected_level from the severity number as Loki's distributor does", () => {
    const level = (n: number): string | undefined => rowLabels({ ...row, severity_number: n })['detected_level'];
    expect([0, 1, 5, 9, 13, 17, 21, 25].map(level)).to.deep.equal(['unknown', 'trace', 'debug', 'info', 'warn', 'error', 'fatal', 'unknown']);
  });
});
