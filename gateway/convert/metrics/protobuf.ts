// Protobuf ExportMetricsServiceRequest → RowBinary rows of the metrics table,
// through the generated decoder and the message walk of metrics/json.ts.
import { ExportMetricsServiceRequest } from '../../wire/otlp-messages.ts';
import type { RowConverter } from '../row-converter.ts';
import { metricRows } from './json.ts';

/** Protobuf metrics (OTLP/HTTP and gRPC). */
export const metricsFromProtobuf: RowConverter = {
  convert(body, tenants) {
    let request;
    try {
      request = ExportMetricsServiceRequest.decode(body);
    } catch (error) {
      return { ok: false, message: `invalid protobuf: ${(error as Error).message}` };
    }
    return { ok: true, batch: metricRows(request.resourceMetrics, tenants) };
  },
};
